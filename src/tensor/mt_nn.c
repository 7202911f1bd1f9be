/* mt_nn.c: the registry's nn kernels (MT_NN_OPS in src/ops/registry.h): the
   entry point the dispatcher's table holds, expanded from the kernel column,
   and the normalisations' forward (statistics, then the affine map). The
   kernels themselves are in mt_conv.c, mt_pool.c, mt_resample.c and
   mt_norm.c; each hands a device's tensors to that device's kernels. */
#include "mt_ops.h"
#include "mt_pool.h"

int mt_nn_op(mt_tensor *r, mt_op op, const mt_nn_args *a) {
  switch (op) {
#define NN(call, binding, node) call
    MT_NN_OPS(MT_KERNEL_CASE, _)
#undef NN
  default: break;
  }
  return mt_not_in_family("mt_nn_op", op, "an nn kernel");
}

const mt_op mt_resample_ops[MT_RS_CIRCULAR + 1] = {
  [MT_RS_AVG_POOL] = MT_OP_avg_pool2d, [MT_RS_ADAPTIVE_AVG] = MT_OP_adaptive_avg_pool2d,
  [MT_RS_REFLECT] = MT_OP_reflection_pad2d, [MT_RS_REPLICATE] = MT_OP_replication_pad2d,
  [MT_RS_NEAREST] = MT_OP_upsample_nearest2d, [MT_RS_BILINEAR] = MT_OP_upsample_bilinear2d,
  [MT_RS_CIRCULAR] = MT_OP_circular_pad2d,
};

int mt_norm_forward(mt_tensor *y, const mt_nn_args *a) {
  const mt_norm_geom *g = a->norm;
  if (!a->aux) return mt_fail("%s: no tensor for the statistics", g->op);
  int rc;
  if (g->groups || a->flag)        /* group and layer norm, or batch norm training */
    rc = mt_norm_stats(a->aux, a->x, g, a->eps, a->running_mean, a->running_var, a->momentum);
  else if (!a->running_mean || !a->running_var)
    rc = mt_fail("%s: running_mean and running_var are required when training is false", g->op);
  else
    rc = mt_norm_running_stats(a->aux, a->running_mean, a->running_var, g, a->eps, a->x->dtype);
  return rc ? rc : mt_norm_apply(y, a->x, a->aux, a->w, a->b, g);
}
