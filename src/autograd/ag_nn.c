/* ag_nn.c: the one recorder of the nn kernels (see ag_nn.h), its table
   expanded from the registry's derivative column. */
#include <string.h>
#include "ag_nn.h"
#include "ag_expr.h"
#include "../ops/dispatch.h"

enum { READS_NOTHING, READS_INPUTS, READS_STATS };

typedef struct {
  const char *node;
  mt_backward_fn backward;      /* NULL: not differentiable */
  void (*pack)(mt_node *n, const mt_nn_args *a);
  int reads;
} nn_derivative;

enum { NN_FIRST = MT_OP_END_JOIN };

static const nn_derivative derivatives[MT_OP_END_NN - NN_FIRST] = {
#define NN(call, binding, node) #node
#define NODERIV NULL, NULL, READS_NOTHING
#define BACKWARD(kind) ag_##kind##_backward, ag_##kind##_pack
#define DERIV(reads, expr) expr, READS_##reads
#define ROW(name, kernel, E, deriv, ...) [MT_OP_##name - NN_FIRST] = {kernel, deriv},
  MT_NN_OPS(ROW, _)
#undef ROW
#undef DERIV
#undef BACKWARD
#undef NODERIV
#undef NN
};

int mt_ag_record_nn(mt_tensor *r, mt_op op, const mt_nn_args *a) {
  if (!mt_op_is_nn(op)) return mt_fail("mt_ag_record_nn: %s is not an nn kernel", mt_op_names[op]);
  const nn_derivative *d = &derivatives[op - NN_FIRST];
  const int arity = mt_op_infos[op].arity;
  const mt_tensor *in[3] = {a->x, a->w, arity > 2 ? a->b : NULL};
  if (!d->backward || !mt_dtype_is_float(r->dtype) || !mt_ag_grad_enabled()) return 0;
  int wanted = 0;
  for (int i = 0; i < arity; i++) wanted |= in[i] && mt_ag_requires_grad(in[i]);
  if (!wanted) return 0;
  mt_node *n = mt_ag_new_node_extra(d->node, d->backward, arity, in, AG_NN_WORDS);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  d->pack(n, a);
  if (d->reads != READS_NOTHING) {
    mt_ag_save(n, a->x, 0);
    if (a->w) mt_ag_save(n, a->w, 0);
    if (d->reads == READS_STATS) mt_ag_save(n, a->aux, 0);
  }
  return mt_ag_attach(r, n);
}
