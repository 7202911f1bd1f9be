/* ag_shape.c: derivatives of views, indexing and shape ops. Each op comes
   with its adjoint (narrow with "write g into a slice of zeros", index_select
   with index_add into zeros, gather with scatter_add, ...), both recorded,
   so each one's derivative is the other and create_graph gives
   higher-order gradients. */
#include <stdio.h>
#include <string.h>
#include "ag.h"
#include "ag_expr.h"
#include "ag_shape.h"
#include "../tensor/mt_shape.h"
#include "../tensor/mt_index.h"
#include "../tensor/mt_ops.h"
#include "../ops/dispatch.h"

/* ---- parametric views and rearrangements: one family of nodes ----
   A spec names the op and its parameters; it lives in the node (op, dims,
   scalar, and p and q in the node's extra words). */
enum { K_NARROW, K_SELECT, K_DIAG, K_UNFOLD, K_PERMUTE, K_FLIP, K_ROLL, K_TRIL, K_TRIU, K_STRIDED, K_NUM };

/* p holds n values (at least 3: narrow's dim, start, len ...), q nd.
   K_STRIDED: as_strided of a contiguous x, n dims of sizes p and strides q
   (nd = n), starting off elements past x's first one */
typedef struct { int kind, n, nd; int64_t p[MT_MAX_DIMS], q[MT_MAX_DIMS], off; } vspec;

static int spec_np(const vspec *s) { return s->n > 3 ? s->n : 3; }

static const char *const apply_names[K_NUM] = {
  "NarrowBackward", "SelectBackward", "DiagonalBackward", "UnfoldBackward", "PermuteBackward",
  "FlipBackward", "RollBackward", "TrilBackward", "TriuBackward", "AsStridedBackward"};
static const char *const scatter_names[K_NUM] = {
  "SliceScatterBackward", "SelectScatterBackward", "DiagonalScatterBackward", "UnfoldBackwardBackward",
  [K_STRIDED] = "AsStridedScatterBackward"};

static void spec_store(mt_node *n, const vspec *s) {
  n->op = s->kind;
  n->dims[0] = s->n;
  n->dims[1] = s->nd;
  memcpy(n->extra, s->p, sizeof(int64_t) * (size_t)spec_np(s));
  memcpy(n->extra + spec_np(s), s->q, sizeof(int64_t) * (size_t)s->nd);
  n->scalar = (double)s->off;                /* exact: an element offset is below 2^53 */
}

static void spec_load(const mt_node *n, vspec *s) {
  memset(s, 0, sizeof *s);
  s->kind = n->op;
  s->n = n->dims[0];
  s->nd = n->dims[1];
  memcpy(s->p, n->extra, sizeof(int64_t) * (size_t)spec_np(s));
  memcpy(s->q, n->extra + spec_np(s), sizeof(int64_t) * (size_t)s->nd);
  s->off = (int64_t)n->scalar;
}

static int spec_compute(mt_tensor *r, const mt_tensor *x, const vspec *s) {
  int dims[MT_MAX_DIMS];
  switch (s->kind) {
  case K_NARROW: return mt_narrow(r, x, (int)s->p[0], s->p[1], s->p[2]);
  case K_SELECT: return mt_select(r, x, (int)s->p[0], s->p[1]);
  case K_DIAG: return mt_diagonal(r, x, s->p[0], (int)s->p[1], (int)s->p[2]);
  case K_UNFOLD: return mt_unfold(r, x, (int)s->p[0], s->p[1], s->p[2]);
  case K_PERMUTE: case K_FLIP:
    for (int i = 0; i < s->n; i++) dims[i] = (int)s->p[i];
    return s->kind == K_PERMUTE ? mt_permute(r, x, dims) : mt_flip(r, x, dims, s->n);
  case K_ROLL:
    for (int i = 0; i < s->nd; i++) dims[i] = (int)s->q[i];
    return mt_roll(r, x, s->p, s->n, dims, s->nd);
  case K_TRIL: case K_TRIU: return mt_tri(r, x, s->p[0], s->kind == K_TRIU, 0);
  case K_STRIDED: {                            /* a gradient need not be contiguous: lay it out first */
    mt_tensor c = {0};
    int rc = mt_contiguous(&c, x) || mt_as_strided(r, &c, s->n, s->p, s->q, c.offset + s->off);
    mt_tensor_release(&c);
    return rc ? -1 : 0;
  }
  default: return mt_fail("autograd: unknown view kind %d", s->kind);
  }
}

