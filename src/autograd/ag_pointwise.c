/* ag_pointwise.c: the elementwise ops' derivatives, expanded from the
   registry's derivative column (src/ops/registry.h): which inputs a node
   saves, its name, and its backward. Each derivative is a formula over the
   recording ops below, in G (the incoming gradient), X (the input), R (the
   result), A and B (the operands, a tensor or a number) and ALPHA. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ag.h"
#include "ag_expr.h"
#include "../ops/dispatch.h"

/* ---- formula values: a tensor (in the formula's scratch) or a number ---- */
typedef struct { const mt_tensor *t; double s; } ag_v;

static inline ag_v agv_v(ag_v v) { return v; }
static inline ag_v agv_t(const mt_tensor *t) { return (ag_v){t, 0}; }
static inline ag_v agv_s(double s) { return (ag_v){NULL, s}; }
#define V(x) _Generic((x), ag_v: agv_v, mt_tensor *: agv_t, const mt_tensor *: agv_t, default: agv_s)(x)

/* The tensors a formula makes live here until its gradient is finished:
   a formula is straight-line code with no releases of its own. */
#define SCRATCH 48
static _Thread_local mt_tensor *scratch;      /* SCRATCH of them, allocated at first use (a
                                                 thread-local array would not fit a dlopen'd
                                                 library's static TLS) */
static _Thread_local int scratch_n;
static const mt_tensor failed_value;          /* no storage: every later op fails */

static ag_v keep(mt_tensor r) {
  if (ag_failed || !r.storage) { ag_drop(&r); ag_failed = 1; return agv_t(&failed_value); }
  if (!scratch && !(scratch = calloc(SCRATCH, sizeof *scratch))) {
    ag_drop(&r);
    ag_failed = 1;
    mt_fail("backward: out of memory");
    return agv_t(&failed_value);
  }
  if (scratch_n == SCRATCH) {
    ag_drop(&r);
    ag_failed = 1;
    mt_fail("backward: a derivative formula needs more than %d temporaries", SCRATCH);
    return agv_t(&failed_value);
  }
  scratch[scratch_n] = r;
  return agv_t(&scratch[scratch_n++]);
}

static void release_scratch(int mark) {
  while (scratch_n > mark) ag_drop(&scratch[--scratch_n]);
}

static double number_op(mt_op op, double a, double b) {
  switch (op) {
  case MT_OP_add: return a + b;
  case MT_OP_sub: return a - b;
  case MT_OP_mul: return a * b;
  case MT_OP_div: return a / b;
  case MT_OP_pow: return pow(a, b);
  default: return NAN;
  }
}

static ag_v f_bin(mt_op op, ag_v a, ag_v b) {
  if (!a.t && !b.t) return agv_s(number_op(op, a.s, b.s));
  /* x * 1 and x ^ 1 are x: add's gradient, pow's derivative at exponent 2 */
  if (a.t && !b.t && b.s == 1 && (op == MT_OP_mul || op == MT_OP_pow || op == MT_OP_div)) {
    if (!a.t->storage) return a;
    mt_tensor r = {0};
    mt_ag_alias(&r, a.t);
    return keep(r);
  }
  mt_operand oa = {a.t, a.s, 0}, ob = {b.t, b.s, 0};
  return keep(ag_binop(op, &oa, &ob));
}

/* op of a tensor; of a number, through a 0-dim float64 tensor */
static ag_v f_un(mt_op op, ag_v x) {
  if (x.t) return keep(ag_un(op, x.t));
  mt_tensor t = {0}, r = {0};
  double v = NAN;
  if (!mt_tensor_init(&t, MT_FLOAT64, 0, NULL)) {
    *(double *)mt_data(&t) = x.s;
    if (!mt_call_unary(&r, &t, op, 0, MT_FLOAT64)) v = mt_get_f64(r.dtype, mt_data(&r));
  }
  mt_tensor_release(&t);
  mt_tensor_release(&r);
  return agv_s(v);
}

static ag_v f_neg(ag_v x) { return x.t ? f_un(MT_OP_neg, x) : agv_s(-x.s); }

static ag_v f_where(ag_v cond, ag_v a, ag_v b) {
  mt_operand oa = {a.t, a.s, 0}, ob = {b.t, b.s, 0};
  if (!cond.t) { ag_failed = 1; mt_fail("backward: where needs a tensor condition"); return agv_t(&failed_value); }
  return keep(ag_where_ops(cond.t, &oa, &ob));
}

