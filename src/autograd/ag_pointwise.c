/* ag_pointwise.c: the elementwise ops' derivatives, expanded from the
   registry's derivative column (src/ops/registry.h): which inputs a node
   saves, its name, and its backward. Each derivative is a formula in the
   language of ag_formula.h, in G (the incoming gradient), X (the input), R (the
   result), A and B (the operands, a tensor or a number) and ALPHA. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ag.h"
#include "ag_nn.h"
#include "ag_formula.h"
#include "ag_index.h"
#include "ag_shape.h"
#include "ag_linalg.h"
#include "ag_reduce.h"
#include "../ops/dispatch.h"

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
  MT_BINARY_INT_OPS(OPC, _)
};
#undef OPC
#undef DERIV
#undef DERIV2
#undef NODERIV

static int differentiable(mt_op op) { return mt_op_infos[op].differentiable; }

/* ---- unary ---- */
static int unary_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *x = NULL;
  mt_tensor r = {0};                              /* the result, when read */
  if ((reads_a[n->op] & INPUT) && mt_ag_saved(n, 0, &x)) return -1;
  if ((reads_a[n->op] & RESULT) && mt_ag_saved_result(n, 0, &r)) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  const ag_v G = V(grad), X = x ? V(x) : V(&ag_failed_value), R = V((const mt_tensor *)&r);
  (void)X; (void)R;
#define NODERIV ag_failed = 1; mt_fail("%s: no derivative", n->name)
#define DERIV(reads, expr) ag_formula_finish(n, 0, V(expr), mark, &gi[0])
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_UNARY_FLOAT_OPS(OPC, _) MT_UNARY_FLOAT_ONLY_OPS(OPC, _) MT_UNARY_ROUND_OPS(OPC, _) MT_UNARY_SAME_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV
#undef NODERIV
  ag_release_scratch(mark);
  ag_drop(&r);
  return ag_done();
}

