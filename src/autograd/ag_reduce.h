/* ag_reduce.h: derivatives of the reductions, scans and softmax. Each
   mt_ag_record_* is called right after the op computed r from x (by the
   dispatcher for the registry's ops, by the binding for median of every
   element; only when x has autograd metadata); it does nothing unless x
   requires grad in grad mode and r is floating. */
#ifndef MT_AG_REDUCE_H
#define MT_AG_REDUCE_H

#include "ag.h"

/* r = op(x) over the dims in mask, op one of the registry's reductions
   (src/ops/registry.h): its derivative is the entry's. The dispatcher
   calls it (mt_call_reduce). */
int mt_ag_record_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, double param);
/* r = op(x) along dim (0-based), op one of the registry's ops along a dim */
int mt_ag_record_along(mt_tensor *r, const mt_tensor *x, mt_op op, int dim);
#endif
