/* ag_ops.c: one derivative per op, next to the code that records it. The
   derivatives are written with recording ops (the E_* helpers), so with
   create_graph the backward pass builds a graph of its own and higher-order
   gradients come for free. */
#include <math.h>
#include <string.h>
#include "ag.h"
#include "ag_expr.h"
#include "../tensor/mt_reduce.h"
#include "../tensor/mt_linalg.h"

/* ---- recording ops for derivative formulas ----
   Each returns a fresh tensor; after a failure every later one is empty
   and the backward function reports the first error. */
_Thread_local int ag_failed;

void ag_drop(mt_tensor *t) {
  mt_ag_meta_release(t->grad_meta);
  t->grad_meta = NULL;
  mt_tensor_release(t);
}

int ag_any_requires_grad(const mt_tensor *a, const mt_tensor *b) {
  return mt_ag_grad_enabled() && ((a && mt_ag_requires_grad(a)) || (b && mt_ag_requires_grad(b)));
}

mt_tensor ag_binop(mt_op op, const mt_operand *a, const mt_operand *b) {
  mt_tensor r = {0};
  if (ag_failed || (a->t && !a->t->storage) || (b->t && !b->t->storage)) { ag_failed = 1; return r; }
  if (mt_binary(&r, a, b, op, 1, 0, MT_FLOAT32) || mt_ag_record_binary(&r, a, b, op, 1)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}
mt_tensor ag_bin(mt_op op, const mt_tensor *a, const mt_tensor *b) {
  mt_operand oa = {a, 0, 0}, ob = {b, 0, 0};
  return ag_binop(op, &oa, &ob);
}
mt_tensor ag_bins(mt_op op, const mt_tensor *a, double s) {   /* a op s */
  mt_operand oa = {a, 0, 0}, ob = {NULL, s, 0};
  return ag_binop(op, &oa, &ob);
}
mt_tensor ag_sbin(mt_op op, double s, const mt_tensor *b) {   /* s op b */
  mt_operand oa = {NULL, s, 0}, ob = {b, 0, 0};
  return ag_binop(op, &oa, &ob);
}
mt_tensor ag_un(mt_op op, const mt_tensor *x) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_unary(&r, x, op, 0, MT_FLOAT32) || mt_ag_record_unary(&r, x, op)) { ag_drop(&r); ag_failed = 1; }
  return r;
}
mt_tensor ag_reshape(const mt_tensor *x, int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_reshape(&r, x, ndim, shape) || mt_ag_record_view(&r, x)) { ag_drop(&r); ag_failed = 1; }
  return r;
}
mt_tensor ag_transpose(const mt_tensor *x, int d0, int d1) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_transpose(&r, x, d0, d1) || mt_ag_record_transpose(&r, x, d0, d1)) { ag_drop(&r); ag_failed = 1; }
  return r;
}
mt_tensor ag_mm(const mt_tensor *a, const mt_tensor *b) {
  mt_tensor r = {0};
  if (ag_failed || !a->storage || !b->storage) { ag_failed = 1; return r; }
  if (mt_mm(&r, a, b) || mt_ag_record_mm(&r, a, b)) { ag_drop(&r); ag_failed = 1; }
  return r;
}
mt_tensor ag_sum(const mt_tensor *x, uint32_t mask, int keepdim) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_reduce(&r, x, MT_RED_SUM, mask, keepdim, -1) || mt_ag_record_reduce(&r, x, 0, mask, keepdim)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}
mt_tensor ag_cast(const mt_tensor *x, int dtype) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (x->dtype == dtype) { mt_ag_alias(&r, x); return r; }
  if (mt_to_dtype(&r, x, dtype) || mt_ag_record_cast(&r, x)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

mt_tensor ag_expand(const mt_tensor *x, int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_expand(&r, x, ndim, shape) || mt_ag_record_expand(&r, x)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

/* g summed over the dims broadcasting added, back to (ndim, shape). */
mt_tensor ag_sum_to(const mt_tensor *g, int ndim, const int64_t *shape) {
  uint32_t mask = 0;
  int lead = g->ndim - ndim;
  for (int d = 0; d < g->ndim; d++)
    if (d < lead || (shape[d - lead] == 1 && g->shape[d] != 1)) mask |= 1u << d;
  if (!mask) { mt_tensor r = {0}; mt_ag_alias(&r, g); return r; }
  mt_tensor s = ag_sum(g, mask, 1);
  mt_tensor r = ag_reshape(&s, ndim, shape);
  ag_drop(&s);
  return r;
}

/* The gradient for input i in its own shape and dtype; takes g. */
void ag_finish(mt_node *n, int i, mt_tensor *g, mt_tensor *out) {
  mt_tensor s = ag_sum_to(g, n->in_ndim[i], n->in_shape[i]);
  ag_drop(g);
  *out = ag_cast(&s, n->in_dtype[i]);
  ag_drop(&s);
}

int ag_done(void) {
  if (!ag_failed) return 0;
  ag_failed = 0;
  const char *e = mt_error();
  return e[0] ? -1 : mt_fail("backward: a derivative failed");
}

/* ---- unary ops ---- */
/* What each unary derivative is written from, as PyTorch's derivatives.yaml
   writes it: exp's from its result (g r), log's from its input (g / x),
   floor's from neither (zeros). A node saves that one tensor and no more, so
   the input of a result-reading op may change in place afterwards, and a
   chain of them keeps one tensor per op alive, not two. An op not listed
   reads its input. */
enum { READS_INPUT, READS_RESULT, READS_NOTHING };
static const unsigned char unary_reads[MT_NUM_OPS] = {
  [MT_OP_exp] = READS_RESULT, [MT_OP_expm1] = READS_RESULT, [MT_OP_sqrt] = READS_RESULT,
  [MT_OP_rsqrt] = READS_RESULT, [MT_OP_tan] = READS_RESULT, [MT_OP_tanh] = READS_RESULT,
  [MT_OP_sigmoid] = READS_RESULT, [MT_OP_reciprocal] = READS_RESULT, [MT_OP_relu] = READS_RESULT,
  [MT_OP_floor] = READS_NOTHING, [MT_OP_ceil] = READS_NOTHING, [MT_OP_round] = READS_NOTHING,
  [MT_OP_trunc] = READS_NOTHING, [MT_OP_sign] = READS_NOTHING, [MT_OP_frac] = READS_NOTHING,
  [MT_OP_neg] = READS_NOTHING,
};

/* Whether g * f'(v) may take mt_activation_grad's one pass: the backward
   records nothing (create_graph records the formulas) and g matches v. */
static int one_pass(const mt_tensor *g, const mt_tensor *v) {
  return !mt_ag_grad_enabled() && v && v->storage && g->dtype == v->dtype && mt_same_shape(g, v);
}

/* g * f'(v) in one kernel, for a backward that records nothing */
static mt_tensor ag_activation_grad(const mt_tensor *g, const mt_tensor *y, mt_activation kind) {
  mt_tensor d = {0};
  if (!ag_failed && mt_activation_grad(&d, g, y, kind)) { mt_tensor_release(&d); ag_failed = 1; }
  return d;
}

static int unary_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *x = NULL;
  mt_tensor r = {0}, t1 = {0}, t2 = {0}, t3 = {0}, d = {0};   /* r: the result, when read */
  if (unary_reads[n->op] == READS_INPUT && mt_ag_saved(n, 0, &x)) return -1;
  if (unary_reads[n->op] == READS_RESULT && mt_ag_saved_result(n, 0, &r)) return -1;
  ag_failed = 0;
  switch ((mt_op)n->op) {
  case MT_OP_exp: d = ag_bin(MT_OP_mul, g, &r); break;
  case MT_OP_expm1: t1 = ag_bins(MT_OP_add, &r, 1); d = ag_bin(MT_OP_mul, g, &t1); break;
  case MT_OP_log: d = ag_bin(MT_OP_div, g, x); break;
  case MT_OP_log1p: t1 = ag_bins(MT_OP_add, x, 1); d = ag_bin(MT_OP_div, g, &t1); break;
  case MT_OP_log2: t1 = ag_bins(MT_OP_mul, x, M_LN2); d = ag_bin(MT_OP_div, g, &t1); break;
  case MT_OP_log10: t1 = ag_bins(MT_OP_mul, x, M_LN10); d = ag_bin(MT_OP_div, g, &t1); break;
  case MT_OP_sqrt: t1 = ag_bins(MT_OP_mul, &r, 2); d = ag_bin(MT_OP_div, g, &t1); break;
  case MT_OP_rsqrt:                              /* -0.5 r^3 */
    t1 = ag_bins(MT_OP_pow, &r, 3); t2 = ag_bins(MT_OP_mul, &t1, -0.5); d = ag_bin(MT_OP_mul, g, &t2); break;
  case MT_OP_sin: t1 = ag_un(MT_OP_cos, x); d = ag_bin(MT_OP_mul, g, &t1); break;
  case MT_OP_cos: t1 = ag_un(MT_OP_sin, x); t2 = ag_un(MT_OP_neg, &t1); d = ag_bin(MT_OP_mul, g, &t2); break;
  case MT_OP_tan:                                /* 1 + r^2 */
    t1 = ag_bin(MT_OP_mul, &r, &r); t2 = ag_bins(MT_OP_add, &t1, 1); d = ag_bin(MT_OP_mul, g, &t2); break;
  case MT_OP_asin: case MT_OP_acos:              /* +-1 / sqrt(1 - x^2) */
    t1 = ag_bin(MT_OP_mul, x, x); t2 = ag_sbin(MT_OP_sub, 1, &t1); t3 = ag_un(MT_OP_rsqrt, &t2);
    d = ag_bin(MT_OP_mul, g, &t3);
    if (n->op == MT_OP_acos) { mt_tensor neg = ag_un(MT_OP_neg, &d); ag_drop(&d); d = neg; }
    break;
  case MT_OP_atan:
    t1 = ag_bin(MT_OP_mul, x, x); t2 = ag_bins(MT_OP_add, &t1, 1); d = ag_bin(MT_OP_div, g, &t2); break;
  case MT_OP_sinh: t1 = ag_un(MT_OP_cosh, x); d = ag_bin(MT_OP_mul, g, &t1); break;
  case MT_OP_cosh: t1 = ag_un(MT_OP_sinh, x); d = ag_bin(MT_OP_mul, g, &t1); break;
  case MT_OP_tanh:                               /* 1 - r^2 */
    if (one_pass(g, &r)) { d = ag_activation_grad(g, &r, MT_ACT_TANH); break; }
    t1 = ag_bin(MT_OP_mul, &r, &r); t2 = ag_sbin(MT_OP_sub, 1, &t1); d = ag_bin(MT_OP_mul, g, &t2); break;
  case MT_OP_sigmoid:                            /* r (1 - r) */
    if (one_pass(g, &r)) { d = ag_activation_grad(g, &r, MT_ACT_SIGMOID); break; }
    t1 = ag_sbin(MT_OP_sub, 1, &r); t2 = ag_bin(MT_OP_mul, &r, &t1); d = ag_bin(MT_OP_mul, g, &t2); break;
  case MT_OP_erf: case MT_OP_erfc:               /* +-2/sqrt(pi) exp(-x^2) */
    t1 = ag_bin(MT_OP_mul, x, x); t2 = ag_un(MT_OP_neg, &t1); t3 = ag_un(MT_OP_exp, &t2);
    ag_drop(&t1);
    t1 = ag_bins(MT_OP_mul, &t3, n->op == MT_OP_erf ? M_2_SQRTPI : -M_2_SQRTPI);
    d = ag_bin(MT_OP_mul, g, &t1);
    break;
  case MT_OP_reciprocal:                         /* -r^2 */
    t1 = ag_bin(MT_OP_mul, &r, &r); t2 = ag_un(MT_OP_neg, &t1); d = ag_bin(MT_OP_mul, g, &t2); break;
  case MT_OP_gelu: {                             /* Phi(x) + x phi(x) */
    if (one_pass(g, x)) { d = ag_activation_grad(g, x, MT_ACT_GELU); break; }
    t1 = ag_bins(MT_OP_mul, x, M_SQRT1_2); t2 = ag_un(MT_OP_erf, &t1); ag_drop(&t1);
    t1 = ag_bins(MT_OP_add, &t2, 1); ag_drop(&t2);
    t2 = ag_bins(MT_OP_mul, &t1, 0.5); ag_drop(&t1);           /* Phi(x) */
    t1 = ag_bin(MT_OP_mul, x, x); t3 = ag_bins(MT_OP_mul, &t1, -0.5); ag_drop(&t1);
    t1 = ag_un(MT_OP_exp, &t3); ag_drop(&t3);
    t3 = ag_bins(MT_OP_mul, &t1, 0.3989422804014327); ag_drop(&t1);  /* phi(x) */
    t1 = ag_bin(MT_OP_mul, x, &t3); ag_drop(&t3);
    t3 = ag_bin(MT_OP_add, &t2, &t1);
    d = ag_bin(MT_OP_mul, g, &t3);
    break;
  }
  case MT_OP_gelu_tanh: {   /* t = tanh(c (x + a x^3)): 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2) */
    if (one_pass(g, x)) { d = ag_activation_grad(g, x, MT_ACT_GELU_TANH); break; }
    const double c = 0.79788456080286535588, a = 0.044715;
    mt_tensor x2 = ag_bin(MT_OP_mul, x, x), t;
    t1 = ag_bins(MT_OP_mul, &x2, a); t2 = ag_bins(MT_OP_add, &t1, 1); ag_drop(&t1);
    t1 = ag_bin(MT_OP_mul, x, &t2); ag_drop(&t2);                     /* x + a x^3 */
    t2 = ag_bins(MT_OP_mul, &t1, c); ag_drop(&t1);
    t = ag_un(MT_OP_tanh, &t2); ag_drop(&t2);
    t1 = ag_bin(MT_OP_mul, &t, &t); t2 = ag_sbin(MT_OP_sub, 1, &t1); ag_drop(&t1);   /* 1 - t^2 */
    t1 = ag_bins(MT_OP_mul, &x2, 3 * a); t3 = ag_bins(MT_OP_add, &t1, 1); ag_drop(&t1);
    t1 = ag_bin(MT_OP_mul, &t2, &t3); ag_drop(&t2); ag_drop(&t3);
    t2 = ag_bin(MT_OP_mul, x, &t1); ag_drop(&t1);
    t1 = ag_bins(MT_OP_mul, &t2, 0.5 * c); ag_drop(&t2);             /* 0.5 x (1 - t^2) c (1 + 3 a x^2) */
    t2 = ag_bins(MT_OP_add, &t, 1); ag_drop(&t);
    t3 = ag_bins(MT_OP_mul, &t2, 0.5); ag_drop(&t2);
    t2 = ag_bin(MT_OP_add, &t3, &t1); ag_drop(&t1); ag_drop(&t3);
    d = ag_bin(MT_OP_mul, g, &t2);                                     /* t2 dropped below */
    ag_drop(&x2);
    break;
  }
  case MT_OP_silu: {                             /* s (1 + x (1 - s)) */
    mt_tensor s = ag_un(MT_OP_sigmoid, x);
    t1 = ag_sbin(MT_OP_sub, 1, &s); t2 = ag_bin(MT_OP_mul, x, &t1); ag_drop(&t1);
    t1 = ag_bins(MT_OP_add, &t2, 1); t3 = ag_bin(MT_OP_mul, &s, &t1);
    ag_drop(&s);
    d = ag_bin(MT_OP_mul, g, &t3);
    break;
  }
  case MT_OP_floor: case MT_OP_ceil: case MT_OP_round: case MT_OP_trunc: case MT_OP_sign:
    d = ag_bins(MT_OP_mul, g, 0); break;
  case MT_OP_frac: mt_ag_alias(&d, g); break;
  case MT_OP_neg: d = ag_un(MT_OP_neg, g); break;
  case MT_OP_abs: t1 = ag_un(MT_OP_sign, x); d = ag_bin(MT_OP_mul, g, &t1); break;
  case MT_OP_relu: {                             /* g where r > 0: one pass over g, no float mask */
    if (one_pass(g, &r)) { d = ag_activation_grad(g, &r, MT_ACT_RELU); break; }
    const mt_operand go = {g, 0, 0}, zero = {NULL, 0, 0};
    t1 = ag_bins(MT_OP_gt, &r, 0); d = ag_where_ops(&t1, &go, &zero); break;
  }
  case MT_OP_square: t1 = ag_bins(MT_OP_mul, x, 2); d = ag_bin(MT_OP_mul, g, &t1); break;
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
  ag_drop(&r); ag_drop(&t1); ag_drop(&t2); ag_drop(&t3);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

/* PyTorch's node names: "mul" -> "MulBackward", "log_softmax" -> "LogSoftmaxBackward" */
#define MT_AG_OP_NAME(name, expr, E) [MT_OP_##name] = #name,
static const char *const differentiable_ops[MT_NUM_OPS] = {
  MT_UNARY_FLOAT_OPS(MT_AG_OP_NAME, _) MT_UNARY_ROUND_OPS(MT_AG_OP_NAME, _)
  MT_UNARY_FLOAT_ONLY_OPS(MT_AG_OP_NAME, _) MT_UNARY_SAME_OPS(MT_AG_OP_NAME, _)
  MT_BINARY_OPS(MT_AG_OP_NAME, _) MT_BINARY_FLOAT_OPS(MT_AG_OP_NAME, _)
};
static char backward_name_buf[MT_NUM_OPS][40];
static const char *backward_names[MT_NUM_OPS];

static void init_names(void) {
  static int done_once;
  if (done_once) return;
  done_once = 1;
  for (int op = 0; op < MT_NUM_OPS; op++) {
    const char *src = differentiable_ops[op];
    if (!src) continue;
    char *dst = backward_name_buf[op];
    size_t k = 0;
    for (int up = 1; *src && k < sizeof backward_name_buf[op] - 9; src++) {
      if (*src == '_') { up = 1; continue; }
      dst[k++] = up && *src >= 'a' && *src <= 'z' ? (char)(*src - 'a' + 'A') : *src;
      up = 0;
    }
    memcpy(dst + k, "Backward", 9);
    backward_names[op] = dst;
  }
}

static int differentiable(mt_op op) {
  switch (op) {
  case MT_OP_isnan: case MT_OP_isinf: case MT_OP_isfinite: case MT_OP_logical_not:
  case MT_OP_eq: case MT_OP_ne: case MT_OP_lt: case MT_OP_le: case MT_OP_gt: case MT_OP_ge:
  case MT_OP_logical_and: case MT_OP_logical_or: case MT_OP_logical_xor:
    return 0;
  default:
    if (!backward_names[op]) init_names();
    return backward_names[op] != NULL;
  }
}

int mt_ag_record_unary(mt_tensor *r, const mt_tensor *x, mt_op op) {
  if (!ag_any_requires_grad(x, NULL) || !differentiable(op) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(backward_names[op], unary_backward, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  if (unary_reads[op] == READS_INPUT) mt_ag_save(n, x, 0);
  else if (unary_reads[op] == READS_RESULT) mt_ag_save(n, r, 1);
  return mt_ag_attach(r, n);
}

/* ---- binary ops ---- */
static int binary_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *a = NULL, *b = NULL;          /* saved slots in dims[0], dims[1] */
  if (n->dims[0] >= 0 && mt_ag_saved(n, n->dims[0], &a)) return -1;
  if (n->dims[1] >= 0 && mt_ag_saved(n, n->dims[1], &b)) return -1;
  ag_failed = 0;
  double s = n->scalar;
  mt_tensor da = {0}, db = {0}, t1 = {0}, t2 = {0}, t3 = {0};
  int want_a = n->next[0].node != NULL, want_b = n->next[1].node != NULL;
  switch ((mt_op)n->op) {
  case MT_OP_add: case MT_OP_sub: {             /* scalar holds alpha */
    double alpha = n->op == MT_OP_sub ? -n->scalar : n->scalar;
    if (want_a) mt_ag_alias(&da, g);
    if (want_b) {
      if (alpha == 1) mt_ag_alias(&db, g);
      else db = ag_bins(MT_OP_mul, g, alpha);
    }
    break;
  }
  case MT_OP_mul:
    if (want_a) da = b ? ag_bin(MT_OP_mul, g, b) : ag_bins(MT_OP_mul, g, s);
    if (want_b) db = a ? ag_bin(MT_OP_mul, g, a) : ag_bins(MT_OP_mul, g, s);
    break;
  case MT_OP_div:
    if (want_a) da = b ? ag_bin(MT_OP_div, g, b) : ag_bins(MT_OP_div, g, s);
    if (want_b) {                                /* -g a / b^2 */
      t1 = ag_bin(MT_OP_mul, b, b);
      t2 = a ? ag_bin(MT_OP_mul, g, a) : ag_bins(MT_OP_mul, g, s);
      t3 = ag_bin(MT_OP_div, &t2, &t1);
      db = ag_un(MT_OP_neg, &t3);
    }
    break;
  case MT_OP_pow:
    if (want_a) {                                /* g b a^(b-1) */
      if (b) { t1 = ag_bins(MT_OP_sub, b, 1); t2 = ag_bin(MT_OP_pow, a, &t1); t3 = ag_bin(MT_OP_mul, &t2, b); }
      else if (s == 2) t3 = ag_bins(MT_OP_mul, a, 2);   /* x^2 (a squared loss): 2 a, no pow pass */
      else { t2 = ag_bins(MT_OP_pow, a, s - 1); t3 = ag_bins(MT_OP_mul, &t2, s); }
      da = ag_bin(MT_OP_mul, g, &t3);
      ag_drop(&t1); ag_drop(&t2); ag_drop(&t3);
    }
    if (want_b) {                                /* g a^b log(a) */
      if (a) { t1 = ag_bin(MT_OP_pow, a, b); t2 = ag_un(MT_OP_log, a); t3 = ag_bin(MT_OP_mul, &t1, &t2); }
      else { t1 = ag_sbin(MT_OP_pow, s, b); t3 = ag_bins(MT_OP_mul, &t1, log(s)); }
      db = ag_bin(MT_OP_mul, g, &t3);
    }
    break;
  case MT_OP_maximum: case MT_OP_minimum: {     /* ties share the gradient */
    mt_op cmp = n->op == MT_OP_maximum ? MT_OP_gt : MT_OP_lt;
    if (a && b) { t1 = ag_bin(cmp, a, b); t2 = ag_bin(MT_OP_eq, a, b); }
    else if (a) { t1 = ag_bins(cmp, a, s); t2 = ag_bins(MT_OP_eq, a, s); }
    else { t1 = ag_sbin(cmp, s, b); t2 = ag_sbin(MT_OP_eq, s, b); }
    mt_tensor half = ag_bins(MT_OP_mul, &t2, 0.5);
    t3 = ag_bin(MT_OP_add, &t1, &half);           /* weight of a */
    ag_drop(&half);
    if (want_a) da = ag_bin(MT_OP_mul, g, &t3);
    if (want_b) { mt_tensor wb = ag_sbin(MT_OP_sub, 1, &t3); db = ag_bin(MT_OP_mul, g, &wb); ag_drop(&wb); }
    break;
  }
  case MT_OP_atan2: {                            /* (b, -a) / (a^2 + b^2) */
    t1 = ag_bin(MT_OP_mul, a, a); t2 = ag_bin(MT_OP_mul, b, b); t3 = ag_bin(MT_OP_add, &t1, &t2);
    if (want_a) { mt_tensor q = ag_bin(MT_OP_div, b, &t3); da = ag_bin(MT_OP_mul, g, &q); ag_drop(&q); }
    if (want_b) { mt_tensor q = ag_bin(MT_OP_div, a, &t3), nq = ag_un(MT_OP_neg, &q);
                  db = ag_bin(MT_OP_mul, g, &nq); ag_drop(&q); ag_drop(&nq); }
    break;
  }
  case MT_OP_fmod: case MT_OP_remainder:
    if (want_a) mt_ag_alias(&da, g);
    if (want_b) {                                /* -g * trunc(a/b) (fmod) or floor(a/b) */
      t1 = a ? (b ? ag_bin(MT_OP_div, a, b) : ag_bins(MT_OP_div, a, s)) : ag_sbin(MT_OP_div, s, b);
      t2 = ag_un(n->op == MT_OP_fmod ? MT_OP_trunc : MT_OP_floor, &t1);
      t3 = ag_un(MT_OP_neg, &t2);
      db = ag_bin(MT_OP_mul, g, &t3);
    }
    break;
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
  ag_drop(&t1); ag_drop(&t2); ag_drop(&t3);
  if (!ag_failed && want_a && da.storage) ag_finish(n, 0, &da, &gi[0]); else ag_drop(&da);
  if (!ag_failed && want_b && db.storage) ag_finish(n, 1, &db, &gi[1]); else ag_drop(&db);
  return ag_done();
}

int mt_ag_record_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha) {
  if (!ag_any_requires_grad(a->t, b->t) || !differentiable(op) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[2] = {a->t, b->t};
  mt_node *n = mt_ag_new_node(backward_names[op], binary_backward, 2, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->scalar = !a->t ? a->value : !b->t ? b->value : 0;
  n->dims[0] = n->dims[1] = -1;
  if (op == MT_OP_add || op == MT_OP_sub) { n->scalar = alpha; return mt_ag_attach(r, n); }  /* nothing saved */
  /* save only what the wanted gradients read (as PyTorch): x * c saves
     nothing of x, so x may change in place afterwards */
  int want_a = ag_any_requires_grad(a->t, NULL), want_b = ag_any_requires_grad(b->t, NULL);
  int need[2] = {1, 1};
  if (op == MT_OP_mul) { need[0] = want_b; need[1] = want_a; }
  else if (op == MT_OP_div) { need[0] = want_b; need[1] = 1; }
  for (int i = 0; i < 2; i++)
    if (in[i] && need[i]) { n->dims[i] = n->nsaved; mt_ag_save(n, in[i], 0); }
  return mt_ag_attach(r, n);
}

/* ---- sum and mean ---- */
static int reduce_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  int nd = n->in_ndim[0];
  const int64_t *shape = n->in_shape[0];
  int64_t kept[MT_MAX_DIMS], count = 1;
  for (int d = 0; d < nd; d++) {
    int reduced = (n->mask >> d) & 1;
    kept[d] = reduced ? 1 : shape[d];
    if (reduced) count *= shape[d];
  }
  mt_tensor k = ag_reshape(g, nd, kept);
  mt_tensor expanded = ag_expand(&k, nd, shape), e = {0};
  if (n->op) e = ag_bins(MT_OP_div, &expanded, (double)count);
  else mt_ag_alias(&e, &expanded);
  ag_drop(&k);
  ag_drop(&expanded);
  if (!ag_failed) ag_finish(n, 0, &e, &gi[0]); else ag_drop(&e);
  return ag_done();
}

int mt_ag_record_reduce(mt_tensor *r, const mt_tensor *x, int is_mean, uint32_t mask, int keepdim) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(is_mean ? "MeanBackward" : "SumBackward", reduce_backward, 1, in);
  if (!n) return mt_fail("sum: out of memory recording the graph");
  n->op = is_mean;
  n->mask = x->ndim ? (mask & ((x->ndim >= 32 ? 0xffffffffu : (1u << x->ndim) - 1))) : 0;
  n->keepdim = keepdim;
  return mt_ag_attach(r, n);
}

/* ---- views, expand, casts, mm ---- */
static int view_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  mt_tensor t = ag_reshape(g, n->in_ndim[0], n->in_shape[0]);
  gi[0] = ag_cast(&t, n->in_dtype[0]);
  ag_drop(&t);
  return ag_done();
}

static int expand_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  mt_tensor t = {0};
  mt_ag_alias(&t, g);
  ag_finish(n, 0, &t, &gi[0]);
  return ag_done();
}

static int transpose_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  gi[0] = ag_transpose(g, n->dims[0], n->dims[1]);
  return ag_done();
}

static int mm_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *a, *b;
  if (mt_ag_saved(n, 0, &a) || mt_ag_saved(n, 1, &b)) return -1;
  ag_failed = 0;
  if (n->next[0].node) { mt_tensor bt = ag_transpose(b, 0, 1); gi[0] = ag_mm(g, &bt); ag_drop(&bt); }
  if (n->next[1].node) { mt_tensor at = ag_transpose(a, 0, 1); gi[1] = ag_mm(&at, g); ag_drop(&at); }
  return ag_done();
}

