/* ag_shape.c: derivatives of the registry's views and rearrangements
   (MT_VIEW_OPS in src/ops/registry.h) and joins (MT_JOIN_OPS), the
   derivative column expanded, and the adjoints the index families' words
   take (index_add and scatter_add into zeros, x[mask] and its put). Each
   derivative is written with recording ops, and a
   view's adjoint (g added into a view of zeros) is recorded with the view
   as its own derivative, so create_graph gives higher-order gradients. */
#include <stdio.h>
#include <string.h>
#include "ag.h"
#include "ag_expr.h"
#include "ag_formula.h"
#include "ag_shape.h"
#include "../tensor/mt_shape.h"
#include "../tensor/mt_index.h"
#include "../tensor/mt_ops.h"
#include "../ops/dispatch.h"

/* ---- the registry's views: a node holds its op (n->op) and the op's
   arguments in its extra words: i[0..2], n, m, then v[0..n) and w[0..m).
   as_strided keeps x's storage offset in i[1], which it does not use. ---- */
#define VIEW_FIRST MT_OP_END_MASK
static size_t args_words(const mt_view_args *a) { return 5 + (size_t)a->n + (size_t)a->m; }

static void args_store(mt_node *nd, const mt_view_args *a) {
  int64_t *e = nd->extra;
  memcpy(e, a->i, sizeof a->i);
  e[3] = a->n;
  e[4] = a->m;
  memcpy(e + 5, a->v, sizeof(int64_t) * (size_t)a->n);
  memcpy(e + 5 + a->n, a->w, sizeof(int64_t) * (size_t)a->m);
}

static void args_load(const mt_node *nd, mt_view_args *a) {
  memset(a, 0, sizeof *a);
  const int64_t *e = nd->extra;
  memcpy(a->i, e, sizeof a->i);
  a->n = (int)e[3];
  a->m = (int)e[4];
  memcpy(a->v, e + 5, sizeof(int64_t) * (size_t)a->n);
  memcpy(a->w, e + 5 + a->n, sizeof(int64_t) * (size_t)a->m);
}

/* the node names, PyTorch's: VIEW's node word, and its adjoint's */
#define VIEW(call, signature, node) #node "Backward"
#define OPC(name, kernel, E, ...) [MT_OP_##name - VIEW_FIRST] = kernel,
static const char *const view_names[MT_OP_END_VIEW - VIEW_FIRST] = {MT_VIEW_OPS(OPC, _)};
#undef VIEW
#define VIEW(call, signature, node) #node "ScatterBackward"
static const char *const scatter_names[MT_OP_END_VIEW - VIEW_FIRST] = {MT_VIEW_OPS(OPC, _)};
#undef VIEW
#undef OPC

static int view_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi);
static int scatter_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi);

static int record_args(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a, const char *name,
                       mt_backward_fn fn) {
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node_extra(name, fn, 1, in, args_words(a));
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  args_store(n, a);
  return mt_ag_attach(r, n);
}

int ag_is_t_view(const mt_node *n) { return n->backward == view_backward && n->op == MT_OP_t; }

/* as_strided's gradient reads x's elements through its storage offsets:
   x must be contiguous and hold every element the view reads */
static int strided_check(const mt_tensor *x, const mt_view_args *a) {
  char b[128];
  if (!mt_is_contiguous(x)) {
    char strides[128];
    size_t len = 0;
    strides[0] = 0;
    for (int i = 0; i < x->ndim && len < sizeof strides; i++)
      len += (size_t)snprintf(strides + len, sizeof strides - len, "%s%lld", i ? ", " : "", (long long)x->stride[i]);
    return mt_fail("as_strided: its gradient is defined for a contiguous input only, got %s with strides "
                   "(%s) (call contiguous() first)", mt_shape_str(x, b, sizeof b), strides);
  }
  int64_t numel = mt_numel(x), off = a->i[0] - x->offset, last = off;
  int empty = 0;
  for (int i = 0; i < a->n; i++) {
    if (a->v[i] == 0) empty = 1;
    last += (a->v[i] - 1) * a->w[i];
  }
  if (!empty && (off < 0 || last >= numel))
    return mt_fail("as_strided: the view reads storage elements %lld..%lld but the input %s holds "
                   "%lld..%lld; its gradient is not defined", (long long)a->i[0] + 1,
                   (long long)(last + x->offset + 1), mt_shape_str(x, b, sizeof b), (long long)x->offset + 1,
                   (long long)(x->offset + numel));
  return 0;
}

