/* ag_index.h: derivatives of the registry's selections, index ops and
   puts and masks (called by the dispatcher). Each
   mt_ag_record_* is called after the op computed its result; it does
   nothing unless an input requires grad in grad mode and the result is
   floating. Dims are 0-based. */
#ifndef MT_AG_INDEX_H
#define MT_AG_INDEX_H

#include "ag.h"

/* r = the registry's mask op (masked_fill, masked_scatter, masked_select)
   of x with mask and src (NULL: none): saves the mask */
int mt_ag_record_mask_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src);

/* values = the registry's selection op of x along dim (indices counting
   from base, values' shape, dim kept in values or dropped): the node of the
   op's derivative (the gradient goes back to those positions). */
/* r = the registry's index op (index_select, gather) of x along dim at
   index (counting from base): saves the index */
int mt_ag_record_index_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base);
/* r = the registry's put (index_add, scatter, ...) of src into x along dim at
   index (counting from base): saves the index */
int mt_ag_record_put_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index,
                        const mt_tensor *src, double alpha, int64_t base);
int mt_ag_record_selection(mt_tensor *values, const mt_tensor *indices, const mt_tensor *x, mt_op op, int dim,
                        int64_t base);

#endif