static int apply_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi);
static int scatter_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi);

static int record_spec(mt_tensor *r, const mt_tensor *x, const vspec *s, const char *name, mt_backward_fn fn) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node_extra(name, fn, 1, in, (size_t)(spec_np(s) + s->nd));
  if (!n) return mt_fail("%s: out of memory recording the graph", name);
  spec_store(n, s);
  return mt_ag_attach(r, n);
}

static mt_tensor ag_apply(const mt_tensor *x, const vspec *s) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (spec_compute(&r, x, s) || record_spec(&r, x, s, apply_names[s->kind], apply_backward)) {
    ag_drop(&r);
    ag_failed = 1;
  }
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

/* zeros of (ndim, shape) with g added into the view the spec takes */
static int scatter_compute(mt_tensor *r, const mt_tensor *g, const vspec *s, int ndim, const int64_t *shape) {
  if (zeros(r, g->dtype, ndim, shape, g)) return -1;
  mt_tensor v = {0}, gk = {0};
  int rc = 0;
  if (s->kind == K_UNFOLD) {                   /* windows overlap: one window offset at a time */
    int d = (int)s->p[0];
    int64_t size = s->p[1], step = s->p[2], nwin = g->shape[d];
    for (int64_t k = 0; k < size && nwin > 0 && rc == 0; k++) {
      rc = mt_select(&gk, g, g->ndim - 1, k) || mt_slice(&v, r, d, k, k + (nwin - 1) * step + 1, step) ||
           add_into(&v, &gk);
      mt_tensor_release(&gk);
      mt_tensor_release(&v);
    }
    return rc;
  }
  rc = spec_compute(&v, r, s) || add_into(&v, g);
  mt_tensor_release(&v);
  return rc ? -1 : 0;
}

static mt_tensor ag_scatter(const mt_tensor *g, const vspec *s, int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !g->storage) { ag_failed = 1; return r; }
  if (scatter_compute(&r, g, s, ndim, shape) || record_spec(&r, g, s, scatter_names[s->kind], scatter_backward)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}

/* the derivative of the spec's op: g back to the input's geometry */
static mt_tensor adjoint(const mt_tensor *g, const vspec *s, int ndim, const int64_t *shape) {
  vspec t = *s;
  switch (s->kind) {
  case K_PERMUTE:
    for (int i = 0; i < s->n; i++) t.p[s->p[i]] = i;
    return ag_apply(g, &t);
  case K_ROLL:
    for (int i = 0; i < s->n; i++) t.p[i] = -s->p[i];
    return ag_apply(g, &t);
  case K_FLIP: case K_TRIL: case K_TRIU: return ag_apply(g, s);
  default: return ag_scatter(g, s, ndim, shape);
  }
}

static int apply_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  vspec s;
  spec_load(n, &s);
  mt_tensor d = adjoint(g, &s, n->in_ndim[0], n->in_shape[0]);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

static int scatter_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  vspec s;
  spec_load(n, &s);
  mt_tensor d = ag_apply(g, &s);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

mt_tensor ag_narrow(const mt_tensor *x, int dim, int64_t start, int64_t len) {
  vspec s = {.kind = K_NARROW, .p = {dim, start, len}};
  return ag_apply(x, &s);
}
static mt_tensor ag_select(const mt_tensor *x, int dim, int64_t index) {
  vspec s = {.kind = K_SELECT, .p = {dim, index}};
  return ag_apply(x, &s);
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
    vspec s = {.kind = K_NARROW, .p = {d, 0, grown[d]}};
    grown[d] = shape[d];
    mt_tensor next = ag_scatter(&cur, &s, ndim, grown);
    ag_drop(&cur);
    cur = next;
  }
  return cur;
}

