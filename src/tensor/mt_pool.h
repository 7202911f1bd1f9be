/* mt_pool.h: pooling kernels over NCHW batches. max_pool2d gives the
   position of each window's maximum; the values (and their derivatives)
   are then a gather of x at those positions. */
#ifndef MT_POOL_H
#define MT_POOL_H

#include "mt_tensor.h"

/* idx (n, c, oh, ow), int64: for each window of x (n, c, h, w) -- kernel
   k, stride s, padding p (implicit -inf), dilation d, each {h, w} -- the
   position of its first maximum in the h * w plane, counted from base; a
   NaN wins. ceil_mode rounds the output size up, as PyTorch's. */
int mt_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base);

#endif