int mt_ag_record_unary(mt_tensor *r, const mt_tensor *x, mt_op op) {
  if (!ag_any_requires_grad(x, NULL) || !differentiable(op) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(ag_backward_name(op), unary_backward, 1, in);
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
  int mark = ag_scratch_mark();
  /* an operand that was a number is that number; one that was a tensor
     and is not saved is not read (its slot stays the failed value) */
  const ag_v G = V(grad), A = n->in_is_number & 1 ? agv_s(n->scalar) : a ? V(a) : V(&ag_failed_value),
             B = n->in_is_number & 2 ? agv_s(n->scalar) : b ? V(b) : V(&ag_failed_value);
  const double ALPHA = n->scalar2;
  (void)A; (void)B; (void)ALPHA;
  int want_a = n->next[0].node != NULL, want_b = n->next[1].node != NULL;
#define NODERIV ag_failed = 1; mt_fail("%s: no derivative", n->name)
#define DERIV2(reads_a, expr_a, reads_b, expr_b)         \
  if (want_a) ag_formula_finish(n, 0, V(expr_a), mark, &gi[0]);     \
  if (want_b) ag_formula_finish(n, 1, V(expr_b), mark, &gi[1])
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_BINARY_OPS(OPC, _) MT_BINARY_FLOAT_OPS(OPC, _) MT_BINARY_DIV_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV2
#undef NODERIV
  ag_release_scratch(mark);
  return ag_done();
}

int mt_ag_record_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, double alpha) {
  if (!ag_any_requires_grad(a->t, b->t) || !differentiable(op) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[2] = {a->t, b->t};
  mt_node *n = mt_ag_new_node(ag_backward_name(op), binary_backward, 2, in);
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

/* ---- elementwise with parameters ----
   The operands A, B and C (a tensor or a number each) and the parameters P1
   and P2; the node keeps the numbers (P1 and P2 in scalar and scalar2, a
   number operand i in extra[i - 1]) and saves the tensors the wanted
   gradients read (bit i of mask: operand i saved, in operand order). */
static const unsigned char param_reads[MT_NUM_OPS - MT_OP_END_ADD_PRODUCT][3] = {
#define DERIV(r, e) {r, 0, 0}
#define DERIV2(ra, ea, rb, eb) {ra, rb, 0}
#define DERIV3(ra, ea, rb, eb, rc, ec) {ra, rb, rc}
#define OPC(name, kernel, E, deriv, ...) [MT_OP_##name - MT_OP_END_ADD_PRODUCT] = deriv,
  MT_PARAM_OPS(OPC, _)
#undef OPC
#undef DERIV3
#undef DERIV2
#undef DERIV
};
static const unsigned operand_bit[3] = {A, B, C};

/* clamp's, clamp_min's and clamp_max's derivative, as PyTorch's: with
   number bounds, g reaches x where lo < x < hi, and nothing at a bound;
   with tensor bounds (a number beside a tensor acts as one), x and a bound
   it equals share g evenly, a bound takes g where it is the result, and hi
   wins where lo > hi (x equal to both keeps all of it). which: the operand
   whose gradient this is. */
/* copy's source gradient: G, which finishing sums back to the source's
   shape when it broadcast; viewed in the source's shape when it has as many
   elements (Torch7's copy between shapes) */
static ag_v copy_grad(const mt_node *n, int which, ag_v G, ag_v A, ag_v B, ag_v C) {
  (void)which; (void)A; (void)B; (void)C;
  const int64_t count = mt_shape_numel("copy_", n->in_ndim[1], n->in_shape[1]);
  if (!G.t || mt_numel(G.t) != count) return G;
  return ag_keep(ag_as(G.t, n->in_ndim[1], n->in_shape[1]));
}

static ag_v clamp_grad(const mt_node *n, int which, ag_v G, ag_v A, ag_v B, ag_v C) {
  int is_clamp = n->op == MT_OP_clamp, upper_only = n->op == MT_OP_clamp_max;
  int tensors = B.t || (is_clamp && C.t);
  if (!is_clamp) {                               /* one bound, B */
    if (!tensors) return WHERE(upper_only ? LT(A, B) : GT(A, B), G, 0);
    ag_v beyond = upper_only ? LT(A, B) : GT(A, B), tie = MUL(EQ(A, B), 0.5);
    return which == 0 ? MUL(G, ADD(beyond, tie)) : MUL(G, SUB(1, ADD(beyond, tie)));
  }
  if (!tensors) return WHERE(AND(GT(A, B), LT(A, C)), G, 0);
  ag_v at_lo = EQ(A, B), at_hi = EQ(A, C), ordered = LE(B, C), apart = LT(B, C);
  switch (which) {
  case 0:                                        /* inside: 1, less a half at each bound met */
    return MUL(G, MUL(AND(GE(A, B), LE(A, C)),
                      ADD(SUB(SUB(1, MUL(at_lo, 0.5)), MUL(at_hi, 0.5)), MUL(at_lo, at_hi))));
  case 1:
    return MUL(G, MUL(ordered, ADD(LT(A, B), MUL(MUL(at_lo, apart), 0.5))));
  default:
    return MUL(G, ADD(GT(B, C), MUL(ordered, ADD(GT(A, C), MUL(MUL(at_hi, apart), 0.5)))));
  }
}

static int param_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *saved[3] = {NULL, NULL, NULL};
  for (int i = 0, slot = 0; i < 3; i++)
    if ((n->mask >> i & 1) && mt_ag_saved(n, slot++, &saved[i])) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  ag_v in[3];
  for (int i = 0; i < 3; i++) {
    double v = 0;
    if (i > 0 && (n->in_is_number >> i & 1)) memcpy(&v, &n->extra[i - 1], sizeof v);
    in[i] = (n->in_is_number >> i & 1) ? agv_s(v) : saved[i] ? V(saved[i]) : V(&ag_failed_value);
  }
  const ag_v G = V(grad), A = in[0], B = in[1], C = in[2], X = A;
  const double P1 = n->scalar, P2 = n->scalar2;
  (void)B; (void)C; (void)X; (void)P1; (void)P2;
#define NAMED(fn) fn(n, which_, G, A, B, C)
#define GRAD(i, expr)                                                                                 \
  if (n->next[i].node) {                                                                              \
    const int which_ = i;                                                                             \
    (void)which_;                                                                                     \
    ag_formula_finish(n, i, V(expr), mark, &gi[i]);                                                   \
  }
#define DERIV(r, e) GRAD(0, e)
#define DERIV2(ra, ea, rb, eb) GRAD(0, ea) GRAD(1, eb)
#define DERIV3(ra, ea, rb, eb, rc, ec) GRAD(0, ea) GRAD(1, eb) GRAD(2, ec)
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv break;
  switch ((mt_op)n->op) {
    MT_PARAM_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV3
#undef DERIV2
#undef DERIV
#undef GRAD
#undef NAMED
  ag_release_scratch(mark);
  return ag_done();
}

int mt_ag_record_param(mt_tensor *r, const mt_operand *in, mt_op op, const double *p) {
  if (!mt_op_is_param(op) || !mt_dtype_is_float(r->dtype) || !mt_ag_grad_enabled()) return 0;
  int arity = mt_op_infos[op].arity, any = 0;
  const mt_tensor *ins[3] = {NULL, NULL, NULL};
  for (int i = 0; i < arity; i++) {
    ins[i] = in[i].t;
    any |= ins[i] && mt_ag_requires_grad(ins[i]);
  }
  if (!any) return 0;
  mt_node *n = mt_ag_new_node_extra(ag_backward_name(op), param_backward, arity, ins, 2);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->scalar = p ? p[0] : 0;
  n->scalar2 = p ? p[1] : 0;
  unsigned reads = 0;
  const unsigned char *rd = param_reads[op - MT_OP_END_ADD_PRODUCT];
  for (int i = 0; i < arity; i++) {
    if (!ins[i]) {
      n->in_is_number |= (unsigned char)(1u << i);
      if (i > 0) memcpy(&n->extra[i - 1], &in[i].value, sizeof in[i].value);
    } else if (mt_ag_requires_grad(ins[i])) {
      reads |= rd[i];
    }
  }
  for (int i = 0; i < arity; i++)
    if (ins[i] && (reads & operand_bit[i])) { n->mask |= 1u << i; mt_ag_save(n, ins[i], 0); }
  return mt_ag_attach(r, n);
}

/* ---- what the dispatcher calls of autograd ---- */
static void release_meta(void *meta) { mt_ag_meta_release(meta); }

static int is_weight(const mt_tensor *t) { return mt_ag_requires_grad(t) && mt_ag_is_leaf(t); }

__attribute__((constructor)) static void register_autograd(void) {
  static const mt_autograd_hooks hooks = {
    mt_ag_record_unary, mt_ag_record_binary, mt_ag_record_cast, mt_ag_record_reduce, mt_ag_record_along,
    mt_ag_record_selection, mt_ag_record_product, mt_ag_record_add_product, mt_ag_record_param,
    mt_ag_record_index_op, mt_ag_record_put_op, mt_ag_record_mask_op, mt_ag_record_view_op, mt_ag_record_join,
    mt_ag_record_nn,
    mt_ag_inplace_needed, mt_ag_inplace_source, mt_ag_inplace_commit, release_meta, is_weight, mt_ag_alias,
  };
  mt_register_autograd(&hooks);
}
