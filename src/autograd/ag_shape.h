/* ag_shape.h: derivatives of the registry's views and rearrangements
   (narrow, select, permute, flip, roll, tril, repeat, as_strided, ...) and
   joins (cat, stack), and of the index ops outside the registry yet
   (x[idx], x[mask], where).
   Each mt_ag_record_* is called after the op computed r; it does nothing
   unless an input requires grad in grad mode. Dims are 0-based (negative
   ones are wrapped); indices count from base. */
#ifndef MT_AG_SHAPE_H
#define MT_AG_SHAPE_H

#include "ag.h"
#include "../tensor/mt_ops.h"

/* the dispatcher's hook for the view ops: r = op(x, a) */
int mt_ag_record_view_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a);
/* the dispatcher's hook for the joins: r = op(ts[0..n), dim) (cat, stack) */
int mt_ag_record_join(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim);
int mt_ag_record_index_tensor(mt_tensor *r, const mt_tensor *x, const mt_tensor *index, int64_t base);
int mt_ag_record_index_mask(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask);
/* r = masked_fill(x, mask, value) out of place; value a tensor or NULL */
int mt_ag_record_masked_fill(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value);
int mt_ag_record_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b);

#endif
