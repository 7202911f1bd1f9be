/* ag_formula.h: the language the registry's derivative column is written in
   (src/ops/registry.h), shared by the families that expand it
   (ag_pointwise.c, ag_reduce.c). A formula is an expression over values that
   are a tensor or a number: G (the incoming gradient), the inputs and the
   result the node saved, and numbers. Each operation records (under
   create_graph) and keeps its tensor in a per-thread scratch until the
   gradient is finished, so a formula is straight-line code with no releases
   of its own; after a failure every later operation gives the failed value
   and ag_done() reports the first error. */
#ifndef MT_AG_FORMULA_H
#define MT_AG_FORMULA_H

#include "ag.h"
#include "ag_expr.h"

/* ---- formula values: a tensor (in the formula's scratch) or a number ---- */
typedef struct { const mt_tensor *t; double s; } ag_v;

static inline ag_v agv_v(ag_v v) { return v; }
static inline ag_v agv_t(const mt_tensor *t) { return (ag_v){t, 0}; }
static inline ag_v agv_s(double s) { return (ag_v){NULL, s}; }
#define V(x) _Generic((x), ag_v: agv_v, mt_tensor *: agv_t, const mt_tensor *: agv_t, default: agv_s)(x)

extern const mt_tensor ag_failed_value;          /* no storage: every later op fails */

/* r kept in the scratch until ag_release_scratch (taken: r is the scratch's now) */
ag_v ag_keep(mt_tensor r);
int ag_scratch_mark(void);
void ag_release_scratch(int mark);

ag_v ag_f_bin(mt_op op, ag_v a, ag_v b);
ag_v ag_f_un(mt_op op, ag_v x);                  /* of a number: through a 0-dim float64 tensor */
ag_v ag_f_neg(ag_v x);
ag_v ag_f_where(ag_v cond, ag_v a, ag_v b);
/* g * f'(v) in one kernel (mt_activation_grad), for a backward that records
   nothing (create_graph records the formula) where g matches v */
int ag_can_fuse(ag_v g, ag_v v);
ag_v ag_fused(ag_v g, ag_v v, mt_activation kind);

/* Input i's gradient from the formula's value v: its own shape and dtype
   (g itself when the formula is G), then the scratch back to mark. */
void ag_formula_finish(mt_node *n, int i, ag_v v, int mark, mt_tensor *out);

/* PyTorch's node name of a registry op: "mul" -> "MulBackward",
   "log_softmax" -> "LogSoftmaxBackward", "max_dim" -> "MaxBackward" */
const char *ag_backward_name(mt_op op);

/* ---- the language ---- */
#define MUL(a, b) ag_f_bin(MT_OP_mul, V(a), V(b))
#define DIV(a, b) ag_f_bin(MT_OP_div, V(a), V(b))
#define ADD(a, b) ag_f_bin(MT_OP_add, V(a), V(b))
#define SUB(a, b) ag_f_bin(MT_OP_sub, V(a), V(b))
#define POW(a, b) ag_f_bin(MT_OP_pow, V(a), V(b))
#define GT(a, b) ag_f_bin(MT_OP_gt, V(a), V(b))
#define LT(a, b) ag_f_bin(MT_OP_lt, V(a), V(b))
#define EQ(a, b) ag_f_bin(MT_OP_eq, V(a), V(b))
#define GE(a, b) ag_f_bin(MT_OP_ge, V(a), V(b))
#define LE(a, b) ag_f_bin(MT_OP_le, V(a), V(b))
#define AND(a, b) ag_f_bin(MT_OP_logical_and, V(a), V(b))
#define OR(a, b) ag_f_bin(MT_OP_logical_or, V(a), V(b))
#define NEG(a) ag_f_neg(V(a))
#define F(op, a) ag_f_un(MT_OP_##op, V(a))
#define WHERE(c, a, b) ag_f_where(V(c), V(a), V(b))
#define LET(name, value, expr) ({ ag_v name = V(value); V(expr); })
#define FUSED(kind, v, expr) (ag_can_fuse(G, V(v)) ? ag_fused(G, V(v), kind) : V(expr))

/* What a formula reads (the registry's reads): bits of the saved inputs */
enum { NOTHING = 0, INPUT = 1, A = 1, B = 2, AB = 3, RESULT = 4, INPUT_RESULT = 5, INDICES = 8, C = 16, AC = 17,
       BC = 18, ABC = 19 };

#endif
