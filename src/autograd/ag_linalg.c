/* ag_linalg.c: derivatives of the products (mm, mv, dot, bmm, matmul,
   outer, and the add* ops r = beta * input + alpha * product). Each takes
   the derivative written in its registry entry (src/ops/registry.h), in the
   formula language of ag_formula.h with the products' own words (MM,
   MATMUL, OUTER, MT, NAMED); matmul's general case, too long for one
   expression, is matmul_grad below. The words call products through the
   dispatcher, so create_graph gives higher-order gradients.

   Node fields used: op (the registry op), scalar and scalar2 (alpha and
   beta), dims[0] and dims[1] (the saved slots of the two factors, -1 when
   not saved), mask (bit i: input i is a column-major matrix, for MM). */
#include <string.h>
#include "ag.h"
#include "ag_formula.h"
#include "ag_linalg.h"
#include "../ops/dispatch.h"

/* ---- recording ops ---- */
static mt_tensor ag_product(mt_op op, const mt_tensor *a, const mt_tensor *b) {
  mt_tensor r = {0};
  if (ag_failed || !a->storage || !b->storage) { ag_failed = 1; return r; }
  if (mt_call_product(&r, a, b, op)) { ag_drop(&r); ag_failed = 1; }
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

/* A matrix stored column-major (transposed), with more than one row and
   column: the weight of a linear layer read as weight:t() */
static int column_major(const mt_tensor *t) {
  return t->ndim == 2 && t->shape[0] > 1 && t->shape[1] > 1 && t->stride[0] == 1 && t->stride[1] >= t->shape[0];
}

/* l @ r (both 2-D), column-major when col: computed as (r^T @ l^T)^T, so
   that a column-major input's gradient comes out column-major too and
   accumulating it needs no transposing copy (PyTorch's mm backward makes
   the same choice). */
static mt_tensor mm_laid_out(const mt_tensor *l, const mt_tensor *r, int col) {
  if (!col || ag_failed) return ag_product(MT_OP_mm, l, r);
  mt_tensor rt = ag_mT(r), lt = ag_mT(l), p = ag_product(MT_OP_mm, &rt, &lt), q = ag_mT(&p);
  ag_drop(&rt); ag_drop(&lt); ag_drop(&p);
  return q;
}

/* ---- matmul's general case: vector @ matrix, stacks, broadcast batches ----
   A 1-D a is a row (1, K), a 1-D b a column (K, 1); with g viewed as
   (batch..., M, N): da = sum_to(g @ b^T, a's shape), db = sum_to(a^T @ g,
   b's shape). which: 0 for a's gradient, 1 for b's. */
static mt_tensor matmul_grad_of(const mt_tensor *a, const mt_tensor *b, const mt_tensor *g, int which) {
  int64_t s[MT_MAX_DIMS];
  const int64_t K = a->shape[a->ndim - 1];
  const int64_t M = a->ndim > 1 ? a->shape[a->ndim - 2] : 1;
  const int64_t N = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
  mt_tensor a2 = {0}, b2 = {0}, g2 = {0}, out = {0};
  s[0] = 1; s[1] = K;
  a2 = a->ndim == 1 ? ag_reshape(a, 2, s) : ag_as(a, a->ndim, a->shape);
  s[0] = K; s[1] = 1;
  b2 = b->ndim == 1 ? ag_reshape(b, 2, s) : ag_as(b, b->ndim, b->shape);
  int nbatch = g->ndim - (a->ndim > 1) - (b->ndim > 1);
  if (nbatch < 0 && !ag_failed) { ag_failed = 1; mt_fail("matmul backward: gradient of the wrong shape"); }
  if (ag_failed) { ag_drop(&a2); ag_drop(&b2); return out; }
  memcpy(s, g->shape, sizeof(int64_t) * (size_t)nbatch);
  s[nbatch] = M; s[nbatch + 1] = N;
  g2 = ag_as(g, nbatch + 2, s);
  int both_2d = a2.ndim == 2 && b2.ndim == 2;
  if (which == 0) {                              /* g @ b^T */
    mt_tensor bt = ag_mT(&b2);
    mt_tensor p = both_2d ? mm_laid_out(&g2, &bt, column_major(&a2)) : ag_product(MT_OP_matmul, &g2, &bt);
    mt_tensor q = sum_to(&p, a2.ndim, a2.shape);
    out = ag_as(&q, a->ndim, a->shape);
    ag_drop(&bt); ag_drop(&p); ag_drop(&q);
  } else {                                       /* a^T @ g */
    mt_tensor p = {0}, q = {0};
    if (b2.ndim == 2 && a2.ndim > 2) {           /* a stack times one matrix: one mm */
      int64_t rows = a2.shape[a2.ndim - 2];
      for (int i = 0; i < a2.ndim - 2; i++) rows *= a2.shape[i];
      s[0] = rows; s[1] = K;
      mt_tensor af = ag_reshape(&a2, 2, s), aft = ag_mT(&af);
      s[1] = N;
      mt_tensor gf = ag_reshape(&g2, 2, s);
      q = mm_laid_out(&aft, &gf, column_major(&b2));
      ag_drop(&af); ag_drop(&aft); ag_drop(&gf);
    } else {
      mt_tensor at = ag_mT(&a2);
      p = both_2d ? mm_laid_out(&at, &g2, column_major(&b2)) : ag_product(MT_OP_matmul, &at, &g2);
      q = sum_to(&p, b2.ndim, b2.shape);
      ag_drop(&at);
    }
    out = ag_as(&q, b->ndim, b->shape);
    ag_drop(&p); ag_drop(&q);
  }
  ag_drop(&a2); ag_drop(&b2); ag_drop(&g2);
  return out;
}

static ag_v matmul_grad(mt_node *n, int which, ag_v G, ag_v A, ag_v B) {
  (void)n;
  if (!G.t || !A.t || !B.t) { ag_failed = 1; return agv_t(&ag_failed_value); }
  return ag_keep(matmul_grad_of(A.t, B.t, G.t, which));
}

/* ---- the words ---- */
static ag_v f_product(mt_op op, ag_v l, ag_v r) {
  if (!l.t || !r.t) { ag_failed = 1; mt_fail("backward: a product of a number"); return agv_t(&ag_failed_value); }
  return ag_keep(ag_product(op, l.t, r.t));
}
static ag_v f_mm(const mt_node *n, int which, ag_v l, ag_v r) {
  if (!l.t || !r.t) return f_product(MT_OP_mm, l, r);   /* its error */
  return ag_keep(mm_laid_out(l.t, r.t, (n->mask >> which) & 1));
}
static ag_v f_mT(ag_v t) {
  if (!t.t) { ag_failed = 1; mt_fail("backward: MT of a number"); return agv_t(&ag_failed_value); }
  return ag_keep(ag_mT(t.t));
}

/* ---- the registry's products: what each derivative reads, and the
   derivative column expanded ---- */
static const unsigned char product_reads[MT_NUM_OPS - MT_OP_END_SELECT][3] = {
#define DERIV2(ra, ea, rb, eb) {ra, rb, 0}
#define DERIV3(ri, ei, ra, ea, rb, eb) {ri, ra, rb}
#define OPC(name, kernel, E, deriv, ...) [MT_OP_##name - MT_OP_END_SELECT] = deriv,
  MT_PRODUCT_OPS(OPC, _) MT_ADD_PRODUCT_OPS(OPC, _)
#undef OPC
#undef DERIV3
#undef DERIV2
};

/* The gradient of factor f (0: a, 1: b) of mm or addmm added straight into
   the .grad of the leaf it reaches (mt_ag_direct_grad), by one product with
   beta = 1: d a = alpha g @ b^T, d b = alpha a^T @ g, or their transposes
   for a leaf read through x:t() (a linear layer's weight). Saves the
   product's own buffer and the pass that would add it. 1 when done, 0 when
   the gradient takes the graph, -1 on failure. */
static int product_into_leaf(mt_node *n, int f, const mt_tensor *g, const mt_tensor *a, const mt_tensor *b) {
  if (n->op != MT_OP_mm && n->op != MT_OP_addmm) return 0;
  const int edge = n->nedges - 2 + f;
  const mt_tensor *other = f == 0 ? b : a;     /* the factor this gradient reads */
  int transposed;
  mt_tensor *dst = other && g->ndim == 2 ? mt_ag_direct_grad(n, edge, &transposed) : NULL;
  if (!dst || dst->ndim != 2 || dst->dtype != g->dtype || other->dtype != g->dtype ||
      (g->dtype != MT_FLOAT32 && g->dtype != MT_FLOAT64) || mt_device_of(dst) != MT_CPU ||
      mt_device_of(g) != MT_CPU || mt_device_of(other) != MT_CPU)
    return 0;
  /* the gradient (rows, cols): a's is g's rows by b's rows, b's is a's columns by g's columns */
  const int64_t rows = f == 0 ? g->shape[0] : other->shape[1], cols = f == 0 ? other->shape[0] : g->shape[1];
  if (dst->shape[0] != (transposed ? cols : rows) || dst->shape[1] != (transposed ? rows : cols)) return 0;
  mt_tensor gt = {0}, ot = {0};
  int rc = mt_transpose(&gt, g, 0, 1) || mt_transpose(&ot, other, 0, 1);
  /* f 0: g @ b^T, transposed b @ g^T; f 1: a^T @ g, transposed g^T @ a */
  const mt_tensor *l = f == 0 ? (transposed ? other : g) : (transposed ? &gt : &ot);
  const mt_tensor *r = f == 0 ? (transposed ? &gt : &ot) : (transposed ? other : g);
  if (!rc) rc = mt_call_add_product(dst, dst, l, r, MT_OP_addmm, 1, n->scalar, 1);
  mt_tensor_release(&gt);
  mt_tensor_release(&ot);
  return rc ? -1 : 1;
}

static int product_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *a = NULL, *b = NULL;           /* saved slots in dims[0], dims[1] */
  if (n->dims[0] >= 0 && mt_ag_saved(n, n->dims[0], &a)) return -1;
  if (n->dims[1] >= 0 && mt_ag_saved(n, n->dims[1], &b)) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  const ag_v G = V(grad), A = a ? V(a) : V(&ag_failed_value), B = b ? V(b) : V(&ag_failed_value);
  const double ALPHA = n->scalar, BETA = n->scalar2;
  (void)A; (void)B; (void)ALPHA; (void)BETA;
#define MM(l, r) f_mm(n, which_, V(l), V(r))
#define MATMUL(l, r) f_product(MT_OP_matmul, V(l), V(r))
#define OUTER(l, r) f_product(MT_OP_outer, V(l), V(r))
#define MT(t) f_mT(V(t))
#define NAMED(fn) fn(n, which_, G, A, B)
#define GRAD(i, expr)                                              \
  if (n->next[i].node && !ag_failed) {                             \
    const int which_ = i, f_ = i - (n->nedges - 2);                \
    (void)which_;                                                  \
    const int direct_ = f_ >= 0 ? product_into_leaf(n, f_, grad, a, b) : 0; \
    if (direct_ < 0) ag_failed = 1;                                \
    else if (!direct_) ag_formula_finish(n, i, V(expr), mark, &gi[i]); \
  }
#define DERIV2(ra, ea, rb, eb) GRAD(0, ea) GRAD(1, eb)
#define DERIV3(ri, ei, ra, ea, rb, eb) GRAD(0, ei) GRAD(1, ea) GRAD(2, eb)
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv break;
  switch ((mt_op)n->op) {
    MT_PRODUCT_OPS(OPC, _) MT_ADD_PRODUCT_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV3
#undef DERIV2
#undef GRAD
#undef NAMED
#undef MT
#undef OUTER
#undef MATMUL
#undef MM
  ag_release_scratch(mark);
  return ag_done();
}

/* matmul on the shapes of a simpler product is that product (its node
   name and derivative), as PyTorch's matmul is */
static mt_op product_of_shapes(mt_op op, const mt_tensor *a, const mt_tensor *b) {
  if (op != MT_OP_matmul) return op;
  if (a->ndim == 2 && b->ndim == 2) return MT_OP_mm;
  if (a->ndim == 1 && b->ndim == 1) return MT_OP_dot;
  if (a->ndim == 2 && b->ndim == 1) return MT_OP_mv;
  if (a->ndim == 3 && b->ndim == 3 && a->shape[0] == b->shape[0]) return MT_OP_bmm;
  return op;
}

/* The node of r = op(inputs): the factors a and b are the last two inputs
   (one before them for the add* ops). Saves only the factors the wanted
   gradients read. */
static int record(mt_tensor *r, int ninputs, const mt_tensor *const *in, mt_op op, double alpha, double beta) {
  if (!mt_dtype_is_float(r->dtype) || !mt_ag_grad_enabled()) return 0;
  int any = 0;
  for (int i = 0; i < ninputs; i++) any |= mt_ag_requires_grad(in[i]);
  if (!any) return 0;
  mt_node *n = mt_ag_new_node(ag_backward_name(op), product_backward, ninputs, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->scalar = alpha;
  n->scalar2 = beta;
  n->dims[0] = n->dims[1] = -1;
  unsigned reads = 0;
  const unsigned char *rd = product_reads[op - MT_OP_END_SELECT];
  for (int i = 0; i < ninputs; i++) {
    if (mt_ag_requires_grad(in[i])) reads |= rd[i];
    if (column_major(in[i])) n->mask |= 1u << i;
  }
  int first = ninputs - 2;                       /* the factors' first input */
  for (int f = 0; f < 2; f++)
    if (reads & (1u << f)) { n->dims[f] = n->nsaved; mt_ag_save(n, in[first + f], 0); }
  return mt_ag_attach(r, n);
}

int mt_ag_record_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op) {
  const mt_tensor *in[2] = {a, b};
  return record(r, 2, in, product_of_shapes(op, a, b), 1, 0);
}

int mt_ag_record_add_product(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
                             mt_op op, double beta, double alpha) {
  const mt_tensor *in[3] = {input, a, b};
  return record(r, 3, in, op, alpha, beta);
}