/* g * f'(v) in one kernel (mt_activation_grad), for a backward that records
   nothing (create_graph records the formula) where g matches v */
static int can_fuse(ag_v g, ag_v v) {
  return !mt_ag_grad_enabled() && g.t && v.t && v.t->storage && g.t->dtype == v.t->dtype && mt_same_shape(g.t, v.t);
}
static ag_v fused(ag_v g, ag_v v, mt_activation kind) {
  mt_tensor d = {0};
  if (!ag_failed && mt_activation_grad(&d, g.t, v.t, kind)) { mt_tensor_release(&d); ag_failed = 1; }
  return keep(d);
}

/* The formula language of the registry's derivative column */
#define MUL(a, b) f_bin(MT_OP_mul, V(a), V(b))
#define DIV(a, b) f_bin(MT_OP_div, V(a), V(b))
#define ADD(a, b) f_bin(MT_OP_add, V(a), V(b))
#define SUB(a, b) f_bin(MT_OP_sub, V(a), V(b))
#define POW(a, b) f_bin(MT_OP_pow, V(a), V(b))
#define GT(a, b) f_bin(MT_OP_gt, V(a), V(b))
#define LT(a, b) f_bin(MT_OP_lt, V(a), V(b))
#define EQ(a, b) f_bin(MT_OP_eq, V(a), V(b))
#define NEG(a) f_neg(V(a))
#define F(op, a) f_un(MT_OP_##op, V(a))
#define WHERE(c, a, b) f_where(V(c), V(a), V(b))
#define LET(name, value, expr) ({ ag_v name = V(value); V(expr); })
#define FUSED(kind, v, expr) (can_fuse(G, V(v)) ? fused(G, V(v), kind) : V(expr))

/* What a formula reads (the registry's reads): bits of the saved inputs */
enum { NOTHING = 0, INPUT = 1, A = 1, B = 2, AB = 3, RESULT = 4 };

/* ---- the registry's columns, as tables (OPC: one entry) ---- */
#define EVERY_LIST(list) list(OPC, _)
#define NODERIV NOTHING
#define DERIV(reads, expr) reads
#define DERIV2(reads_a, expr_a, reads_b, expr_b) reads_a
static const unsigned char reads_a[MT_NUM_OPS] = {
#define OPC(name, kernel, E, deriv, ...) [MT_OP_##name] = deriv,
  MT_POINTWISE_LISTS(EVERY_LIST)
};
#undef DERIV2
#define DERIV2(reads_a, expr_a, reads_b, expr_b) reads_b
static const unsigned char reads_b[MT_NUM_OPS] = {
  MT_BINARY_OPS(OPC, _) MT_BINARY_FLOAT_OPS(OPC, _) MT_COMPARE_OPS(OPC, _) MT_BINARY_DIV_OPS(OPC, _)
};
#undef OPC
#undef DERIV
#undef DERIV2
#undef NODERIV

static int differentiable(mt_op op) { return mt_op_infos[op].differentiable; }

/* PyTorch's node names: "mul" -> "MulBackward", "log_softmax" -> "LogSoftmaxBackward" */
static char backward_name_buf[MT_NUM_OPS][40];
static const char *backward_names[MT_NUM_OPS];
static void init_names(void) {
  static int done_once;
  if (__atomic_load_n(&done_once, __ATOMIC_ACQUIRE)) return;
  for (int op = 0; op < MT_NUM_OPS; op++) {
    if (!differentiable((mt_op)op)) continue;
    const char *src = mt_op_names[op];
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
  __atomic_store_n(&done_once, 1, __ATOMIC_RELEASE);
}

/* Input i's gradient from the formula's value v: its own shape and dtype
   (g itself when the formula is G), then the scratch back to mark. */
static void finish(mt_node *n, int i, ag_v v, int mark, mt_tensor *out) {
  mt_tensor d = {0};
  if (!ag_failed) {
    if (v.t) mt_ag_alias(&d, v.t);
    else { ag_failed = 1; mt_fail("%s: a derivative formula gave a number", n->name); }
  }
  release_scratch(mark);
  if (!ag_failed && d.storage) ag_finish(n, i, &d, out);
  else ag_drop(&d);
}

/* ---- unary ---- */
static int unary_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *x = NULL;
  mt_tensor r = {0};                              /* the result, when read */
  if ((reads_a[n->op] & INPUT) && mt_ag_saved(n, 0, &x)) return -1;
  if ((reads_a[n->op] & RESULT) && mt_ag_saved_result(n, 0, &r)) return -1;
  ag_failed = 0;
  int mark = scratch_n;
  const ag_v G = V(grad), X = x ? V(x) : V(&failed_value), R = V((const mt_tensor *)&r);
  (void)X; (void)R;
#define NODERIV ag_failed = 1; mt_fail("%s: no derivative", n->name)
#define DERIV(reads, expr) finish(n, 0, V(expr), mark, &gi[0])
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_UNARY_FLOAT_OPS(OPC, _) MT_UNARY_FLOAT_ONLY_OPS(OPC, _) MT_UNARY_ROUND_OPS(OPC, _) MT_UNARY_SAME_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV
#undef NODERIV
  release_scratch(mark);
  ag_drop(&r);
  return ag_done();
}