mt_tensor ag_flip(const mt_tensor *x, int dim) {
  vspec s = {.kind = K_FLIP, .n = 1, .p = {dim}};
  return ag_apply(x, &s);
}

mt_tensor ag_permute(const mt_tensor *x, const int *dims) {
  vspec s = {.kind = K_PERMUTE, .n = x->ndim};
  for (int i = 0; i < x->ndim; i++) s.p[i] = dims[i];
  return ag_apply(x, &s);
}

mt_tensor ag_cat(const mt_tensor *const *ts, int n, int dim) {
  mt_tensor r = {0};
  for (int i = 0; i < n; i++) if (!ts[i]->storage) ag_failed = 1;
  if (ag_failed) return r;
  if (mt_cat(&r, ts, n, dim) || mt_ag_record_cat(&r, ts, n, dim, 0)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

/* ---- recording the views ---- */
static int wrap(int dim, int ndim) { return dim < 0 ? dim + ndim : dim; }

int mt_ag_record_narrow(mt_tensor *r, const mt_tensor *x, int dim, int64_t start, int64_t len) {
  dim = wrap(dim, x->ndim);
  if (start < 0) start += x->shape[dim];
  vspec s = {.kind = K_NARROW, .p = {dim, start, len}};
  return record_spec(r, x, &s, apply_names[K_NARROW], apply_backward);
}

int mt_ag_record_select(mt_tensor *r, const mt_tensor *x, int dim, int64_t index) {
  dim = wrap(dim, x->ndim);
  if (index < 0) index += x->shape[dim];
  vspec s = {.kind = K_SELECT, .p = {dim, index}};
  return record_spec(r, x, &s, apply_names[K_SELECT], apply_backward);
}

int mt_ag_record_permute(mt_tensor *r, const mt_tensor *x, const int *dims) {
  vspec s = {.kind = K_PERMUTE, .n = x->ndim};
  for (int i = 0; i < x->ndim; i++) s.p[i] = wrap(dims[i], x->ndim);
  return record_spec(r, x, &s, apply_names[K_PERMUTE], apply_backward);
}

/* movedim is the permutation mt_movedim builds */
int mt_ag_record_movedim(mt_tensor *r, const mt_tensor *x, const int *src, const int *dst, int n) {
  int nd = x->ndim, perm[MT_MAX_DIMS], used[MT_MAX_DIMS] = {0};
  if (nd == 0) return mt_ag_record_view(r, x);
  for (int i = 0; i < nd; i++) perm[i] = -1;
  for (int i = 0; i < n; i++) {
    int s = wrap(src[i], nd), d = wrap(dst[i], nd);
    perm[d] = s;
    used[s] = 1;
  }
  for (int i = 0, s = 0; i < nd; i++) {
    if (perm[i] >= 0) continue;
    while (used[s]) s++;
    perm[i] = s++;
  }
  return mt_ag_record_permute(r, x, perm);
}

int mt_ag_record_diagonal(mt_tensor *r, const mt_tensor *x, int64_t offset, int d0, int d1) {
  vspec s = {.kind = K_DIAG, .p = {offset, wrap(d0, x->ndim), wrap(d1, x->ndim)}};
  return record_spec(r, x, &s, apply_names[K_DIAG], apply_backward);
}

int mt_ag_record_unfold(mt_tensor *r, const mt_tensor *x, int dim, int64_t size, int64_t step) {
  vspec s = {.kind = K_UNFOLD, .p = {wrap(dim, x->ndim), size, step}};
  if (x->ndim == 0) return mt_ag_record_view(r, x);   /* one window: x as a 1-element vector */
  return record_spec(r, x, &s, apply_names[K_UNFOLD], apply_backward);
}

int mt_ag_record_flip(mt_tensor *r, const mt_tensor *x, const int *dims, int n) {
  vspec s = {.kind = K_FLIP, .n = n};
  for (int i = 0; i < n; i++) s.p[i] = wrap(dims[i], x->ndim);
  return record_spec(r, x, &s, apply_names[K_FLIP], apply_backward);
}

int mt_ag_record_roll(mt_tensor *r, const mt_tensor *x, const int64_t *shifts, int ns, const int *dims, int nd) {
  vspec s = {.kind = K_ROLL, .n = ns, .nd = nd};
  for (int i = 0; i < ns; i++) {                 /* modulo the size rolled along, as mt_roll reads it: */
    int64_t size = nd ? x->shape[wrap(dims[i], x->ndim)] : mt_numel(x);
    s.p[i] = size ? shifts[i] % size : 0;        /* then the adjoint's negation cannot overflow */
  }
  for (int i = 0; i < nd; i++) s.q[i] = wrap(dims[i], x->ndim);
  return record_spec(r, x, &s, apply_names[K_ROLL], apply_backward);
}

int mt_ag_record_tri(mt_tensor *r, const mt_tensor *x, int64_t k, int upper) {
  vspec s = {.kind = upper ? K_TRIU : K_TRIL, .p = {k}};
  return record_spec(r, x, &s, apply_names[s.kind], apply_backward);
}

/* ---- as_strided of a contiguous x ----
   The gradient adds g into zeros of x's extent where the view reads them:
   through the same view of the zeros when no element is read twice (its
   adjoint is then the view again, K_STRIDED), else by index_add over the
   flat positions the view reads, saved as an int64 tensor. */

/* 1 when the view may read an element twice: with the dims sorted by
   stride, each stride must pass the farthest offset the smaller ones reach
   (a sufficient test; a view it cannot clear takes the index_add path) */
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

static int strided_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *pos;
  if (mt_ag_saved(n, 0, &pos)) return -1;
  ag_failed = 0;
  int64_t count = pos->shape[0], numel = 1;
  for (int d = 0; d < n->in_ndim[0]; d++) numel *= n->in_shape[0][d];
  mt_tensor flat = ag_reshape(g, 1, &count);
  mt_tensor sums = ag_index_add_zeros(&flat, 0, pos, 0, 1, &numel);
  mt_tensor d = ag_reshape(&sums, n->in_ndim[0], n->in_shape[0]);
  ag_drop(&flat); ag_drop(&sums);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

/* the flat positions (from x's first element) that the view reads, 1-D */
static int strided_positions(mt_tensor *pos, int64_t numel, int ndim, const int64_t *size,
                             const int64_t *stride, int64_t off) {
  mt_tensor all = {0}, view = {0}, dense = {0};
  int64_t count = 1;
  for (int i = 0; i < ndim; i++) count *= size[i];
  int rc = mt_tensor_init(&all, MT_INT64, 1, &numel);
  if (!rc) {
    int64_t *p = (int64_t *)mt_data(&all);
    for (int64_t i = 0; i < numel; i++) p[i] = i;
    rc = mt_as_strided(&view, &all, ndim, size, stride, off) || mt_clone(&dense, &view) ||
         mt_reshape(pos, &dense, 1, &count);
  }
  mt_tensor_release(&all); mt_tensor_release(&view); mt_tensor_release(&dense);
  return rc ? -1 : 0;
}

int mt_ag_record_as_strided(mt_tensor *r, const mt_tensor *x, int ndim, const int64_t *size,
                            const int64_t *stride, int64_t offset) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
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
  int64_t numel = mt_numel(x), off = offset - x->offset, last = off;
  int empty = 0;
  for (int i = 0; i < ndim; i++) {
    if (size[i] == 0) empty = 1;
    last += (size[i] - 1) * stride[i];
  }
  if (!empty && (off < 0 || last >= numel))
    return mt_fail("as_strided: the view reads storage elements %lld..%lld but the input %s holds "
                   "%lld..%lld; its gradient is not defined", (long long)offset + 1,
                   (long long)(last + x->offset + 1), mt_shape_str(x, b, sizeof b), (long long)x->offset + 1,
                   (long long)(x->offset + numel));
  if (!view_overlaps(ndim, size, stride)) {
    vspec s = {.kind = K_STRIDED, .n = ndim, .nd = ndim, .off = off};
    memcpy(s.p, size, sizeof(int64_t) * (size_t)ndim);
    memcpy(s.q, stride, sizeof(int64_t) * (size_t)ndim);
    return record_spec(r, x, &s, apply_names[K_STRIDED], apply_backward);
  }
  mt_tensor pos = {0};
  if (strided_positions(&pos, numel, ndim, size, stride, off)) return -1;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node("AsStridedBackward", strided_backward, 1, in);
  if (!n) { mt_tensor_release(&pos); return mt_fail("as_strided: out of memory recording the graph"); }
  mt_ag_save(n, &pos, 0);
  mt_tensor_release(&pos);
  return mt_ag_attach(r, n);
}

int mt_ag_record_split(mt_tensor *const *parts, const mt_tensor *x, int dim, const int64_t *sizes, int64_t n) {
  dim = wrap(dim, x->ndim);
  int64_t off = 0;
  for (int64_t i = 0; i < n; i++) {
    vspec s = {.kind = K_NARROW, .p = {dim, off, sizes[i]}};
    if (record_spec(parts[i], x, &s, "SplitBackward", apply_backward)) return -1;
    off += sizes[i];
  }
  return 0;
}

/* ---- repeat: g summed over the copies, one dim at a time ---- */
static int repeat_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  int nr = n->dims[0], lead = nr - n->in_ndim[0];
  int64_t shape[MT_MAX_DIMS + 1];
  mt_tensor cur = {0};
  mt_ag_alias(&cur, g);
  for (int i = 0; i < nr && !ag_failed; i++) {
    int64_t reps = n->extra[i], size = i < lead ? 1 : n->in_shape[0][i - lead];
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
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

int mt_ag_record_repeat(mt_tensor *r, const mt_tensor *x, const int64_t *reps, int n) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *nd = mt_ag_new_node_extra("RepeatBackward", repeat_backward, 1, in, (size_t)n);
  if (!nd) return mt_fail("repeat: out of memory recording the graph");
  nd->dims[0] = n;
  memcpy(nd->extra, reps, sizeof(int64_t) * (size_t)n);
  return mt_ag_attach(r, nd);
}

/* ---- cat and stack ----
   A node has at most MT_AG_MAX_EDGES edges, so a long list becomes a tree:
   an inner edge (bit k of mask) stands for a run of inputs, its "input"
   being the slice of the result they fill (recorded from a tensor that has
   only that geometry). */
static int cat_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  int dim = n->dims[0], stack = n->op;
  int64_t off = 0;
  for (int k = 0; k < n->nedges && !ag_failed; k++) {
    int inner = (n->mask >> k) & 1;
    int skipped = !inner && !stack && n->in_ndim[k] == 1 && n->in_shape[k][0] == 0 && g->ndim != 1;
    int64_t len = skipped ? 0 : inner || !stack ? n->in_shape[k][dim] : 1;
    if (n->next[k].node && !skipped) {
      mt_tensor d = stack && !inner ? ag_select(g, dim, off) : ag_narrow(g, dim, off, len);
      gi[k] = ag_cast(&d, n->in_dtype[k]);
      ag_drop(&d);
    }
    off += len;
  }
  return ag_done();
}

