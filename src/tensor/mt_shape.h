/* mt_shape.h: ops that rearrange elements without computing on them --
   cat, stack, split, flatten, repeat, flip, roll, tril/triu, movedim.
   Dims are 0-based; a negative dim counts from the end. */
#ifndef MT_SHAPE_H
#define MT_SHAPE_H

#include "mt_tensor.h"

/* Concatenates ts[0..n) along dim into r, in their promoted dtype. 1-D
   empty tensors are skipped, as in PyTorch. */
int mt_cat(mt_tensor *r, const mt_tensor *const *ts, int n, int dim);
/* Joins same-shaped tensors along a new dim (0..ndim). */
int mt_stack(mt_tensor *r, const mt_tensor *const *ts, int n, int dim);

/* Part sizes for split(split_size) and chunk(chunks) along dim: writes at
   most max entries into sizes (may be NULL to count) and returns how many
   parts there are, or -1. */
int64_t mt_split_sizes(const mt_tensor *t, int dim, int64_t split_size, int64_t *sizes, int64_t max);
int64_t mt_chunk_sizes(const mt_tensor *t, int dim, int64_t chunks, int64_t *sizes, int64_t max);
/* 0 when sizes[0..n) are parts of t along dim (they sum to its length),
   else -1 with the error */
int mt_split_check(const mt_tensor *t, int dim, const int64_t *sizes, int64_t n);
/* parts[i] becomes the view of t holding sizes[i] entries of dim; the sizes
   must sum to the dim's length. */
int mt_split_with_sizes(mt_tensor *const *parts, const mt_tensor *t, int dim,
                        const int64_t *sizes, int64_t n);

/* Merges dims start..end into one: a view when the layout allows, else a
   copy. A 0-dim tensor becomes 1-D. */
int mt_flatten(mt_tensor *r, const mt_tensor *t, int start, int end);
/* Splits dim into sizes[0..n) (one entry may be -1): always a view. */
int mt_unflatten(mt_tensor *r, const mt_tensor *t, int dim, const int64_t *sizes, int n);
/* Tiles t reps[i] times along dim i; n >= t->ndim, new dims lead. */
int mt_repeat(mt_tensor *r, const mt_tensor *t, const int64_t *reps, int n);
/* Reverses the listed dims (a copy, as in PyTorch). */
int mt_flip(mt_tensor *r, const mt_tensor *t, const int *dims, int n);
/* Rotates by shifts[i] along dims[i]; with no dims (n_dims 0) the
   flattened tensor rotates by shifts[0]. */
int mt_roll(mt_tensor *r, const mt_tensor *t, const int64_t *shifts, int n_shifts,
            const int *dims, int n_dims);
/* Lower (upper = 0) or upper triangle of the last two dims, relative to
   diagonal k; with inplace r is t. */
int mt_tri(mt_tensor *r, const mt_tensor *t, int64_t k, int upper, int inplace);
/* Moves dims src[i] to positions dst[i]; the others keep their order. A
   view. */
int mt_movedim(mt_tensor *r, const mt_tensor *t, const int *src, const int *dst, int n);

#endif