int mt_ag_record_unary(mt_tensor *r, const mt_tensor *x, mt_op op) {
  if (!ag_any_requires_grad(x, NULL) || !differentiable(op) || !mt_dtype_is_float(r->dtype)) return 0;
  init_names();
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(backward_names[op], unary_backward, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  if (reads_a[op] & INPUT) mt_ag_save(n, x, 0);
  else if (reads_a[op] & RESULT) mt_ag_save(n, r, 1);
  return mt_ag_attach(r, n);
}

/* ---- binary ---- */
static int binary_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *a = NULL, *b = NULL;           /* saved slots in dims[0], dims[1] */
  if (n->dims[0] >= 0 && mt_ag_saved(n, n->dims[0], &a)) return -1;
  if (n->dims[1] >= 0 && mt_ag_saved(n, n->dims[1], &b)) return -1;
  ag_failed = 0;
  int mark = scratch_n;
  /* an operand that was a number is that number; one that was a tensor
     and is not saved is not read (its slot stays the failed value) */
  const ag_v G = V(grad), A = n->in_is_number & 1 ? agv_s(n->scalar) : a ? V(a) : V(&failed_value),
             B = n->in_is_number & 2 ? agv_s(n->scalar) : b ? V(b) : V(&failed_value);
  const double ALPHA = n->scalar2;
  (void)A; (void)B; (void)ALPHA;
  int want_a = n->next[0].node != NULL, want_b = n->next[1].node != NULL;
#define NODERIV ag_failed = 1; mt_fail("%s: no derivative", n->name)
#define DERIV2(reads_a, expr_a, reads_b, expr_b)         \
  if (want_a) finish(n, 0, V(expr_a), mark, &gi[0]);     \
  if (want_b) finish(n, 1, V(expr_b), mark, &gi[1])
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_BINARY_OPS(OPC, _) MT_BINARY_FLOAT_OPS(OPC, _) MT_BINARY_DIV_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV2
#undef NODERIV
  release_scratch(mark);
  return ag_done();
}

int mt_ag_record_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha) {
  if (!ag_any_requires_grad(a->t, b->t) || !differentiable(op) || !mt_dtype_is_float(r->dtype)) return 0;
  init_names();
  const mt_tensor *in[2] = {a->t, b->t};
  mt_node *n = mt_ag_new_node(backward_names[op], binary_backward, 2, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->scalar = !a->t ? a->value : !b->t ? b->value : 0;
  n->in_is_number = (!a->t ? 1 : 0) | (!b->t ? 2 : 0);
  n->scalar2 = alpha;
  n->dims[0] = n->dims[1] = -1;
  /* save only what the wanted gradients read (as PyTorch): x * c saves
     nothing of x, so x may change in place afterwards */
  int want_a = ag_any_requires_grad(a->t, NULL), want_b = ag_any_requires_grad(b->t, NULL);
  unsigned reads = (want_a ? reads_a[op] : 0) | (want_b ? reads_b[op] : 0);
  for (int i = 0; i < 2; i++)
    if (in[i] && (reads & (1u << i))) { n->dims[i] = n->nsaved; mt_ag_save(n, in[i], 0); }
  return mt_ag_attach(r, n);
}

/* ---- what the dispatcher calls of autograd ---- */
static void release_meta(void *meta) { mt_ag_meta_release(meta); }

__attribute__((constructor)) static void register_autograd(void) {
  static const mt_autograd_hooks hooks = {
    mt_ag_record_unary, mt_ag_record_binary, mt_ag_record_cast,
    mt_ag_inplace_needed, mt_ag_inplace_source, mt_ag_inplace_commit, release_meta,
  };
  mt_register_autograd(&hooks);
}
