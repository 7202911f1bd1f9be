/* ag_expr.h: the recording ops derivative definitions are written with.
   Each computes like the engine op and, in grad mode, records it, so a
   create_graph backward builds a graph of its own. They return a fresh
   tensor; after the first failure (ag_failed set, mt_error() says why)
   every later call returns an empty tensor, so a derivative is written as
   straight-line code and checked once at the end with ag_done(). */
#ifndef MT_AG_EXPR_H
#define MT_AG_EXPR_H

#include "ag.h"

extern _Thread_local int ag_failed;

void ag_drop(mt_tensor *t);                      /* release, history included */
int ag_any_requires_grad(const mt_tensor *a, const mt_tensor *b);   /* in grad mode */

mt_tensor ag_binop(mt_op op, const mt_operand *a, const mt_operand *b);
mt_tensor ag_bin(mt_op op, const mt_tensor *a, const mt_tensor *b);
mt_tensor ag_bins(mt_op op, const mt_tensor *a, double s);           /* a op s */
mt_tensor ag_sbin(mt_op op, double s, const mt_tensor *b);           /* s op b */
mt_tensor ag_un(mt_op op, const mt_tensor *x);
mt_tensor ag_reshape(const mt_tensor *x, int ndim, const int64_t *shape);
mt_tensor ag_transpose(const mt_tensor *x, int d0, int d1);
mt_tensor ag_expand(const mt_tensor *x, int ndim, const int64_t *shape);
mt_tensor ag_sum(const mt_tensor *x, uint32_t mask, int keepdim);
/* a registry reduction (through the dispatcher, so recorded); param as mt_reduce's */
mt_tensor ag_reduce(mt_op op, const mt_tensor *x, uint32_t mask, int keepdim, double param);
mt_tensor ag_cast(const mt_tensor *x, int dtype);
/* g summed over the dims broadcasting added, back to (ndim, shape) */
mt_tensor ag_sum_to(const mt_tensor *g, int ndim, const int64_t *shape);

/* The gradient of input i in the input's shape and dtype; consumes g. */
void ag_finish(mt_node *n, int i, mt_tensor *g, mt_tensor *out);
/* 0, or -1 after a failure (clearing ag_failed) */
int ag_done(void);

/* ---- views and indexing as recording ops (defined in ag_shape.c) ---- */
mt_tensor ag_narrow(const mt_tensor *x, int dim, int64_t start, int64_t len);
/* zeros of (ndim, shape) holding x in its leading corner: narrow's adjoint */
mt_tensor ag_pad(const mt_tensor *x, int ndim, const int64_t *shape);
mt_tensor ag_flip(const mt_tensor *x, int dim);
mt_tensor ag_permute(const mt_tensor *x, const int *dims);
mt_tensor ag_cat(const mt_tensor *const *ts, int n, int dim);
/* where(cond, a, b), each operand a tensor or a number */
mt_tensor ag_where_ops(const mt_tensor *cond, const mt_operand *a, const mt_operand *b);
/* gather's adjoint: zeros of (ndim, shape) with x added at idx along dim */
mt_tensor ag_scatter_add_zeros(const mt_tensor *x, int dim, const mt_tensor *idx, int64_t base, int ndim,
                               const int64_t *shape);
/* index_select's adjoint: zeros of (ndim, shape) with x index_added along dim */
mt_tensor ag_index_add_zeros(const mt_tensor *x, int dim, const mt_tensor *idx, int64_t base, int ndim,
                             const int64_t *shape);
/* x[mask], mask of x's shape (1-D result) */
mt_tensor ag_index_mask(const mt_tensor *x, const mt_tensor *mask);
/* its adjoint: zeros of (ndim, shape) with x (one value per set element)
   placed where mask (of that shape) is set */
mt_tensor ag_index_mask_put_zeros(const mt_tensor *x, const mt_tensor *mask, int ndim, const int64_t *shape);

/* x in (ndim, shape), as many elements: an alias when it already has that
   shape, else a reshape (defined in ag_linalg.c) */
mt_tensor ag_as(const mt_tensor *x, int ndim, const int64_t *shape);

#endif
