/* ag_shape.h: derivatives of the registry's views and rearrangements
   (narrow, select, permute, flip, roll, tril, repeat, as_strided, ...), and
   of the shape and index ops outside the registry yet (cat/stack, split,
   x[idx], x[mask], where).
   Each mt_ag_record_* is called after the op computed r; it does nothing
   unless an input requires grad in grad mode. Dims are 0-based (negative
   ones are wrapped); indices count from base. */
#ifndef MT_AG_SHAPE_H
#define MT_AG_SHAPE_H

#include "ag.h"
#include "../tensor/mt_ops.h"

/* the dispatcher's hook for the view ops: r = op(x, a) */
int mt_ag_record_view_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a);
/* narrow and select recorded as the view ops (x[i], x[{...}]) */
int mt_ag_record_narrow(mt_tensor *r, const mt_tensor *x, int dim, int64_t start, int64_t len);
int mt_ag_record_select(mt_tensor *r, const mt_tensor *x, int dim, int64_t index);
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
