/* mt_resample.h: the linear maps of a tensor's last two dims (h, w) that
   act on each dim separately -- average pooling, adaptive average pooling,
   reflect, replicate and circular padding, nearest and bilinear interpolation -- and
   their adjoints, which are their backward passes. */
#ifndef MT_RESAMPLE_H
#define MT_RESAMPLE_H

#include "mt_tensor.h"

typedef enum {
  MT_RS_AVG_POOL,          /* a: kernel, b: stride, c: padding; flags CEIL_MODE, COUNT_PAD */
  MT_RS_ADAPTIVE_AVG,      /* a: output size */
  MT_RS_REFLECT,           /* b: padding before, c: padding after */
  MT_RS_REPLICATE,         /* b, c: as reflect */
  MT_RS_NEAREST,           /* a: output size; scale_factor */
  MT_RS_BILINEAR,          /* a: output size; scale_factor; flag ALIGN_CORNERS */
  MT_RS_CIRCULAR,          /* b, c: as reflect; negative ones crop, then the rest wraps around */
} mt_resample_kind;

/* SUM: average pooling's window sums, weight 1 per tap (a divisor_override divides after) */
enum { MT_RS_CEIL_MODE = 1, MT_RS_COUNT_PAD = 2, MT_RS_ALIGN_CORNERS = 4, MT_RS_SUM = 8 };

/* One map; a, b, c and scale_factor hold one value for h and one for w. */
typedef struct {
  int kind;
  int flags;
  int64_t a[2], b[2], c[2];
  double scale_factor[2];  /* interpolation: PyTorch's scale_factor (the input step per output step is
                              its inverse), 0 when only the output size was given (the step is in / out) */
} mt_resample;

/* out (h, w): the output plane of rs on an input plane in (h, w); checks the
   parameters, failing with the op's name (avg_pool2d, pad, interpolate, ...). */
int mt_resample_size(const mt_resample *rs, const int64_t *in, int64_t *out);

/* r = rs(x) over x's last two dims: x (*, h, w) -> r (*, oh, ow). With
   adjoint, rs's transpose for the input plane in (h, w) (rs's backward):
   x (*, oh, ow) -> r (*, h, w); in is unused otherwise. float32, float64. */
int mt_resample_apply(mt_tensor *r, const mt_tensor *x, const mt_resample *rs, int adjoint, const int64_t *in);

#endif
