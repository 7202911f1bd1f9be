/* mt_index.h: indexing with tensors -- index_select/add/copy/fill, gather and
   scatter, masks (masked_fill/select/scatter, x[mask]), x[idx] and nonzero.
   torch.where is mt_where, declared with the elementwise ops in mt_ops.h.

   Index tensors are int64 or int32. Their values count from `base`: 0 for C
   callers, 1 for the Lua bindings (Torch7's 1-based indices); a negative
   value counts from the end (-1 is the last) whatever the base. Every index
   is checked before anything is read or written: an out-of-range one fails
   the op naming the value as given and the 1-based dim.

   Masks are bool or uint8. uint8 masks keep Torch7's ByteTensor meaning
   (nonzero selects) instead of PyTorch's error: Torch7 code masks with
   ByteTensors everywhere, and a uint8 tensor is never an index tensor here.

   Fill values are one-element tensors of any dtype (the bindings wrap Lua
   numbers without allocating); integers stay exact into integer tensors. */
#ifndef MT_INDEX_H
#define MT_INDEX_H

#include "mt_tensor.h"

/* r = x with dim replaced by index's entries (index 0-D or 1-D). */
int mt_index_select(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base);
/* In place on x along dim, src's slice j going to x's slice index[j]:
   x += alpha * src (index_add_), x = src (index_copy_), x = value
   (index_fill_). src has x's shape but numel(index) in dim, and x's dtype.
   With repeated indices index_copy_ keeps the last. */
int mt_index_add(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, double alpha,
                 int64_t base);
int mt_index_copy(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int64_t base);
int mt_index_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int64_t base);

/* r[p] = x[p with entry dim replaced by index[p]]; r has index's shape. */
int mt_gather(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base);
/* x[p with entry dim replaced by index[p]] = src[p] (or += alpha * src[p]
   with add, or = value); src has x's dtype and at least index's sizes. */
int mt_scatter(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int add,
               int64_t base);
int mt_scatter_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int add,
                    int64_t base);

/* x[mask] (PyTorch): mask's shape equals x's leading dims; r is
   count x (x's remaining dims), in row-major order of the mask. */
int mt_index_mask(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask);
/* x[mask] = value: value (any dtype, converted) broadcasts to the shape
   x[mask] has. */
int mt_index_mask_put(mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
/* x[key], as index_select's arguments: key an index tensor (int64 or
   int32, indices counting from base) or a bool or uint8 mask over x's
   leading dims. flat receives the 1-D int64 rows to select (counting from
   *flat_base) of x with its first *lead dims merged into one (0: x with a
   new leading dim of size 1), and (nd, shape) the result's shape. */
int mt_index_key(const mt_tensor *x, const mt_tensor *key, int64_t base, mt_tensor *flat, int64_t *flat_base,
                 int *lead, int *nd, int64_t *shape);
/* x[index] (PyTorch, one index tensor on dim 0): index's shape followed by
   x's remaining dims. */
int mt_index_tensor(mt_tensor *r, const mt_tensor *x, const mt_tensor *index, int64_t base);
/* 0, or -1 with the error named op: mask (bool or uint8) does not cover
   x's leading dims exactly, as x[mask] needs. */
int mt_index_check_mask(const char *op, const mt_tensor *x, const mt_tensor *mask);

/* mask broadcasts to x's shape (masked_fill_), or both to a common shape
   (masked_fill out of place: r zeroed, x unchanged). */
int mt_masked_fill(mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
int mt_masked_fill_out(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
/* 1-D: x's elements where the mask is set, both broadcast together. */
int mt_masked_select(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask);
/* x's masked elements take src's first elements in row-major order. */
int mt_masked_scatter(mt_tensor *x, const mt_tensor *mask, const mt_tensor *src);

/* r: N x ndim int64, the indices (plus base) of x's nonzero elements in
   row-major order; NaN counts as nonzero, -0.0 as zero. */
int mt_nonzero(mt_tensor *r, const mt_tensor *x, int64_t base);

#endif