/* A one-input node named name with backward fn, attached to r when x
   requires grad in grad mode. */
static int ag_record_one(mt_tensor *r, const mt_tensor *x, const char *name, mt_backward_fn fn) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(name, fn, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", name);
  return mt_ag_attach(r, n);
}

int mt_ag_record_view(mt_tensor *r, const mt_tensor *x) { return ag_record_one(r, x, "ViewBackward", view_backward); }
int mt_ag_record_expand(mt_tensor *r, const mt_tensor *x) { return ag_record_one(r, x, "ExpandBackward", expand_backward); }
int mt_ag_record_cast(mt_tensor *r, const mt_tensor *x) { return ag_record_one(r, x, "ToCopyBackward", view_backward); }

int mt_ag_record_transpose(mt_tensor *r, const mt_tensor *x, int d0, int d1) {
  if (ag_record_one(r, x, "TransposeBackward", transpose_backward)) return -1;
  mt_ag_meta *m = r->grad_meta;
  if (m && m->grad_fn && m->grad_fn->backward == transpose_backward) {
    m->grad_fn->dims[0] = d0;
    m->grad_fn->dims[1] = d1;
  }
  return 0;
}

int mt_ag_record_mm(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  if (!ag_any_requires_grad(a, b)) return 0;
  const mt_tensor *in[2] = {a, b};
  mt_node *n = mt_ag_new_node("MmBackward", mm_backward, 2, in);
  if (!n) return mt_fail("mm: out of memory recording the graph");
  mt_ag_save(n, a, 0);
  mt_ag_save(n, b, 0);
  return mt_ag_attach(r, n);
}
