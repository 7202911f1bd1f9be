/* ag_index.c: derivatives of the registry's selections (sort, topk,
   kthvalue, median, mode, max and min along a dim), index ops (index_select,
   gather), puts (index_add/copy/fill, scatter, scatter_add) and masks
   (masked_fill, masked_scatter, masked_select), each the derivative column
   of its entry (src/ops/registry.h), written with recording ops so that
   create_graph gives higher-order gradients.

   A put's x gets g where nothing was written (g with the written places
   zeroed by the same op, which is its own adjoint) or all of g where src was
   added; its src reads g back where src went (gather, index_select), padded
   with zeros where src was not used. */
#include <string.h>
#include "ag.h"
#include "ag_expr.h"
#include "ag_formula.h"
#include "ag_index.h"
#include "../ops/dispatch.h"
#include "../tensor/mt_index.h"

/* ---- masks ---- */

/* src's gradient: g where the mask is set, in order, then zeros for the
   elements of src left unused */
static mt_tensor masked_source_grad(const mt_tensor *g, const mt_tensor *mask, int ndim, const int64_t *shape) {
  mt_tensor m = {0}, r = {0};
  if (ag_failed || mt_expand(&m, mask, g->ndim, g->shape)) { ag_failed = 1; return r; }
  int64_t count = 1;
  for (int d = 0; d < ndim; d++) count *= shape[d];
  mt_tensor taken = ag_index_mask(g, &m);
  mt_tensor flat = ag_pad(&taken, 1, &count);
  r = ag_as(&flat, ndim, shape);
  mt_tensor_release(&m);
  ag_drop(&taken); ag_drop(&flat);
  return r;
}

/* ---- the registry's selections (values selected along a dim): the
   derivative column expanded. Node fields: dims[0] = dim, keepdim (the
   values keep dim: sort, topk, keepdim=true), scalar = the indices' base;
   saved 0 = the indices. ---- */

/* a word of the index families given a number: the formula's failure */
static ag_v f_of_number(const mt_node *n, const char *word) {
  ag_failed = 1;
  mt_fail("%s: %s of a number", n->name, word);
  return agv_t(&ag_failed_value);
}

/* t (values-shaped) placed at the indices along dim in zeros of x's shape
   (the indices are distinct within a slice, so adding is placing) */
static ag_v f_at_indices(const mt_node *n, ag_v t, const mt_tensor *idx) {
  if (!t.t || !idx) return f_of_number(n, "AT_INDICES");
  int nd = n->in_ndim[0], dim = n->dims[0];
  mt_tensor d = {0};
  if (nd == 0) {                                 /* a 0-dim x is its own only value */
    mt_ag_alias(&d, t.t);
    return ag_keep(d);
  }
  mt_tensor gk = {0}, ik = {0};
  if (n->keepdim) {
    mt_ag_alias(&gk, t.t);
    mt_tensor_alias(&ik, idx);
  } else {                                       /* put the dim back, as size 1 */
    int64_t kept[MT_MAX_DIMS];
    memcpy(kept, n->in_shape[0], sizeof(int64_t) * (size_t)nd);
    kept[dim] = 1;
    gk = ag_reshape(t.t, nd, kept);
    if (!ag_failed && mt_reshape(&ik, idx, nd, kept)) ag_failed = 1;
  }
  if (!ag_failed) d = ag_scatter_add_zeros(&gk, dim, &ik, (int64_t)n->scalar, nd, n->in_shape[0]);
  ag_drop(&gk);
  mt_tensor_release(&ik);
  return ag_keep(d);
}

#define NODERIV NOTHING
#define DERIV(reads, expr) reads
#define OPC(name, kernel, E, deriv, ...) [MT_OP_##name - MT_OP_END_ALONG] = deriv,
static const unsigned char select_reads[MT_OP_END_SELECT - MT_OP_END_ALONG] = {MT_SELECT_OPS(OPC, _)};
#undef OPC
#undef DERIV
#undef NODERIV

static int select_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *idx = NULL;
  if ((select_reads[n->op - MT_OP_END_ALONG] & INDICES) && mt_ag_saved(n, 0, &idx)) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  const ag_v G = V(grad);
