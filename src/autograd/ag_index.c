/* ag_index.c: derivatives of the ops that write into a copy of x at indices
   (scatter family, index_add/copy/fill, masked_scatter) and of the
   registry's selections (sort, topk, kthvalue, median, mode, max and min
   along a dim: the derivative in their entry, src/ops/registry.h), written
   with recording ops so that create_graph gives higher-order gradients.

   x's gradient is g where nothing was written (g with the written places
   zeroed by the same op, which is its own adjoint) or all of g where src was
   added; src's gradient reads g back where src went (gather, index_select,
   x[mask]), padded with zeros where src was not used. */
#include <string.h>
#include "ag.h"
#include "ag_expr.h"
#include "ag_formula.h"
#include "ag_index.h"
#include "../ops/dispatch.h"
#include "../tensor/mt_index.h"

/* ---- the put family: node op = kind, dims[0] = dim, dims[1] = base,
   scalar = alpha, saved 0 = the index (or mask); edges x, src ---- */
static const char *const put_names[] = {
  "ScatterBackward", "ScatterAddBackward", "IndexAddBackward", "IndexCopyBackward", "IndexFillBackward",
  "MaskedScatterBackward"};

static int put_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi);

static mt_node *put_node(mt_ag_put kind, const mt_tensor *x, int dim, const mt_tensor *index,
                         const mt_tensor *src, double alpha, int64_t base) {
  const mt_tensor *in[2] = {x, src};
  mt_node *n = mt_ag_new_node(put_names[kind], put_backward, 2, in);
  if (!n) { mt_fail("%s: out of memory recording the graph", put_names[kind]); return NULL; }
  n->op = kind;
  n->dims[0] = x->ndim && dim < 0 ? dim + x->ndim : dim;
  n->dims[1] = (int)base;
  n->scalar = alpha;
  mt_ag_save(n, index, 0);
  return n;
}

int mt_ag_record_put(mt_tensor *r, mt_ag_put kind, const mt_tensor *x, int dim, const mt_tensor *index,
                     const mt_tensor *src, double alpha, int64_t base) {
  if (!ag_any_requires_grad(x, src) || !mt_dtype_is_float(r->dtype)) return 0;
  mt_node *n = put_node(kind, x, dim, index, src, alpha, base);
  return n ? mt_ag_attach(r, n) : -1;
}

/* x with the places kind writes (scatter or index_fill) set to 0, recorded
   as that op with a number: linear in x and its own adjoint */
static mt_tensor ag_zero_at(mt_ag_put kind, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base) {
  mt_tensor r = {0}, zero;
  mt_storage zs;
  char zbuf[8] = {0};                            /* float64 0 */
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  mt_scalar_view(&zero, &zs, zbuf, MT_FLOAT64, 0, NULL);
  int rc = mt_clone(&r, x);
  if (!rc) rc = kind == MT_AG_SCATTER ? mt_scatter_fill(&r, dim, index, &zero, 0, base)
                                      : mt_index_fill(&r, dim, index, &zero, base);
  if (!rc) rc = mt_ag_record_put(&r, kind, x, dim, index, NULL, 1, base);
  if (rc) { ag_drop(&r); ag_failed = 1; }
  return r;
}

/* src's gradient for masked_scatter: g where the mask is set, in order,
   then zeros for the elements of src left unused */
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

static int put_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *idx;
  if (mt_ag_saved(n, 0, &idx)) return -1;
  ag_failed = 0;
  mt_ag_put kind = (mt_ag_put)n->op;
  int dim = n->dims[0], want_x = n->next[0].node != NULL, want_src = n->next[1].node != NULL;
  int64_t base = n->dims[1];
  mt_tensor dx = {0}, ds = {0}, t = {0};
  /* x: all of g where src was added, else g with the written places zeroed
     (index_fill's value needs that too) */
  if (kind == MT_AG_SCATTER_ADD || kind == MT_AG_INDEX_ADD) {
    if (want_x) mt_ag_alias(&dx, g);
  } else if (kind == MT_AG_MASKED_SCATTER) {
    mt_operand zero = {NULL, 0, 0}, og = {g, 0, 0};
    if (want_x) dx = ag_where_ops(idx, &zero, &og);
  } else if (want_x || kind == MT_AG_INDEX_FILL) {
    dx = ag_zero_at(kind == MT_AG_SCATTER ? MT_AG_SCATTER : MT_AG_INDEX_FILL, g, dim, idx, base);
  }
  /* src: g read back where src went, in src's shape */
  if (want_src) {
    switch (kind) {
    case MT_AG_SCATTER: case MT_AG_SCATTER_ADD:  /* src may be larger than the index */
      t = ag_gather(g, dim, idx, base);
      ds = ag_pad(&t, n->in_ndim[1], n->in_shape[1]);
      break;
    case MT_AG_INDEX_ADD: case MT_AG_INDEX_COPY: {   /* alpha is 1 for index_copy */
      mt_tensor sel = ag_index_select(g, dim, idx, base);
      if (n->scalar != 1) { t = ag_bins(MT_OP_mul, &sel, n->scalar); ag_drop(&sel); }
      else t = sel;
      ds = ag_as(&t, n->in_ndim[1], n->in_shape[1]);
      break;
    }
    case MT_AG_INDEX_FILL:                       /* the value: the sum of g where it was written */
      ds = ag_bin(MT_OP_sub, g, &dx);
      break;
    case MT_AG_MASKED_SCATTER:
      ds = masked_source_grad(g, idx, n->in_ndim[1], n->in_shape[1]);
      break;
    }
  }
  ag_drop(&t);
  if (!ag_failed && want_x) ag_finish(n, 0, &dx, &gi[0]); else ag_drop(&dx);
  if (!ag_failed && want_src) ag_finish(n, 1, &ds, &gi[1]); else ag_drop(&ds);
  return ag_done();
}

/* ---- the registry's selections (values selected along a dim): the
   derivative column expanded. Node fields: dims[0] = dim, keepdim (the
   values keep dim: sort, topk, keepdim=true), scalar = the indices' base;
   saved 0 = the indices. ---- */

/* t (values-shaped) placed at the indices along dim in zeros of x's shape
   (the indices are distinct within a slice, so adding is placing) */
static ag_v f_at_indices(const mt_node *n, ag_v t, const mt_tensor *idx) {
  if (!t.t || !idx) { ag_failed = 1; mt_fail("%s: AT_INDICES of a number", n->name); return agv_t(&ag_failed_value); }
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
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_SELECT_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
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
  if (!g.t || !idx) { ag_failed = 1; mt_fail("%s: no gradient tensor", n->name); return agv_t(&ag_failed_value); }
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
