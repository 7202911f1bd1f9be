/* mt_pool.h: max pooling over NCHW batches -- fixed windows (max_pool2d,
   and max_pool3d over NCTHW ones) and adaptive ones -- and average pooling
   over NCTHW ones (avg_pool3d; the 2-D one is a resampling map) -- as the position of each window's maximum; the values
   (and their derivatives) are then a gather of x at those positions. Also
   the window arithmetic that average pooling (mt_resample.h) shares. */
#ifndef MT_POOL_H
#define MT_POOL_H

#include "mt_tensor.h"

/* Output length of a pooling window of k taps d apart, stride s, padding p
   on both sides, PyTorch's rule: ceil_mode rounds up, but the last window
   must start inside the input or the left padding. 0 when nothing fits, -1
   when the sizes overflow. */
int64_t mt_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode);

/* Adaptive pooling's window [lo, hi) for output o of out over in: from
   floor(o * in / out) to ceil((o + 1) * in / out), as PyTorch's. */
static inline void mt_adaptive_window(int64_t o, int64_t in, int64_t out, int64_t *lo, int64_t *hi) {
  *lo = o * in / out;
  *hi = ((o + 1) * in + out - 1) / out;
}

/* idx (n, c, oh, ow), int64: for each window of x (n, c, h, w) -- kernel
   k, stride s, padding p (implicit -inf), dilation d, each {h, w} -- the
   position of its first maximum in the h * w plane, counted from base; a
   NaN wins. ceil_mode rounds the output size up, as PyTorch's. */
int mt_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base);

/* idx (n, c, ot, oh, ow), int64: max_pool2d's positions over volumes, x
   (n, c, t, h, w), k, s, p and d each {t, h, w}: the position of each
   window's first maximum in (t, h, w) order in the t * h * w volume, counted
   from base. */
int mt_max_pool3d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base);

/* r (n, c, ot, oh, ow): the window means of x (n, c, t, h, w), pool kernel,
   stride, padding (each t, h, w; dilation 1) and flags MT_RS_CEIL_MODE,
   MT_RS_COUNT_PAD (the divisor counts the padding, never what ceil_mode
   adds past it) and MT_RS_SUM (the window sums), as PyTorch's avg_pool3d.
   With in_volume (t, h, w), the adjoint (its backward): x (n, c, ot, oh,
   ow) -> r (n, c, t, h, w). float32 and float64. */
int mt_avg_pool3d(mt_tensor *r, const mt_tensor *x, const int64_t *pool, int flags, const int64_t *in_volume);

/* The checks and sizes the kernels of every device share (their messages
   name op): x is an (n, c, h, w) batch (nd 2) or an (n, c, t, h, w) one
   (nd 3) of float32 or float64; max pooling's parameters (nd values each)
   are valid and out (nd values) its output size; avg_pool3d's pool (kernel,
   stride, padding) and flags as mt_avg_pool3d's, in and out (3 values each)
   the input and the pooled volume, with in_volume the adjoint's. */
int mt_pool_check_input(const mt_tensor *x, int nd, const char *op);
int mt_max_pool_plan(const mt_tensor *x, int nd, const int64_t *k, const int64_t *s, const int64_t *p,
                     const int64_t *d, int ceil_mode, const char *op, int64_t *out);
int mt_avg_pool3d_plan(const mt_tensor *x, const int64_t *pool, int flags, const int64_t *in_volume, const char *op,
                       int64_t *in, int64_t *out);

/* idx (n, c, out[0], out[1]), int64: the same for adaptive max pooling of
   x (n, c, h, w) to an output plane out (mt_adaptive_window's windows). */
int mt_adaptive_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *out, int64_t base);

#endif