#define AT_INDICES(t) f_at_indices(n, V(t), idx)
#define DERIV(reads, expr) ag_formula_finish(n, 0, V(expr), mark, &gi[0])
#define NODERIV (ag_failed = 1, mt_fail("%s: no derivative", n->name))   /* never recorded */
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_SELECT_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef NODERIV
#undef DERIV
#undef AT_INDICES
  ag_release_scratch(mark);
  return ag_done();
}

int mt_ag_record_selection(mt_tensor *values, const mt_tensor *indices, const mt_tensor *x, mt_op op, int dim,
                        int64_t base) {
  if (!mt_op_infos[op].differentiable || !ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(values->dtype))
    return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(ag_backward_name(op), select_backward, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->dims[0] = x->ndim && dim < 0 ? dim + x->ndim : dim;
  n->keepdim = values->ndim == x->ndim;
  n->scalar = (double)base;
  if (select_reads[op - MT_OP_END_ALONG] & INDICES) mt_ag_save(n, indices, 0);
  return mt_ag_attach(values, n);
}

/* ---- the registry's index ops (index_select, gather): the derivative
   column expanded, in G, with INDEX_ADD and SCATTER_ADD (G added into
   zeros of the input's shape at the saved index); dims[0] the dim,
   scalar the base ---- */
static ag_v f_index_add(const mt_node *n, ag_v g, const mt_tensor *idx, int scatter) {
  if (!g.t || !idx) return f_of_number(n, scatter ? "SCATTER_ADD" : "INDEX_ADD");
  int64_t base = (int64_t)n->scalar;
  return ag_keep(scatter ? ag_scatter_add_zeros(g.t, n->dims[0], idx, base, n->in_ndim[0], n->in_shape[0])
                         : ag_index_add_zeros(g.t, n->dims[0], idx, base, n->in_ndim[0], n->in_shape[0]));
}

static int index_op_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *idx = NULL;
  if (mt_ag_saved(n, 0, &idx)) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  const ag_v G = V(grad);
#define INDEX_ADD(t) f_index_add(n, V(t), idx, 0)
#define SCATTER_ADD(t) f_index_add(n, V(t), idx, 1)
#define DERIV(reads, expr) ag_formula_finish(n, 0, V(expr), mark, &gi[0])
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_INDEX_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV
#undef SCATTER_ADD
#undef INDEX_ADD
  ag_release_scratch(mark);
  return ag_done();
}

