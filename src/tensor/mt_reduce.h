/* mt_reduce.h: reductions over all elements or a set of dims, scans,
   softmax, sorting and selection along a dim, and whole-tensor comparisons. */
#ifndef MT_REDUCE_H
#define MT_REDUCE_H

#include "mt_tensor.h"
#include "mt_ops.h"

/* The dims to reduce, as a bit mask of 0-based dims (MT_MAX_DIMS fits in 32
   bits); MT_ALL_DIMS reduces every dim. A 0-dim tensor ignores the mask. */
#define MT_ALL_DIMS 0xffffffffu

/* r = the registry's reduction op (src/ops/registry.h: sum, mean, var,
   norm, ...) over the dims in mask. dtype >= 0 converts x to it first (the
   dtype= option of sum, mean, prod); -1 keeps x's dtype, or takes
   default_float for an op whose integer inputs become floats. param is the
   op's parameter: var's and std's correction (the divisor is max(0, n -
   correction)), norm's order p (0 counts nonzeros, +-inf is max/min |x|). */
int mt_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t dims, int keepdim, int dtype, double param,
              int default_float);

/* What mt_reduce checks and decides before it reduces, shared with a
   device's kernel: *in_dtype is the dtype x is converted to first (x's own
   when none), *out_dtype the result's. -1 with the op's error when it cannot
   run on x: a float op on integers, max/min over an empty dim (no
   identity), norm's p NaN, or infinite or negative over an empty dim. */
int mt_reduce_prepare(const mt_tensor *x, mt_op op, uint32_t dims, int dtype, double param, int default_float,
                      int *in_dtype, int *out_dtype);

/* r = the registry's op along dim (cumsum, cumprod, softmax, log_softmax:
   its entry's kernel call); dtype as theirs. */
int mt_along(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, int dtype);

/* max/min along one dim: values and 0-based int64 indices of the first
   extreme (NaN counts as the extreme, as in PyTorch). */
int mt_max_dim(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int keepdim,
               int is_min);
/* 0-based index of the max/min along dim, or of the flattened tensor when
   flatten is set (then the result is 0-dim, or all-ones with keepdim). */
int mt_argmax(mt_tensor *r, const mt_tensor *x, int dim, int flatten, int keepdim, int is_min);

/* Running sum or product along dim; ints and bool accumulate to int64
   unless dtype >= 0 gives the dtype to convert x to first. */
int mt_cumulative(mt_tensor *r, const mt_tensor *x, int dim, int is_prod, int dtype);

/* Softmax or log-softmax along dim, max-shifted; floating dtypes only
   (dtype >= 0 converts x first, as PyTorch's dtype= option). */
int mt_softmax(mt_tensor *r, const mt_tensor *x, int dim, int take_log, int dtype);

/* Stable sort along dim; NaN sorts above every number. Indices 0-based. */
int mt_sort(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int descending);
/* The k largest (or smallest) along dim, in sorted order. */
int mt_topk(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int64_t k, int dim,
            int largest);
/* The k-th smallest (k counts from 1) along dim. */
int mt_kthvalue(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int64_t k, int dim,
                int keepdim);
/* Lower median along dim, NaN if the slice holds one; with indices NULL,
   the median of all elements as a 0-dim tensor (dim and keepdim unused). */
int mt_median(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int keepdim);
/* Most frequent value along dim (the smallest among ties) and the last
   index where it occurs. */
int mt_mode(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, int keepdim);

/* The registry's selections by op (its entry's kernel call): values and
   0-based indices along dim; k is topk's and kthvalue's, flag sort's
   descending and topk's largest. */
int mt_selection(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, mt_op op, int64_t k, int dim, int keepdim,
              int flag);

#endif
