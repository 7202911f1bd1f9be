/* ag_linalg.c: derivatives of the matrix products, written with recording
   ops (ag_matmul below, ag_mm, reshape, transpose, sum) so that create_graph
   gives higher-order gradients.

   matmul: a 1-D a is a row (1, K), a 1-D b a column (K, 1), batch dims
   broadcast; with g viewed as (batch..., M, N):
     da = sum_to(g @ b^T, a's shape)     db = sum_to(a^T @ g, b's shape)
   The add* ops: r = beta * input + alpha * product, so input gets beta * g
   (summed to its broadcast shape) and the factors the product's
   derivatives of alpha * g. */
#include <string.h>
#include "ag.h"
#include "ag_expr.h"
#include "ag_linalg.h"
#include "../tensor/mt_linalg.h"

/* ---- the recording matmul the derivatives use ---- */
static mt_tensor ag_matmul(const mt_tensor *a, const mt_tensor *b) {
  mt_tensor r = {0};
  if (ag_failed || !a->storage || !b->storage) { ag_failed = 1; return r; }
  if (mt_matmul(&r, a, b) || mt_ag_record_matmul(&r, a, b)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

/* x with its last two dims swapped */
static mt_tensor ag_mT(const mt_tensor *x) { return ag_transpose(x, x->ndim - 2, x->ndim - 1); }

mt_tensor ag_as(const mt_tensor *x, int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (x->ndim == ndim && !memcmp(x->shape, shape, sizeof(int64_t) * (size_t)ndim)) {
    mt_ag_alias(&r, x);
    return r;
  }
  return ag_reshape(x, ndim, shape);
}

/* ag_sum_to, passing a failure on */
static mt_tensor sum_to(const mt_tensor *g, int ndim, const int64_t *shape) {
  if (ag_failed || !g->storage) { mt_tensor r = {0}; ag_failed = 1; return r; }
  return ag_sum_to(g, ndim, shape);
}

/* l @ r (both 2-D) laid out like the matrix `like`, whose gradient it is:
   for a transposed (column-major) `like`, such as the weight of a linear
   layer read as weight:t(), the product is computed as (r^T @ l^T)^T, so
   it comes out column-major too and accumulating it needs no transposing
   copy (PyTorch's mm backward makes the same choice). */
static mt_tensor mm_like(const mt_tensor *l, const mt_tensor *r, const mt_tensor *like) {
  if (!ag_failed && like->ndim == 2 && like->shape[0] > 1 && like->shape[1] > 1 && like->stride[0] == 1 &&
      like->stride[1] >= like->shape[0]) {
    mt_tensor rt = ag_mT(r), lt = ag_mT(l), p = ag_mm(&rt, &lt), q = ag_mT(&p);
    ag_drop(&rt); ag_drop(&lt); ag_drop(&p);
    return q;
  }
  return ag_mm(l, r);
}

/* The gradients of matmul(a, b) for the result's gradient g, in a's and
   b's shapes (ga, gb left empty when not wanted). */
static void matmul_grads(const mt_tensor *a, const mt_tensor *b, const mt_tensor *g, int want_a,
                         int want_b, mt_tensor *ga, mt_tensor *gb) {
  int64_t s[MT_MAX_DIMS];
  const int64_t K = a->shape[a->ndim - 1];
  const int64_t M = a->ndim > 1 ? a->shape[a->ndim - 2] : 1;
  const int64_t N = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
  mt_tensor a2 = {0}, b2 = {0}, g2 = {0};
  s[0] = 1; s[1] = K;
  a2 = a->ndim == 1 ? ag_reshape(a, 2, s) : ag_as(a, a->ndim, a->shape);
  s[0] = K; s[1] = 1;
  b2 = b->ndim == 1 ? ag_reshape(b, 2, s) : ag_as(b, b->ndim, b->shape);
  int nbatch = g->ndim - (a->ndim > 1) - (b->ndim > 1);
  if (nbatch < 0) { ag_failed = 1; mt_fail("matmul backward: gradient of the wrong shape"); }
  if (ag_failed) { ag_drop(&a2); ag_drop(&b2); return; }
  memcpy(s, g->shape, sizeof(int64_t) * (size_t)nbatch);
  s[nbatch] = M; s[nbatch + 1] = N;
  g2 = ag_as(g, nbatch + 2, s);
  int both_2d = a2.ndim == 2 && b2.ndim == 2;
  if (want_a) {                                  /* g @ b^T */
    mt_tensor bt = ag_mT(&b2), p = both_2d ? mm_like(&g2, &bt, &a2) : ag_matmul(&g2, &bt);
    mt_tensor q = sum_to(&p, a2.ndim, a2.shape);
    *ga = ag_as(&q, a->ndim, a->shape);
    ag_drop(&bt); ag_drop(&p); ag_drop(&q);
  }
  if (want_b) {                                  /* a^T @ g */
    mt_tensor p = {0}, q = {0};
    if (b2.ndim == 2 && a2.ndim > 2) {           /* a stack times one matrix: one mm */
      int64_t rows = a2.shape[a2.ndim - 2];
      for (int i = 0; i < a2.ndim - 2; i++) rows *= a2.shape[i];
      s[0] = rows; s[1] = K;
      mt_tensor af = ag_reshape(&a2, 2, s), aft = ag_mT(&af);
      s[1] = N;
      mt_tensor gf = ag_reshape(&g2, 2, s);
      q = mm_like(&aft, &gf, &b2);
      ag_drop(&af); ag_drop(&aft); ag_drop(&gf);
    } else {
      mt_tensor at = ag_mT(&a2);
      p = both_2d ? mm_like(&at, &g2, &b2) : ag_matmul(&at, &g2);
      q = sum_to(&p, b2.ndim, b2.shape);
      ag_drop(&at);
    }
    *gb = ag_as(&q, b->ndim, b->shape);
    ag_drop(&p); ag_drop(&q);
  }
  ag_drop(&a2); ag_drop(&b2); ag_drop(&g2);
}

/* The gradients of outer(a, b) for g (M, N): g @ b and a @ g. */
static void outer_grads(const mt_tensor *a, const mt_tensor *b, const mt_tensor *g, int want_a,
                        int want_b, mt_tensor *ga, mt_tensor *gb) {
  if (want_a) *ga = ag_matmul(g, b);
  if (want_b) *gb = ag_matmul(a, g);
}

/* gradient i, cast to the input's dtype; takes t */
static void finish_as_is(mt_node *n, int i, mt_tensor *t, mt_tensor *out) {
  if (!t->storage) return;
  if (ag_failed) { ag_drop(t); return; }
  *out = ag_cast(t, n->in_dtype[i]);
  ag_drop(t);
}

/* ---- matmul, mm, mv, dot, bmm, outer ---- */
enum { KIND_MATMUL, KIND_OUTER };

static int product_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *a, *b;
  if (mt_ag_saved(n, 0, &a) || mt_ag_saved(n, 1, &b)) return -1;
  ag_failed = 0;
  mt_tensor ga = {0}, gb = {0};
  int want_a = n->next[0].node != NULL, want_b = n->next[1].node != NULL;
  if (n->op == KIND_OUTER) outer_grads(a, b, g, want_a, want_b, &ga, &gb);
  else matmul_grads(a, b, g, want_a, want_b, &ga, &gb);
  finish_as_is(n, 0, &ga, &gi[0]);
  finish_as_is(n, 1, &gb, &gi[1]);
  return ag_done();
}

static int record_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, int kind, const char *name) {
  if (!ag_any_requires_grad(a, b) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[2] = {a, b};
  mt_node *n = mt_ag_new_node(name, product_backward, 2, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", name);
  n->op = kind;
  mt_ag_save(n, a, 0);
  mt_ag_save(n, b, 0);
  return mt_ag_attach(r, n);
}

int mt_ag_record_matmul(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  if (a->ndim == 2 && b->ndim == 2) return mt_ag_record_mm(r, a, b);
  const char *name = "MatmulBackward";
  if (a->ndim == 1 && b->ndim == 1) name = "DotBackward";
  else if (a->ndim == 2 && b->ndim == 1) name = "MvBackward";
  else if (a->ndim == 3 && b->ndim == 3 && a->shape[0] == b->shape[0]) name = "BmmBackward";
  return record_product(r, a, b, KIND_MATMUL, name);
}

int mt_ag_record_outer(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  return record_product(r, a, b, KIND_OUTER, "OuterBackward");
}

/* ---- beta * input + alpha * product ---- */
static const char *const addprod_names[] = {
  [MT_AG_ADDMM] = "AddmmBackward", [MT_AG_ADDMV] = "AddmvBackward", [MT_AG_ADDR] = "AddrBackward",
  [MT_AG_BADDBMM] = "BaddbmmBackward", [MT_AG_ADDBMM] = "AddbmmBackward",
};


static int addprod_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  const mt_tensor *a, *b;
  if (mt_ag_saved(n, 0, &a) || mt_ag_saved(n, 1, &b)) return -1;
  ag_failed = 0;
  double beta = n->scalar2, alpha = n->scalar;
  if (n->next[0].node) {
    mt_tensor gin = {0};
    if (beta == 1) mt_ag_alias(&gin, g); else gin = ag_bins(MT_OP_mul, g, beta);
    if (!ag_failed) ag_finish(n, 0, &gin, &gi[0]); else ag_drop(&gin);
  }
  int want_a = n->next[1].node != NULL, want_b = n->next[2].node != NULL;
  if (want_a || want_b) {
    mt_tensor gp = {0}, ga = {0}, gb = {0};
    if (alpha == 1) mt_ag_alias(&gp, g); else gp = ag_bins(MT_OP_mul, g, alpha);
    if (n->op == MT_AG_ADDBMM) {                 /* the sum over batches: expand g back */
      int64_t s[3] = {1, g->shape[0], g->shape[1]};
      mt_tensor u = ag_reshape(&gp, 3, s);
      s[0] = a->shape[0];
      mt_tensor e = ag_expand(&u, 3, s);
      ag_drop(&u); ag_drop(&gp);
      gp = e;
    }
    if (!ag_failed) {
      if (n->op == MT_AG_ADDR) outer_grads(a, b, &gp, want_a, want_b, &ga, &gb);
      else matmul_grads(a, b, &gp, want_a, want_b, &ga, &gb);
    }
    ag_drop(&gp);
    finish_as_is(n, 1, &ga, &gi[1]);
    finish_as_is(n, 2, &gb, &gi[2]);
  }
  return ag_done();
}

int mt_ag_record_addprod(mt_tensor *r, mt_ag_addprod kind, const mt_tensor *input, const mt_tensor *a,
                         const mt_tensor *b, double beta, double alpha) {
  if (!mt_dtype_is_float(r->dtype) || !mt_ag_grad_enabled() ||
      !(mt_ag_requires_grad(input) || mt_ag_requires_grad(a) || mt_ag_requires_grad(b)))
    return 0;
  const mt_tensor *in[3] = {input, a, b};
  const char *name = addprod_names[kind];
  mt_node *n = mt_ag_new_node(name, addprod_backward, 3, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", name);
  n->op = (int)kind;
  n->scalar = alpha;
  n->scalar2 = beta;
  mt_ag_save(n, a, 0);
  mt_ag_save(n, b, 0);
  return mt_ag_attach(r, n);
}