int mt_ag_record_index_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base) {
  if (!mt_op_is_index(op) || !ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(ag_backward_name(op), index_op_backward, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->dims[0] = x->ndim && dim < 0 ? dim + x->ndim : dim;
  n->scalar = (double)base;
  mt_ag_save(n, index, 0);
  return mt_ag_attach(r, n);
}

/* ---- the registry's puts (index_add, index_copy, index_fill, scatter,
   scatter_add): the derivative column expanded, in G and ALPHA, with
   ZERO_AT, INDEX_SELECT and GATHER; dims[0] the dim, scalar the base,
   scalar2 alpha; saved 0: the index ---- */

/* t with the places the node's op writes set to 0: index_fill or
   scatter_fill with 0, through the dispatcher (recorded, self-adjoint) */
static ag_v f_zero_at(const mt_node *n, ag_v t, const mt_tensor *idx) {
  if (!t.t) return f_of_number(n, "ZERO_AT");
  mt_tensor zero = {0}, r = {0};
  int scatter = n->op == MT_OP_scatter || n->op == MT_OP_scatter_fill || n->op == MT_OP_scatter_add;
  if (ag_failed || mt_tensor_init_like(&zero, t.t->dtype, 0, NULL, t.t) || mt_fill(&zero, 0) ||
      mt_call_put(&r, (mt_tensor *)t.t, scatter ? MT_OP_scatter_fill : MT_OP_index_fill, n->dims[0], idx, &zero, 1,
                  (int64_t)n->scalar, 0)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  mt_tensor_release(&zero);
  return ag_keep(r);
}

/* t read back at the index (index_select, or gather), in the source's shape */
static ag_v f_read_back(const mt_node *n, ag_v t, const mt_tensor *idx, int elementwise) {
  if (!t.t) return f_of_number(n, elementwise ? "GATHER" : "INDEX_SELECT");
  mt_tensor r = {0};
  if (ag_failed || mt_call_index(&r, t.t, elementwise ? MT_OP_gather : MT_OP_index_select, n->dims[0], idx,
                                 (int64_t)n->scalar)) {
    ag_drop(&r);
    ag_failed = 1;
    return ag_keep(r);
  }
  /* scatter's source may be larger than its index; index_add's may be a 0-dim source of a 0-dim x */
  mt_tensor out = elementwise ? ag_pad(&r, n->in_ndim[1], n->in_shape[1]) : ag_as(&r, n->in_ndim[1], n->in_shape[1]);
  ag_drop(&r);
  return ag_keep(out);
}

static int put_op_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *idx = NULL;
  if (mt_ag_saved(n, 0, &idx)) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  const ag_v G = V(grad);
  const double ALPHA = n->scalar2;
  (void)ALPHA;
#define ZERO_AT(t) f_zero_at(n, V(t), idx)
#define INDEX_SELECT(t) f_read_back(n, V(t), idx, 0)
#define GATHER(t) f_read_back(n, V(t), idx, 1)
#define DERIV2(rx, ex, rs, es)                                                                        \
  if (n->next[0].node) ag_formula_finish(n, 0, V(ex), mark, &gi[0]);                                \
  if (n->next[1].node) ag_formula_finish(n, 1, V(es), mark, &gi[1])
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_PUT_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV2
#undef GATHER
#undef INDEX_SELECT
#undef ZERO_AT
  ag_release_scratch(mark);
  return ag_done();
}

int mt_ag_record_put_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index,
                        const mt_tensor *src, double alpha, int64_t base) {
  if (!mt_op_is_put(op) || !ag_any_requires_grad(x, src) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[2] = {x, src};
  mt_node *n = mt_ag_new_node(ag_backward_name(op), put_op_backward, 2, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->dims[0] = x->ndim && dim < 0 ? dim + x->ndim : dim;
  n->scalar = (double)base;
  n->scalar2 = alpha;
  mt_ag_save(n, index, 0);
  return mt_ag_attach(r, n);
}

/* ---- the registry's mask ops (masked_fill, masked_scatter, masked_select):
   the derivative column expanded, in G and M (the saved mask), with
   MASK_PUT and MASKED_SOURCE; edges x and the source (a value's 0-dim
   tensor; none for masked_select) ---- */
static ag_v f_mask_put(const mt_node *n, ag_v t, const mt_tensor *mask) {
  if (!t.t) return f_of_number(n, "MASK_PUT");
  int nd;
  int64_t shape[MT_MAX_DIMS];
  mt_tensor me = {0}, r = {0};
  if (ag_failed || mt_broadcast_shapes(n->name, n->in_ndim[0], n->in_shape[0], mask->ndim, mask->shape, &nd, shape) ||
      mt_expand(&me, mask, nd, shape)) {
    ag_failed = 1;
    return agv_t(&ag_failed_value);
  }
  r = ag_index_mask_put_zeros(t.t, &me, nd, shape);
  mt_tensor_release(&me);
  return ag_keep(r);
}

static ag_v f_masked_source(const mt_node *n, ag_v t, const mt_tensor *mask) {
  if (!t.t) return f_of_number(n, "MASKED_SOURCE");
  return ag_keep(masked_source_grad(t.t, mask, n->in_ndim[1], n->in_shape[1]));
}

static int mask_op_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *mask = NULL;
  if (mt_ag_saved(n, 0, &mask)) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  const ag_v G = V(grad), M = V(mask);
  (void)M;
#define MASK_PUT(t) f_mask_put(n, V(t), mask)
#define MASKED_SOURCE(t) f_masked_source(n, V(t), mask)
#define DERIV(r, e) if (n->next[0].node) ag_formula_finish(n, 0, V(e), mark, &gi[0]);
#define DERIV2(rx, ex, rs, es)                                                                        \
  if (n->next[0].node) ag_formula_finish(n, 0, V(ex), mark, &gi[0]);                                \
  if (n->next[1].node) ag_formula_finish(n, 1, V(es), mark, &gi[1]);
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv break;
  switch ((mt_op)n->op) {
    MT_MASK_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV2
#undef DERIV
#undef MASKED_SOURCE
#undef MASK_PUT
  ag_release_scratch(mark);
  return ag_done();
}

int mt_ag_record_mask_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src) {
  if (!mt_op_is_mask(op) || !ag_any_requires_grad(x, src) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[2] = {x, src};
  mt_node *n = mt_ag_new_node(ag_backward_name(op), mask_op_backward, mt_op_infos[op].arity, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  mt_ag_save(n, mask, 0);
  return mt_ag_attach(r, n);
}
