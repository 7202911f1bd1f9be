/* mt_nn.c: the registry's nn kernels (MT_NN_OPS in src/ops/registry.h): the
   entry point the dispatcher's table holds, expanded from the kernel column,
   and the normalisations' forward (statistics, then the affine map). The
   kernels themselves are in mt_conv.c, mt_pool.c, mt_resample.c and
   mt_norm.c; each hands a device's tensors to that device's kernels. */
#include "mt_ops.h"
#include "mt_pool.h"

static int is_half(const mt_tensor *t) { return t && (t->dtype == MT_BFLOAT16 || t->dtype == MT_FLOAT16); }

/* bfloat16 and float16 (autocast's convolutions): computed in float32 on
   converted inputs, on their device, the float results stored back in the
   inputs' dtype (a max pooling's positions stay int64) */
static int nn_in_float32(mt_tensor *r, mt_op op, const mt_nn_args *a) {
  const int low = is_half(a->x) ? a->x->dtype : is_half(a->w) ? a->w->dtype : a->b->dtype;
  mt_tensor f[3] = {{0}}, out = {0}, aux = {0};
  const mt_tensor *in[3] = {a->x, a->w, a->b};
  int rc = 0;
  for (int i = 0; i < 3 && !rc; i++)
    if (is_half(in[i])) { rc = mt_to_dtype(&f[i], in[i], MT_FLOAT32); in[i] = &f[i]; }
  mt_nn_args c = *a;
  c.x = in[0];
  c.w = in[1];
  c.b = in[2];
  c.aux = a->aux ? &aux : NULL;
  if (!rc) rc = mt_nn_op(&out, op, &c);
  if (!rc) rc = out.dtype == MT_FLOAT32 ? mt_to_dtype(r, &out, low) : (mt_tensor_move(r, &out), 0);
  const int weight_grad = op == MT_OP_conv2d_weight || op == MT_OP_conv3d_weight;
  if (!rc && a->aux) rc = aux.dtype == MT_FLOAT32 && weight_grad ? mt_to_dtype(a->aux, &aux, low)
                                                                 : (mt_tensor_move(a->aux, &aux), 0);
  for (int i = 0; i < 3; i++) mt_tensor_release(&f[i]);
  mt_tensor_release(&out);
  mt_tensor_release(&aux);
  return rc;
}

/* the normalisations read and write bfloat16 and float16 inputs on the CPU themselves, with
   float32 statistics and parameters (mt_norm.c); a device's go through float32 as before */
static int norm_reads_half(mt_op op, const mt_nn_args *a) {
  return (op == MT_OP_batch_norm || op == MT_OP_group_norm || op == MT_OP_layer_norm) && !is_half(a->w) &&
         !is_half(a->b) && mt_device_of(a->x) == MT_CPU;
}

int mt_nn_op(mt_tensor *r, mt_op op, const mt_nn_args *a) {
  if (__builtin_expect(is_half(a->x) || is_half(a->w) || is_half(a->b), 0) && !norm_reads_half(op, a))
    return nn_in_float32(r, op, a);
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
