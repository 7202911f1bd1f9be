/* mt_norm.h: fused normalisation kernels: batch norm and group norm (layer
   norm and instance norm are group norms of particular shapes), each a
   statistics pass, an affine pass and a closed-form backward. Inputs are
   float32, float64, bfloat16 or float16; the statistics, weight, bias, running
   statistics and their gradients are in the input's "parameter dtype": its
   own for float32 and float64, float32 for the 16-bit ones (computed in
   float, y and gx stored in the input's dtype). */
#ifndef MT_NORM_H
#define MT_NORM_H

#include "mt_tensor.h"

/* x's elements seen as (n, c, s): batch norm takes statistics per channel
   over n and s; group norm per sample and group of c / groups channels,
   over those channels and s. Weight and bias are per channel either way. */
typedef struct {
  const char *op;          /* for errors: "batch_norm", "group_norm", ... */
  int64_t n, c, s;
  int64_t groups;          /* 0: batch norm */
} mt_norm_geom;

/* How many statistics there are: c for batch norm, n * groups for group norm. */
static inline int64_t mt_norm_count(const mt_norm_geom *g) { return g->groups ? g->n * g->groups : g->c; }

/* stats (2, count), the parameter dtype: row 1 the means, row 2 1 / sqrt(var + eps)
   with the biased variance, accumulated in double. Batch norm only: when
   given, running_mean and running_var (c) move in place towards the batch's
   mean and unbiased variance, r = (1 - momentum) * r + momentum * stat. */
int mt_norm_stats(mt_tensor *stats, const mt_tensor *x, const mt_norm_geom *g, double eps,
                  mt_tensor *running_mean, mt_tensor *running_var, double momentum);

/* stats (2, c) from running_mean and running_var (c), which must be of the
   parameter dtype of an input of dtype: batch norm in eval mode */
int mt_norm_running_stats(mt_tensor *stats, const mt_tensor *running_mean, const mt_tensor *running_var,
                          const mt_norm_geom *g, double eps, int dtype);

/* y (x's shape) = (x - mean) * invstd * w + b; w and b (c elements) may be NULL */
int mt_norm_apply(mt_tensor *y, const mt_tensor *x, const mt_tensor *stats, const mt_tensor *w,
                  const mt_tensor *b, const mt_norm_geom *g);

/* From gy (x's shape): gx (x's shape), gw and gb (c); a NULL one is not
   computed. fixed_stats: the statistics are constants (eval mode), not
   functions of x. */
int mt_norm_backward(mt_tensor *gx, mt_tensor *gw, mt_tensor *gb, const mt_tensor *gy, const mt_tensor *x,
                     const mt_tensor *stats, const mt_tensor *w, const mt_norm_geom *g, int fixed_stats);

#endif