static int64_t cat_len(const mt_tensor *t, const mt_tensor *r, int dim, int stack) {
  if (stack) return 1;
  if (t->ndim == 1 && t->shape[0] == 0 && r->ndim != 1) return 0;
  return t->shape[dim];
}

static mt_node *cat_tree(const mt_tensor *const *ts, int n, const mt_tensor *r, int dim, int stack) {
  const char *name = stack ? "StackBackward" : "CatBackward";
  if (n <= MT_AG_MAX_EDGES) {
    mt_node *nd = mt_ag_new_node(name, cat_backward, n, ts);
    if (nd) { nd->op = stack; nd->dims[0] = dim; }
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
    for (int i = lo; i < lo + cnt; i++) slice[k].shape[dim] += cat_len(ts[i], r, dim, stack);
    in[k] = &slice[k];
    sub[k] = cat_tree(ts + lo, cnt, r, dim, stack);
    if (!sub[k]) { for (int j = 0; j < k; j++) mt_ag_node_release(sub[j]); return NULL; }
  }
  mt_node *nd = mt_ag_new_node(name, cat_backward, groups, in);
  if (!nd) { for (int j = 0; j < groups; j++) mt_ag_node_release(sub[j]); return NULL; }
  nd->op = stack;
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

int mt_ag_record_cat(mt_tensor *r, const mt_tensor *const *ts, int n, int dim, int stack) {
  if (!mt_ag_grad_enabled() || !mt_dtype_is_float(r->dtype) || r->ndim == 0) return 0;
  int any = 0;
  for (int i = 0; i < n && !any; i++) any = mt_ag_requires_grad(ts[i]);
  if (!any) return 0;
  dim = wrap(dim, r->ndim);
  mt_node *nd = cat_tree(ts, n, r, dim, stack);
  if (!nd) return mt_fail("%s: out of memory recording the graph", stack ? "stack" : "cat");
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

int mt_ag_record_index_mask(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask) {
  return record_index(I_MASK, r, x, 0, mask, 0);
}

/* x[index]: index_select on dim 0 with the flattened index, reshaped */
static int index_tensor_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *idx;
  if (mt_ag_saved(n, 0, &idx)) return -1;
  ag_failed = 0;
  int64_t shape[MT_MAX_DIMS];
  int nd = n->in_ndim[0];
  shape[0] = idx->shape[0];
  for (int d = 1; d < nd; d++) shape[d] = n->in_shape[0][d];
  mt_tensor flat = ag_reshape(g, nd, shape);
  mt_tensor d = ag_index(I_ADD, &flat, 0, idx, n->dims[1], nd, n->in_shape[0]);
  ag_drop(&flat);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]); else ag_drop(&d);
  return ag_done();
}

