/* ag_shape.h: derivatives of views, indexing and shape ops (narrow, select,
   permute, diagonal, unfold, as_strided, cat/stack, split, index_select,
   gather, x[idx], x[mask], masked_fill, where, repeat, flip, roll,
   tril/triu).
   Each mt_ag_record_* is called by a binding after the op computed r; it
   does nothing unless an input requires grad in grad mode. Dims are 0-based
   (negative ones are wrapped); indices count from base. */
#ifndef MT_AG_SHAPE_H
#define MT_AG_SHAPE_H

#include "ag.h"

int mt_ag_record_narrow(mt_tensor *r, const mt_tensor *x, int dim, int64_t start, int64_t len);
int mt_ag_record_select(mt_tensor *r, const mt_tensor *x, int dim, int64_t index);
int mt_ag_record_permute(mt_tensor *r, const mt_tensor *x, const int *dims);
int mt_ag_record_movedim(mt_tensor *r, const mt_tensor *x, const int *src, const int *dst, int n);
int mt_ag_record_diagonal(mt_tensor *r, const mt_tensor *x, int64_t offset, int d0, int d1);
int mt_ag_record_unfold(mt_tensor *r, const mt_tensor *x, int dim, int64_t size, int64_t step);
/* r = x:as_strided(size, stride, offset), offset in storage elements from
   0; refuses (an error) when x is not contiguous or the view reads outside
   x, where no gradient is defined. */
int mt_ag_record_as_strided(mt_tensor *r, const mt_tensor *x, int ndim, const int64_t *size,
                            const int64_t *stride, int64_t offset);
int mt_ag_record_flip(mt_tensor *r, const mt_tensor *x, const int *dims, int n);
int mt_ag_record_roll(mt_tensor *r, const mt_tensor *x, const int64_t *shifts, int ns, const int *dims, int nd);
int mt_ag_record_tri(mt_tensor *r, const mt_tensor *x, int64_t k, int upper);
int mt_ag_record_repeat(mt_tensor *r, const mt_tensor *x, const int64_t *reps, int n);
/* cat (stack = 0) or stack (1) of ts[0..n) along dim */
int mt_ag_record_cat(mt_tensor *r, const mt_tensor *const *ts, int n, int dim, int stack);
/* parts[i]: the narrow of x along dim holding sizes[i] entries */
int mt_ag_record_split(mt_tensor *const *parts, const mt_tensor *x, int dim, const int64_t *sizes, int64_t n);
int mt_ag_record_index_tensor(mt_tensor *r, const mt_tensor *x, const mt_tensor *index, int64_t base);
int mt_ag_record_index_mask(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask);
/* r = masked_fill(x, mask, value) out of place; value a tensor or NULL */
int mt_ag_record_masked_fill(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
int mt_ag_record_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b);

#endif