/* The dispatcher's hook: r = op(x, a) was computed. Dims in a are 0-based
   and in range (the kernel checked them); negative positions are wrapped
   here, and roll's shifts taken modulo their sizes (so that the inverse's
   negation cannot overflow). */
int mt_ag_record_view_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *args) {
  if (!mt_op_infos[op].differentiable || !ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  mt_view_args a = *args;
  if ((op == MT_OP_narrow || op == MT_OP_select) && x->ndim && a.i[1] < 0) a.i[1] += x->shape[a.i[0]];
  if (op == MT_OP_roll)
    for (int k = 0; k < a.n; k++) {
      int64_t size = a.m ? x->shape[a.w[k] < 0 ? a.w[k] + x->ndim : a.w[k]] : mt_numel(x);
      a.v[k] = size ? a.v[k] % size : 0;
    }
  if (op == MT_OP_as_strided) {
    if (strided_check(x, &a)) return -1;
    a.i[1] = x->offset;
  }
  return record_args(r, x, op, &a, view_names[op - VIEW_FIRST], view_backward);
}

/* the op through the dispatcher (recorded when t carries history) */
static mt_tensor view_call(mt_op op, const mt_tensor *t, const mt_view_args *a) {
  mt_tensor r = {0};
  if (ag_failed || !t->storage) { ag_failed = 1; return r; }
  if (mt_call_view(&r, (mt_tensor *)t, op, a, 0)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

static int add_into(mt_tensor *v, const mt_tensor *g) {
  mt_operand a = {v, 0, 0}, b = {g, 0, 0};
  return mt_run_binary(v, &a, &b, MT_OP_add, 1, 1, MT_FLOAT32);
}

/* zeros on like's device */
static int zeros(mt_tensor *r, int dtype, int ndim, const int64_t *shape, const mt_tensor *like) {
  if (mt_tensor_init_like(r, dtype, ndim, shape, like)) return -1;
  return mt_fill(r, 0);
}

/* 1 when as_strided's view may read an element twice: with the dims sorted
   by stride, each stride must pass the farthest offset the smaller ones
   reach (a sufficient test; a view it cannot clear adds by positions) */
static int view_overlaps(int n, const int64_t *size, const int64_t *stride) {
  int order[MT_MAX_DIMS], m = 0;
  for (int i = 0; i < n; i++) {
    if (size[i] == 0) return 0;
    if (size[i] > 1) order[m++] = i;
  }
  for (int i = 1; i < m; i++)
    for (int j = i; j > 0 && stride[order[j]] < stride[order[j - 1]]; j--) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
  int64_t reach = 0;
  for (int k = 0; k < m; k++) {
    if (stride[order[k]] <= reach) return 1;
    reach += stride[order[k]] * (size[order[k]] - 1);
  }
  return 0;
}

/* the flat positions (from the first element) that as_strided's view reads */
static int strided_positions(mt_tensor *pos, int64_t numel, const mt_view_args *a, int64_t off) {
  mt_tensor all = {0}, view = {0}, dense = {0};
  int64_t count = 1;
  for (int i = 0; i < a->n; i++) count *= a->v[i];
  int rc = mt_tensor_init(&all, MT_INT64, 1, &numel);
  if (!rc) {
    int64_t *p = (int64_t *)mt_data(&all);
    for (int64_t i = 0; i < numel; i++) p[i] = i;
    rc = mt_as_strided(&view, &all, a->n, a->v, a->w, off) || mt_clone(&dense, &view) ||
         mt_reshape(pos, &dense, 1, &count);
  }
  mt_tensor_release(&all); mt_tensor_release(&view); mt_tensor_release(&dense);
  return rc ? -1 : 0;
}

/* r = zeros of (ndim, shape) with g added into op's view of them: window by
   window for unfold, by position for an as_strided that reads an element
   twice. as_strided's offset counts from the zeros' first element. */
static int into_zeros_compute(mt_tensor *r, mt_op op, const mt_view_args *a, const mt_tensor *g, int ndim,
                              const int64_t *shape) {
  if (zeros(r, g->dtype, ndim, shape, g)) return -1;
  mt_tensor v = {0}, gk = {0};
  int rc = 0;
  if (op == MT_OP_unfold && ndim > 0) {         /* windows overlap: one window offset at a time */
    int d = (int)a->i[0];
    int64_t size = a->i[1], step = a->i[2], nwin = g->shape[d];
    for (int64_t k = 0; k < size && nwin > 0 && rc == 0; k++) {
      rc = mt_select(&gk, g, g->ndim - 1, k) || mt_slice(&v, r, d, k, k + (nwin - 1) * step + 1, step) ||
           add_into(&v, &gk);
      mt_tensor_release(&gk);
      mt_tensor_release(&v);
    }
    return rc;
  }
  if (op == MT_OP_as_strided) {
    int64_t off = a->i[0] - a->i[1];
    if (!view_overlaps(a->n, a->v, a->w)) {
      rc = mt_as_strided(&v, r, a->n, a->v, a->w, r->offset + off) || add_into(&v, g);
    } else {                                     /* by the flat positions the view reads */
      mt_tensor pos = {0}, dpos = {0}, flat = {0}, gc = {0}, rf = {0};
      int64_t numel = mt_numel(r), count = mt_numel(g);
      rc = strided_positions(&pos, numel, a, off);
      const mt_tensor *at = &pos;                /* the positions, on g's device */
      if (!rc && !mt_same_device(&pos, g)) {
        rc = mt_tensor_init_like(&dpos, MT_INT64, pos.ndim, pos.shape, g) || mt_copy(&dpos, &pos);
        at = &dpos;
      }
      rc = rc || mt_contiguous(&gc, g) || mt_reshape(&flat, &gc, 1, &count) || mt_reshape(&rf, r, 1, &numel) ||
           mt_index_add(&rf, 0, at, &flat, 1, 0);
      mt_tensor_release(&pos); mt_tensor_release(&dpos); mt_tensor_release(&flat); mt_tensor_release(&gc);
      mt_tensor_release(&rf);
    }
    mt_tensor_release(&v);
    return rc ? -1 : 0;
  }
  rc = mt_view_op(&v, r, op, a, 0) || add_into(&v, g);
  mt_tensor_release(&v);
  return rc ? -1 : 0;
}

static mt_tensor into_zeros(mt_op op, const mt_view_args *a, const mt_tensor *g, int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !g->storage) { ag_failed = 1; return r; }
  if (into_zeros_compute(&r, op, a, g, ndim, shape) ||
      (ag_any_requires_grad(g, NULL) && record_args(&r, g, op, a, scatter_names[op - VIEW_FIRST], scatter_backward))) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}

/* the adjoint's derivative: the view of g (as_strided's, from g laid out
   contiguously, its offset counted from g's first element) */
static mt_tensor view_of(mt_op op, const mt_view_args *a, const mt_tensor *g) {
  if (op != MT_OP_as_strided) return view_call(op, g, a);
  mt_tensor c = view_call(MT_OP_clone, g, a);    /* contiguous, recorded */
  mt_view_args s = *a;
  s.i[0] = c.offset + (a->i[0] - a->i[1]);
  mt_tensor r = view_call(op, &c, &s);
  ag_drop(&c);
  return r;
}

/* permute's, movedim's and roll's inverse arguments */
static void inverse_args(mt_op op, const mt_view_args *a, mt_view_args *inv) {
  *inv = *a;
  if (op == MT_OP_permute) {
    for (int k = 0; k < a->n; k++) inv->v[a->v[k]] = k;
  } else if (op == MT_OP_movedim) {
    inv->n = a->m; inv->m = a->n;
    memcpy(inv->v, a->w, sizeof(int64_t) * (size_t)a->m);
    memcpy(inv->w, a->v, sizeof(int64_t) * (size_t)a->n);
  } else if (op == MT_OP_roll) {
    for (int k = 0; k < a->n; k++) inv->v[k] = -a->v[k];
  }
}

/* repeat: g summed over the copies, one dim at a time */
static mt_tensor repeat_grad(const mt_node *n, const mt_view_args *a, const mt_tensor *g) {
  int nr = a->n, lead = nr - n->in_ndim[0];
  int64_t shape[MT_MAX_DIMS + 1];
  mt_tensor cur = {0};
  mt_ag_alias(&cur, g);
  for (int i = 0; i < nr && !ag_failed; i++) {
    int64_t reps = a->v[i], size = i < lead ? 1 : n->in_shape[0][i - lead];
    if (reps == 1) continue;
    int k = 0;
    for (int d = 0; d < nr; d++) {
      if (d == i) { shape[k++] = reps; shape[k++] = size; }
      else shape[k++] = cur.shape[d];
    }
    if (k > MT_MAX_DIMS) { ag_failed = 1; mt_fail("repeat: too many dims to differentiate"); break; }
    mt_tensor split = ag_reshape(&cur, k, shape);
    ag_drop(&cur);
    cur = ag_sum(&split, 1u << i, 0);
    ag_drop(&split);
  }
  mt_tensor d = ag_reshape(&cur, n->in_ndim[0], n->in_shape[0]);
  ag_drop(&cur);
  return d;
}

static ag_v f_tensor(const mt_node *n, ag_v t, const char *word) {
  if (t.t) return t;
  ag_failed = 1;
  mt_fail("%s: %s of a number", n->name, word);
  return agv_t(&ag_failed_value);
}

static int view_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  mt_view_args a, inv;
  args_load(n, &a);
  mt_op op = (mt_op)n->op;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  const ag_v G = V(grad);
  const int nd = n->in_ndim[0];
  const int64_t *shape = n->in_shape[0];
#define RESHAPE(e) ag_keep(ag_reshape(f_tensor(n, V(e), "RESHAPE").t, nd, shape))
#define SUM_TO(e) ag_keep(ag_sum_to(f_tensor(n, V(e), "SUM_TO").t, nd, shape))
#define SELF(e) ag_keep(view_call(op, f_tensor(n, V(e), "SELF").t, &a))
#define INVERSE(e) (inverse_args(op, &a, &inv), ag_keep(view_call(op, f_tensor(n, V(e), "INVERSE").t, &inv)))
#define INTO_ZEROS(e) ag_keep(into_zeros(op, &a, f_tensor(n, V(e), "INTO_ZEROS").t, nd, shape))
#define NAMED(fn) ag_keep(fn(n, &a, G.t))
#define DERIV(reads, expr) ag_formula_finish(n, 0, V(expr), mark, &gi[0])
#define NODERIV ag_failed = 1; mt_fail("%s: no derivative", n->name)   /* never recorded */
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch (op) {
    MT_VIEW_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef NODERIV
#undef DERIV
#undef NAMED
#undef INTO_ZEROS
#undef INVERSE
#undef SELF
#undef SUM_TO
#undef RESHAPE
  ag_release_scratch(mark);
  return ag_done();
}

static int scatter_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  mt_view_args a;
  args_load(n, &a);
  ag_failed = 0;
  mt_tensor d = view_of((mt_op)n->op, &a, g);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

/* ---- the views that autograd's own formulas take ---- */
mt_tensor ag_narrow(const mt_tensor *x, int dim, int64_t start, int64_t len) {
  mt_view_args a = {.i = {dim, start, len}};
  return view_call(MT_OP_narrow, x, &a);
}
static mt_tensor ag_select(const mt_tensor *x, int dim, int64_t index) {
  mt_view_args a = {.i = {dim, index}};
  return view_call(MT_OP_select, x, &a);
}
mt_tensor ag_flip(const mt_tensor *x, int dim) {
  mt_view_args a = {.n = 1, .v = {dim}};
  return view_call(MT_OP_flip, x, &a);
}
mt_tensor ag_permute(const mt_tensor *x, const int *dims) {
  mt_view_args a = {.n = x->ndim};
  for (int i = 0; i < x->ndim; i++) a.v[i] = dims[i];
  return view_call(MT_OP_permute, x, &a);
}

/* one dim at a time: each step writes the smaller tensor into a slice of zeros */
mt_tensor ag_pad(const mt_tensor *x, int ndim, const int64_t *shape) {
  mt_tensor cur = {0};
  if (ag_failed || !x->storage || x->ndim != ndim) {
    if (!ag_failed && x->storage) mt_fail("autograd: cannot pad %d dims to %d", x->ndim, ndim);
    ag_failed = 1;
    return cur;
  }
  mt_ag_alias(&cur, x);
  int64_t grown[MT_MAX_DIMS];
  memcpy(grown, x->shape, sizeof(int64_t) * (size_t)ndim);
  for (int d = 0; d < ndim && !ag_failed; d++) {
    if (grown[d] == shape[d]) continue;
    mt_view_args a = {.i = {d, 0, grown[d]}};
    grown[d] = shape[d];
    mt_tensor next = into_zeros(MT_OP_narrow, &a, &cur, ndim, grown);
    ag_drop(&cur);
    cur = next;
  }
  return cur;
}

mt_tensor ag_cat(const mt_tensor *const *ts, int n, int dim) {
  mt_tensor r = {0};
  for (int i = 0; i < n; i++) if (!ts[i]->storage) ag_failed = 1;
  if (ag_failed) return r;
  if (mt_call_join(&r, ts, n, MT_OP_cat, dim)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

static int wrap(int dim, int ndim) { return dim < 0 ? dim + ndim : dim; }

/* ---- the registry's joins (cat, stack): the derivative column expanded
   per input, PART(t) being the input's part of t. A node has at most
   MT_AG_MAX_EDGES edges, so a long list becomes a tree: an inner edge (bit
   k of mask) stands for a run of inputs, its "input" being the slice of the
   result they fill (recorded from a tensor that has only that geometry). ---- */
static mt_tensor join_part(const mt_node *n, int inner, int64_t off, int64_t len, ag_v t) {
  if (!t.t) { ag_failed = 1; mt_fail("%s: PART of a number", n->name); return (mt_tensor){0}; }
  return n->op == MT_OP_stack && !inner ? ag_select(t.t, n->dims[0], off) : ag_narrow(t.t, n->dims[0], off, len);
}

static int join_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  ag_failed = 0;
  int dim = n->dims[0], stack = n->op == MT_OP_stack;
  int64_t off = 0;
  const ag_v G = V(grad);
  for (int k = 0; k < n->nedges && !ag_failed; k++) {
    int inner = (n->mask >> k) & 1;
    int skipped = !inner && !stack && n->in_ndim[k] == 1 && n->in_shape[k][0] == 0 && grad->ndim != 1;
    int64_t len = skipped ? 0 : inner || !stack ? n->in_shape[k][dim] : 1;
    if (n->next[k].node && !skipped) {
      mt_tensor d = {0};
#define PART(e) join_part(n, inner, off, len, V(e))
#define DERIV(reads, expr) d = expr
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
      switch ((mt_op)n->op) {
        MT_JOIN_OPS(OPC, _)
      default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
      }
#undef OPC
#undef DERIV
#undef PART
      gi[k] = ag_cast(&d, n->in_dtype[k]);
      ag_drop(&d);
    }
    off += len;
  }
  return ag_done();
}

static int64_t join_len(const mt_tensor *t, const mt_tensor *r, int dim, int stack) {
  if (stack) return 1;
  if (t->ndim == 1 && t->shape[0] == 0 && r->ndim != 1) return 0;
  return t->shape[dim];
}

static mt_node *join_tree(const mt_tensor *const *ts, int n, const mt_tensor *r, mt_op op, int dim) {
  const char *name = ag_backward_name(op);
  int stack = op == MT_OP_stack;
  if (n <= MT_AG_MAX_EDGES) {
    mt_node *nd = mt_ag_new_node(name, join_backward, n, ts);
    if (nd) { nd->op = op; nd->dims[0] = dim; }
    return nd;
  }
  int per = (n + MT_AG_MAX_EDGES - 1) / MT_AG_MAX_EDGES, groups = (n + per - 1) / per;
  const mt_tensor *in[MT_AG_MAX_EDGES] = {NULL};
  mt_tensor slice[MT_AG_MAX_EDGES];
  mt_node *sub[MT_AG_MAX_EDGES] = {NULL};
  for (int k = 0; k < groups; k++) {
    int lo = k * per, cnt = n - lo < per ? n - lo : per;
    if (cnt == 1) { in[k] = ts[lo]; continue; }
    memset(&slice[k], 0, sizeof slice[k]);
    slice[k].dtype = r->dtype;
    slice[k].ndim = r->ndim;
    memcpy(slice[k].shape, r->shape, sizeof(int64_t) * (size_t)r->ndim);
    slice[k].shape[dim] = 0;
    for (int i = lo; i < lo + cnt; i++) slice[k].shape[dim] += join_len(ts[i], r, dim, stack);
    in[k] = &slice[k];
    sub[k] = join_tree(ts + lo, cnt, r, op, dim);
    if (!sub[k]) { for (int j = 0; j < k; j++) mt_ag_node_release(sub[j]); return NULL; }
  }
  mt_node *nd = mt_ag_new_node(name, join_backward, groups, in);
  if (!nd) { for (int j = 0; j < groups; j++) mt_ag_node_release(sub[j]); return NULL; }
  nd->op = op;
  nd->dims[0] = dim;
  for (int k = 0; k < groups; k++) {
    if (!sub[k]) continue;
    int live = 0;
    for (int j = 0; j < sub[k]->nedges; j++) live |= sub[k]->next[j].node != NULL;
    if (live) nd->next[k].node = sub[k]; else mt_ag_node_release(sub[k]);
    nd->mask |= 1u << k;
  }
  return nd;
}

/* the dispatcher's hook: r = op(ts[0..n), dim) */
int mt_ag_record_join(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim) {
  if (!mt_ag_grad_enabled() || !mt_dtype_is_float(r->dtype) || r->ndim == 0) return 0;
  int any = 0;
  for (int i = 0; i < n && !any; i++) any = mt_ag_requires_grad(ts[i]);
  if (!any) return 0;
  dim = wrap(dim, r->ndim);
  mt_node *nd = join_tree(ts, n, r, op, dim);
  if (!nd) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  return mt_ag_attach(r, nd);
}

/* ---- index_select / index_add, gather / scatter_add, x[mask] ----
   dims[0]: dim, dims[1]: base; saved 0: the index (or mask). */
enum { I_SELECT, I_ADD, I_GATHER, I_SCATTER, I_MASK, I_MASK_PUT };
static const char *const index_names[] = {
  "IndexSelectBackward", "IndexAddBackward", "GatherBackward", "ScatterAddBackward",
  "IndexBackward", "IndexPutBackward"};

static int index_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi);

static int index_compute(int kind, mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *idx, int64_t base,
                         int ndim, const int64_t *shape) {
  switch (kind) {                               /* I_SELECT, I_GATHER: the registry's, in ag_index */
  case I_MASK: return mt_index_mask(r, x, idx);
  case I_ADD: return zeros(r, x->dtype, ndim, shape, x) || mt_index_add(r, dim, idx, x, 1, base) ? -1 : 0;
  case I_SCATTER: return zeros(r, x->dtype, ndim, shape, x) || mt_scatter(r, dim, idx, x, 1, base) ? -1 : 0;
  default: return zeros(r, x->dtype, ndim, shape, x) || mt_index_mask_put(r, idx, x) ? -1 : 0;
  }
}

static int record_index(int kind, mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *idx, int64_t base) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(index_names[kind], index_backward, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", index_names[kind]);
  n->op = kind;
  n->dims[0] = dim;
  n->dims[1] = (int)base;
  mt_ag_save(n, idx, 0);
  return mt_ag_attach(r, n);
}

static mt_tensor ag_index(int kind, const mt_tensor *x, int dim, const mt_tensor *idx, int64_t base,
                          int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (kind == I_SELECT || kind == I_GATHER) {    /* the registry's ops, through the dispatcher */
    if (mt_call_index(&r, x, kind == I_SELECT ? MT_OP_index_select : MT_OP_gather, dim, idx, base)) {
      ag_drop(&r);
      ag_failed = 1;
    }
    return r;
  }
  if (index_compute(kind, &r, x, dim, idx, base, ndim, shape) || record_index(kind, &r, x, dim, idx, base)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}

static int index_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *idx;
  if (mt_ag_saved(n, 0, &idx)) return -1;
  ag_failed = 0;
  static const int adjoint_of[] = {I_ADD, I_SELECT, I_SCATTER, I_GATHER, I_MASK_PUT, I_MASK};
  mt_tensor d = ag_index(adjoint_of[n->op], g, n->dims[0], idx, n->dims[1], n->in_ndim[0], n->in_shape[0]);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

mt_tensor ag_scatter_add_zeros(const mt_tensor *x, int dim, const mt_tensor *idx, int64_t base, int ndim,
                               const int64_t *shape) {
  return ag_index(I_SCATTER, x, dim, idx, base, ndim, shape);
}
mt_tensor ag_index_add_zeros(const mt_tensor *x, int dim, const mt_tensor *idx, int64_t base, int ndim,
                             const int64_t *shape) {
  return ag_index(I_ADD, x, dim, idx, base, ndim, shape);
}
mt_tensor ag_index_mask(const mt_tensor *x, const mt_tensor *mask) {
  return ag_index(I_MASK, x, 0, mask, 0, 0, NULL);
}
mt_tensor ag_index_mask_put_zeros(const mt_tensor *x, const mt_tensor *mask, int ndim, const int64_t *shape) {
  return ag_index(I_MASK_PUT, x, 0, mask, 0, ndim, shape);
}

/* ---- where: the registry's (an op with parameters), for the formulas' WHERE ---- */
mt_tensor ag_where_ops(const mt_tensor *cond, const mt_operand *a, const mt_operand *b) {
  mt_tensor r = {0};
  if (ag_failed || !cond->storage || (a->t && !a->t->storage) || (b->t && !b->t->storage)) {
    ag_failed = 1;
    return r;
  }
  mt_operand in[3] = {{cond, 0, 0}, *a, *b};
  const double none[2] = {0, 0};
  if (mt_call_param(&r, in, MT_OP_where, none, 0, MT_FLOAT32)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

