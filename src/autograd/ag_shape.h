/* ag_shape.h: derivatives of the registry's views and rearrangements
   (narrow, select, permute, flip, roll, tril, repeat, as_strided, ...) and
   joins (cat, stack).
   Each mt_ag_record_* is called after the op computed r; it does nothing
   unless an input requires grad in grad mode. Dims are 0-based (negative
   ones are wrapped); indices count from base. */
#ifndef MT_AG_SHAPE_H
#define MT_AG_SHAPE_H

#include "ag.h"
#include "../tensor/mt_ops.h"

/* the dispatcher's hook for the view ops: r = op(x, a) */
int mt_ag_record_view_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a);
/* Whether n is the node of x:t() (the registry's view op t). */
int ag_is_t_view(const mt_node *n);
/* the dispatcher's hook for the joins: r = op(ts[0..n), dim) (cat, stack) */
int mt_ag_record_join(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim);

#endif
