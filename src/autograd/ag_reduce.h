/* ag_reduce.h: derivatives of the reductions, scans and softmax. Each
   mt_ag_record_* is called by the binding right after the op computed r
   from x (only when x has autograd metadata); it does nothing unless x
   requires grad in grad mode and r is floating. */
#ifndef MT_AG_REDUCE_H
#define MT_AG_REDUCE_H

#include "ag.h"

/* softmax / log_softmax along dim (0-based, already checked); dtype is the
   dtype= option (-1: none). */
int mt_ag_record_softmax(mt_tensor *r, const mt_tensor *x, int dim, int take_log, int dtype);
/* logsumexp, amax/amin (and max()/min() over every element: mask
   MT_ALL_DIMS), prod over the dims in mask; dtype as mt_reduce's. */
int mt_ag_record_logsumexp(mt_tensor *r, const mt_tensor *x, uint32_t mask, int keepdim, int dtype);
int mt_ag_record_amax(mt_tensor *r, const mt_tensor *x, uint32_t mask, int keepdim, int is_min);
int mt_ag_record_prod(mt_tensor *r, const mt_tensor *x, uint32_t mask, int keepdim, int dtype);
/* median of every element (x:median()), a 0-dim r */
int mt_ag_record_median(mt_tensor *r, const mt_tensor *x);
/* max/min along dim: the gradient goes to the positions in indices (the
   1-based indices handed to Lua, shaped like values); indices get none. */
int mt_ag_record_max_dim(mt_tensor *values, const mt_tensor *indices, const mt_tensor *x, int dim,
                         int keepdim, int is_min);
int mt_ag_record_var(mt_tensor *r, const mt_tensor *x, uint32_t mask, double correction, int keepdim,
                     int take_sqrt);
int mt_ag_record_norm(mt_tensor *r, const mt_tensor *x, double p, uint32_t mask, int keepdim);
/* cumsum along dim (0-based); dtype as mt_cumulative's */
int mt_ag_record_cumsum(mt_tensor *r, const mt_tensor *x, int dim, int dtype);
int mt_ag_record_cumprod(mt_tensor *r, const mt_tensor *x, int dim, int dtype);

#endif