int mt_ag_record_index_tensor(mt_tensor *r, const mt_tensor *x, const mt_tensor *index, int64_t base) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype) || x->ndim == 0) return 0;
  int64_t numel = mt_numel(index);
  mt_tensor flat = {0};
  if (mt_reshape(&flat, index, 1, &numel)) return -1;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node("IndexBackward", index_tensor_backward, 1, in);
  if (!n) { mt_tensor_release(&flat); return mt_fail("index: out of memory recording the graph"); }
  n->dims[1] = (int)base;
  mt_ag_save(n, &flat, 0);
  mt_tensor_release(&flat);
  return mt_ag_attach(r, n);
}

/* ---- where, masked_fill ---- */
static int where_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi);

static int record_where(mt_tensor *r, const mt_tensor *cond, const mt_tensor *a, const mt_tensor *b) {
  if (!ag_any_requires_grad(a, b) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[2] = {a, b};
  mt_node *n = mt_ag_new_node("WhereBackward", where_backward, 2, in);
  if (!n) return mt_fail("where: out of memory recording the graph");
  mt_ag_save(n, cond, 0);
  return mt_ag_attach(r, n);
}

mt_tensor ag_where_ops(const mt_tensor *cond, const mt_operand *a, const mt_operand *b) {
  mt_tensor r = {0};
  if (ag_failed || !cond->storage || (a->t && !a->t->storage) || (b->t && !b->t->storage)) {
    ag_failed = 1;
    return r;
  }
  if (mt_where(&r, cond, a, b, MT_FLOAT32) || record_where(&r, cond, a->t, b->t)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

/* tensors, NULL standing for 0 */
static mt_tensor ag_where(const mt_tensor *cond, const mt_tensor *a, const mt_tensor *b) {
  mt_operand oa = {a, 0, 0}, ob = {b, 0, 0};
  return ag_where_ops(cond, &oa, &ob);
}

static int where_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *cond;
  if (mt_ag_saved(n, 0, &cond)) return -1;
  ag_failed = 0;
  for (int k = 0; k < 2; k++) {
    if (!n->next[k].node) continue;
    mt_tensor d = k == 0 ? ag_where(cond, g, NULL) : ag_where(cond, NULL, g);
    if (!ag_failed) ag_finish(n, k, &d, &gi[k]); else ag_drop(&d);
  }
  return ag_done();
}

int mt_ag_record_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b) {
  return record_where(r, cond, a->t, b->t);
}

/* masked_fill: x's gradient is g where the mask is clear, value's the sum
   of g where it is set -- the same as where(mask, value, x) */
int mt_ag_record_masked_fill(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value) {
  return record_where(r, mask, value, x);
}

