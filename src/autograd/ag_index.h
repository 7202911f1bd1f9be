/* ag_index.h: derivatives of the ops that write into a copy of x at indices
   (scatter, scatter_add, index_add, index_copy, index_fill, masked_scatter)
   and of the ops that select values along a dim and return their indices
   (sort, topk, kthvalue, median, mode, max and min along a dim: called by
   the dispatcher). Each mt_ag_record_* is called after the op computed its
   result; it does nothing unless an input
   requires grad in grad mode and the result is floating. Dims are 0-based. */
#ifndef MT_AG_INDEX_H
#define MT_AG_INDEX_H

#include "ag.h"

typedef enum {
  MT_AG_SCATTER,         /* x:scatter(dim, index, src or number) */
  MT_AG_SCATTER_ADD,     /* x:scatter_add(dim, index, src), scatter {reduce='add'} */
  MT_AG_INDEX_ADD,       /* x:index_add(dim, index, src, {alpha=}) */
  MT_AG_INDEX_COPY,      /* x:index_copy(dim, index, src) */
  MT_AG_INDEX_FILL,      /* x:index_fill(dim, index, number or one-element tensor) */
  MT_AG_MASKED_SCATTER,  /* x:masked_scatter(mask, src): index is the mask, dim unused */
} mt_ag_put;

/* r = x with src (a tensor, or NULL for a number) written or added (alpha
   times, index_add) at index along dim, out of place; index counts from base. */
int mt_ag_record_put(mt_tensor *r, mt_ag_put kind, const mt_tensor *x, int dim, const mt_tensor *index,
                     const mt_tensor *src, double alpha, int64_t base);

/* values = the registry's selection op of x along dim (indices counting
   from base, values' shape, dim kept in values or dropped): the node of the
   op's derivative (the gradient goes back to those positions). */
/* r = the registry's index op (index_select, gather) of x along dim at
   index (counting from base): saves the index */
int mt_ag_record_index_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base);
int mt_ag_record_selection(mt_tensor *values, const mt_tensor *indices, const mt_tensor *x, mt_op op, int dim,
                        int64_t base);

#endif
