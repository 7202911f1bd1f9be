/* ag_reduce.c: derivatives of the reductions, scans and softmax, written
   with recording ops (ag_expr.h), so create_graph gives higher-order
   gradients. The registry's reductions (sum, mean, amax, var, norm, ...)
   take the derivative written in their entry (src/ops/registry.h), in the
   formula language of ag_formula.h with the reductions' own words (EXPAND,
   SUMR, N, P, NAMED); the two too long for one expression (prod_grad,
   norm_grad) are here, and so is cumprod_grad, for the ops along a dim
   (cumsum, cumprod, softmax, log_softmax) that share their expansion. The
   median of every element records here too, with amax's rule.

   Node fields used: op (the registry op),
   dims[0] (the dim), dims[1] (the result's dtype, which x is cast to
   first), mask, keepdim, scalar (the op's parameter: p, correction). */
#include <math.h>
#include <string.h>
#include "ag.h"
#include "ag_formula.h"
#include "../ops/dispatch.h"
#include "ag_reduce.h"
#include "../tensor/mt_reduce.h"

static int record_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, double param,
                         int dim);

/* ---- helpers ---- */
static uint32_t clip_mask(int ndim, uint32_t mask) {
  if (ndim <= 0) return 0;
  return mask & (ndim >= 32 ? 0xffffffffu : (1u << ndim) - 1);
}

/* x's shape with the reduced dims set to 1; returns how many elements
   each output element reduces */
static int64_t kept_shape(const mt_node *n, int64_t *kept) {
  int64_t count = 1;
  for (int d = 0; d < n->in_ndim[0]; d++) {
    int reduced = (n->mask >> d) & 1;
    kept[d] = reduced ? 1 : n->in_shape[0][d];
    if (reduced) count *= n->in_shape[0][d];
  }
  return count;
}

/* t (the output's shape, keepdim or not) reshaped to the kept shape */
static mt_tensor to_kept(const mt_node *n, const mt_tensor *t) {
  int64_t kept[MT_MAX_DIMS];
  kept_shape(n, kept);
  return ag_reshape(t, n->in_ndim[0], kept);
}

/* a mask tensor (bool or other) as dtype, never recorded */
static mt_tensor as_dtype(const mt_tensor *t, int dtype) { return ag_cast(t, dtype); }

/* *found = whether x holds a 0 (read without history) */
static int holds_zero(const mt_tensor *x, int *found) {
  mt_tensor eq = {0}, any = {0};
  mt_operand a = {x, 0, 0}, zero = {NULL, 0, 0};
  int rc = mt_call_binary(&eq, &a, &zero, MT_OP_eq, 1, 0, MT_FLOAT32) ||
           mt_call_reduce(&any, &eq, MT_OP_any, MT_ALL_DIMS, 0, -1, 0, MT_FLOAT32);
  double v = 0;
  if (!rc) rc = mt_item(&any, &v);
  if (!rc) *found = v != 0;
  mt_tensor_release(&eq);
  mt_tensor_release(&any);
  return rc ? -1 : 0;
}

/* where(cond, t, 0) and where(cond, v, t) */
static mt_tensor where_else0(const mt_tensor *cond, const mt_tensor *t) {
  mt_operand a = {t, 0, 0}, zero = {NULL, 0, 0};
  return ag_where_ops(cond, &a, &zero);
}
static mt_tensor where_value(const mt_tensor *cond, double v, const mt_tensor *t) {
  mt_operand a = {NULL, v, 0}, b = {t, 0, 0};
  return ag_where_ops(cond, &a, &b);
}

/* ---- recording ops used by the derivatives ---- */
static mt_tensor ag_along(mt_op op, const mt_tensor *x, int dim) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_call_along(&r, (mt_tensor *)x, op, dim, -1, 0)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}
static mt_tensor ag_cumsum(const mt_tensor *x, int dim) { return ag_along(MT_OP_cumsum, x, dim); }
static mt_tensor ag_cumprod(const mt_tensor *x, int dim) { return ag_along(MT_OP_cumprod, x, dim); }

/* the cumulative sum along dim from the far end */
static mt_tensor reverse_cumsum(const mt_tensor *t, int dim) {
  mt_tensor f = ag_flip(t, dim), c = ag_cumsum(&f, dim), r = ag_flip(&c, dim);
  ag_drop(&f); ag_drop(&c);
  return r;
}

/* prod_{k < i} x_k along dim: a cumprod of x shifted one place, 1 first */
static mt_tensor exclusive_cumprod(const mt_tensor *x, int dim) {
  mt_tensor ones = {0}, r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  int64_t shape[MT_MAX_DIMS], len = x->shape[dim];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  shape[dim] = 1;
  if (mt_tensor_init_like(&ones, x->dtype, x->ndim, shape, x) || mt_fill(&ones, 1)) {
    mt_tensor_release(&ones);
    ag_failed = 1;
    return r;
  }
  if (len == 1) return ones;
  mt_tensor head = ag_narrow(x, dim, 0, len - 1);
  const mt_tensor *parts[2] = {&ones, &head};
  mt_tensor shifted = ag_cat(parts, 2, dim);
  r = ag_cumprod(&shifted, dim);
  mt_tensor_release(&ones);
  ag_drop(&head); ag_drop(&shifted);
  return r;
}

/* ---- prod: the product of the others, zeros included ----
   With z = (x == 0) and x1 = x + z (zeros replaced by ones), p1 = prod(x1):
   no zero in the slice: p1 / x1; one zero: p1 at the zero, 0 elsewhere;
   two or more: 0. So d = g (p1 / x1) w, w = [nz == 0] + [nz == 1] z.
   The masks w are constants, which is right to first order only: under
   create_graph, an x holding zeros takes others_product instead. */

/* prod_{k != i} x_k over the node's reduced dims, exact and differentiable
   at zeros: with those dims moved last and flattened into one, the
   exclusive cumprod from the left times the one from the right */
static mt_tensor others_product(const mt_node *n, const mt_tensor *x) {
  int nd = x->ndim, perm[MT_MAX_DIMS], inverse[MT_MAX_DIMS], k = 0;
  int64_t flat[MT_MAX_DIMS], moved[MT_MAX_DIMS], len = 1;
  for (int d = 0; d < nd; d++)
    if (!((n->mask >> d) & 1)) { flat[k] = x->shape[d]; perm[k++] = d; }
  int kept = k;
  for (int d = 0; d < nd; d++)
    if ((n->mask >> d) & 1) { len *= x->shape[d]; perm[k++] = d; }
  flat[kept] = len;
  for (int i = 0; i < nd; i++) { inverse[perm[i]] = i; moved[i] = x->shape[perm[i]]; }
  mt_tensor p = ag_permute(x, perm), f = ag_reshape(&p, kept + 1, flat);
  mt_tensor left = exclusive_cumprod(&f, kept), fr = ag_flip(&f, kept);
  mt_tensor rr = exclusive_cumprod(&fr, kept), right = ag_flip(&rr, kept);
  mt_tensor o = ag_bin(MT_OP_mul, &left, &right), om = ag_reshape(&o, nd, moved);
  mt_tensor r = ag_permute(&om, inverse);
  ag_drop(&p); ag_drop(&f); ag_drop(&left); ag_drop(&fr); ag_drop(&rr); ag_drop(&right); ag_drop(&o);
  ag_drop(&om);
  return r;
}

static ag_v prod_grad(mt_node *n, ag_v G, ag_v X, ag_v R) {
  (void)R;
  int dt = n->dims[1], zeros = 0;
  mt_tensor xx = ag_cast(X.t, dt), gk = to_kept(n, G.t);
  if (!ag_failed && n->in_ndim[0] > 0 && mt_ag_grad_enabled() && holds_zero(&xx, &zeros)) ag_failed = 1;
  if (zeros) {
    mt_tensor others = others_product(n, &xx);
    mt_tensor d = ag_bin(MT_OP_mul, &gk, &others);
    ag_drop(&xx); ag_drop(&gk); ag_drop(&others);
    return ag_keep(d);
  }
  mt_tensor xd = {0};
  mt_tensor_alias(&xd, &xx);                     /* no history: for the constants */
  mt_tensor zb = ag_bins(MT_OP_eq, &xd, 0), z = as_dtype(&zb, dt);
  mt_tensor nz = ag_sum(&z, n->mask, 1);
  mt_tensor b0 = ag_bins(MT_OP_eq, &nz, 0), b1 = ag_bins(MT_OP_eq, &nz, 1);
  mt_tensor f0 = as_dtype(&b0, dt), f1 = as_dtype(&b1, dt);
  mt_tensor f1z = ag_bin(MT_OP_mul, &f1, &z), w = ag_bin(MT_OP_add, &f0, &f1z);
  mt_tensor x1 = ag_bin(MT_OP_add, &xx, &z);     /* recorded: d x1 / d x = 1 */
  mt_tensor p1 = ag_reduce(MT_OP_prod, &x1, n->mask, 1, 0);
  mt_tensor q = ag_bin(MT_OP_div, &p1, &x1);
  mt_tensor qw = ag_bin(MT_OP_mul, &q, &w);
  mt_tensor d = ag_bin(MT_OP_mul, &gk, &qw);
  mt_tensor_release(&xd);
  ag_drop(&xx); ag_drop(&gk); ag_drop(&zb); ag_drop(&z); ag_drop(&nz); ag_drop(&b0); ag_drop(&b1);
  ag_drop(&f0); ag_drop(&f1); ag_drop(&f1z); ag_drop(&w); ag_drop(&x1); ag_drop(&p1); ag_drop(&q);
  ag_drop(&qw);
  return ag_keep(d);
}

/* ---- cumprod: d x_i = sum_{j >= i} g_j prod_{k <= j, k != i} x_k ----
   No zero in x: the reverse cumsum of g * out, over x (differentiable
   again). Zeros, first order: before a slice's first zero the same (out
   vanishes from the zero on); at the first zero, the sum over j >= it of g_j
   times the cumprod of x with that zero read as 1; after it, 0. Under
   create_graph that 0 is wrong (its derivative in the first zero is not),
   so with zeros the sum runs over an explicit pair dim (i, j) instead: the
   cumprod along j of x with x_i read as 1. That costs len(dim) times x's
   size, bounded by AG_CUMPROD_PAIRS_MAX elements (128 MB in float64). */
#define AG_CUMPROD_PAIRS_MAX ((int64_t)1 << 24)

static mt_tensor cumprod_grad_nonzero(const mt_tensor *x, const mt_tensor *out, const mt_tensor *g, int dim) {
  mt_tensor w = ag_bin(MT_OP_mul, g, out), s = reverse_cumsum(&w, dim);
  mt_tensor d = ag_bin(MT_OP_div, &s, x);
  ag_drop(&w); ag_drop(&s);
  return d;
}

static mt_tensor cumprod_grad_zeros(const mt_tensor *x, const mt_tensor *out, const mt_tensor *g, int dim, int dt) {
  mt_tensor xd = {0};
  mt_tensor_alias(&xd, x);                       /* no history: for the masks */
  mt_tensor zb = ag_bins(MT_OP_eq, &xd, 0), z = as_dtype(&zb, dt), seen = ag_cumsum(&z, dim);
  mt_tensor before = ag_bins(MT_OP_eq, &seen, 0), one_seen = ag_bins(MT_OP_eq, &seen, 1);
  mt_tensor first = ag_bin(MT_OP_logical_and, &zb, &one_seen), from_first = ag_bins(MT_OP_ge, &seen, 1);
  /* before the first zero */
  mt_tensor x1 = ag_bin(MT_OP_add, x, &z), t1 = cumprod_grad_nonzero(&x1, out, g, dim);
  mt_tensor part1 = where_else0(&before, &t1);
  /* at the first zero */
  mt_tensor xo = where_value(&first, 1, x), co = ag_cumprod(&xo, dim), gco = ag_bin(MT_OP_mul, g, &co);
  mt_tensor gm = where_else0(&from_first, &gco);
  mt_tensor s = ag_sum(&gm, 1u << dim, 1), part2 = where_else0(&first, &s);
  mt_tensor d = ag_bin(MT_OP_add, &part1, &part2);
  mt_tensor_release(&xd);
  ag_drop(&zb); ag_drop(&z); ag_drop(&seen); ag_drop(&before); ag_drop(&one_seen); ag_drop(&first);
  ag_drop(&from_first); ag_drop(&x1); ag_drop(&t1); ag_drop(&part1); ag_drop(&xo); ag_drop(&co);
  ag_drop(&gco); ag_drop(&gm); ag_drop(&s); ag_drop(&part2);
  return d;
}

/* bool constants over the pair dims (i at dim, j at dim + 1) of a tensor of
   ndim dims: i == j (upper 0) or j >= i (upper 1) */
static int pair_mask(mt_tensor *m, int ndim, int dim, int64_t len, int upper, const mt_tensor *like) {
  int64_t shape[MT_MAX_DIMS];
  for (int d = 0; d < ndim; d++) shape[d] = d == dim || d == dim + 1 ? len : 1;
  mt_tensor h = {0};
  if (mt_tensor_init(&h, MT_BOOL, ndim, shape)) return -1;
  char *p = mt_data(&h);
  for (int64_t i = 0; i < len; i++)
    for (int64_t j = 0; j < len; j++) mt_set_i64(MT_BOOL, p + i * len + j, upper ? j >= i : j == i);
  if (mt_same_device(&h, like)) { *m = h; return 0; }
  int rc = mt_tensor_init_like(m, MT_BOOL, ndim, shape, like) || mt_copy(m, &h);   /* made here, used on like's device */
  mt_tensor_release(&h);
  return rc ? -1 : 0;
}

static mt_tensor cumprod_grad_pairs(const mt_tensor *x, const mt_tensor *g, int dim) {
  mt_tensor d = {0};
  int nd = x->ndim;
  int64_t len = x->shape[dim], pairs = mt_numel(x) * len;
  if (nd >= MT_MAX_DIMS || pairs > AG_CUMPROD_PAIRS_MAX) {
    if (nd >= MT_MAX_DIMS)
      mt_fail("cumprod: a create_graph backward through an input holding zeros needs one dim more than "
              "the %d-dim input has room for; use create_graph=false there", nd);
    else
      mt_fail("cumprod: a create_graph backward through an input holding zeros needs %lld elements "
              "(the input's %lld times its length %lld along dim %d), more than the %lld allowed; use "
              "create_graph=false there, or an input without exact zeros", (long long)pairs,
              (long long)mt_numel(x), (long long)len, dim + 1, (long long)AG_CUMPROD_PAIRS_MAX);
    ag_failed = 1;
    return d;
  }
  int64_t one[MT_MAX_DIMS], both[MT_MAX_DIMS];
  for (int k = 0, s = 0; k <= nd; k++) {         /* x's shape with i inserted at dim */
    one[k] = k == dim ? 1 : x->shape[s];
    both[k] = k == dim ? len : x->shape[s];
    if (k != dim) s++;
  }
  mt_tensor diag = {0}, upper = {0};
  if (pair_mask(&diag, nd + 1, dim, len, 0, x) || pair_mask(&upper, nd + 1, dim, len, 1, x)) ag_failed = 1;
  mt_tensor xu = ag_reshape(x, nd + 1, one), xe = ag_expand(&xu, nd + 1, both);
  mt_tensor xm = where_value(&diag, 1, &xe), c = ag_cumprod(&xm, dim + 1);
  mt_tensor gu = ag_reshape(g, nd + 1, one), gc = ag_bin(MT_OP_mul, &c, &gu);
  mt_tensor gm = where_else0(&upper, &gc);
  d = ag_sum(&gm, 1u << (dim + 1), 0);
  mt_tensor_release(&diag); mt_tensor_release(&upper);
  ag_drop(&xu); ag_drop(&xe); ag_drop(&xm); ag_drop(&c); ag_drop(&gu); ag_drop(&gc); ag_drop(&gm);
  return d;
}

static ag_v cumprod_grad(mt_node *n, ag_v G, ag_v X, ag_v R) {
  const mt_tensor *g = G.t, *x = X.t, *saved_r = R.t;
  int dim = n->dims[0], dt = n->dims[1], zeros = 0, graph = mt_ag_grad_enabled();
  int64_t len = n->in_ndim[0] ? n->in_shape[0][dim] : 1;
  mt_tensor xx = ag_cast(x, dt), out = {0}, d = {0};
  if (len <= 1) {                                /* the identity */
    mt_ag_alias(&d, g);
  } else {
    if (!ag_failed && holds_zero(&xx, &zeros)) ag_failed = 1;
    if (graph && !zeros) out = ag_cumprod(&xx, dim);   /* with history, for create_graph */
    else mt_tensor_alias(&out, saved_r);
    if (!zeros) d = cumprod_grad_nonzero(&xx, &out, g, dim);
    else if (!graph) d = cumprod_grad_zeros(&xx, &out, g, dim, dt);
    else d = cumprod_grad_pairs(&xx, g, dim);
  }
  ag_drop(&xx); ag_drop(&out);
  return ag_keep(d);
}

/* ---- norm: sign(x) |x|^(p-1) / r^(p-1); p = +-inf like amax of |x|; p = 0: none ---- */
static ag_v norm_grad(mt_node *n, ag_v G, ag_v X, ag_v R) {
  const mt_tensor *g = G.t, *x = X.t, *saved_r = R.t;
  double p = n->scalar;
  mt_tensor gk = to_kept(n, g), r = {0}, t = {0}, d = {0};
  if (p == 0) {
    mt_tensor gx = ag_bin(MT_OP_mul, &gk, x);
    d = ag_bins(MT_OP_mul, &gx, 0);
    ag_drop(&gx);
  } else if (p == 1) {
    mt_tensor s = ag_un(MT_OP_sign, x);
    d = ag_bin(MT_OP_mul, &gk, &s);
    ag_drop(&s);
  } else if (isinf(p)) {                         /* positions of the extreme |x|, shared */
    mt_tensor xd = {0}, rk = {0};
    mt_tensor_alias(&xd, x);
    int64_t kept[MT_MAX_DIMS];
    kept_shape(n, kept);
    if (!ag_failed && mt_reshape(&rk, saved_r, n->in_ndim[0], kept)) ag_failed = 1;
    mt_tensor ax = ag_un(MT_OP_abs, &xd), eq = ag_bin(MT_OP_eq, &ax, &rk);
    mt_tensor w = as_dtype(&eq, g->dtype), cnt = ag_sum(&w, n->mask, 1);
    mt_tensor wn = ag_bin(MT_OP_div, &w, &cnt);
    mt_tensor s = ag_un(MT_OP_sign, x);          /* recorded (zero derivative) */
    mt_tensor sw = ag_bin(MT_OP_mul, &s, &wn);
    d = ag_bin(MT_OP_mul, &gk, &sw);
    mt_tensor_release(&xd);
    ag_drop(&rk); ag_drop(&ax); ag_drop(&eq); ag_drop(&w); ag_drop(&cnt); ag_drop(&wn); ag_drop(&s);
    ag_drop(&sw);
  } else {
    r = to_kept(n, saved_r);
    /* r = 0 only where the whole slice is 0: then sign(x) = 0 gives 0 */
    mt_tensor rz = ag_bins(MT_OP_eq, &r, 0), rzf = as_dtype(&rz, r.dtype);
    mt_tensor rs = ag_bin(MT_OP_add, &r, &rzf);
    if (p == 2) {
      t = ag_bin(MT_OP_div, x, &rs);
    } else {
      mt_tensor ax = ag_un(MT_OP_abs, x);
      mt_tensor az = ag_bins(MT_OP_eq, &ax, 0), azf = as_dtype(&az, ax.dtype);
      mt_tensor axs = ag_bin(MT_OP_add, &ax, &azf);
      mt_tensor num = ag_bins(MT_OP_pow, &axs, p - 1), den = ag_bins(MT_OP_pow, &rs, p - 1);
      mt_tensor s = ag_un(MT_OP_sign, x), sn = ag_bin(MT_OP_mul, &s, &num);
      t = ag_bin(MT_OP_div, &sn, &den);
      ag_drop(&ax); ag_drop(&az); ag_drop(&azf); ag_drop(&axs); ag_drop(&num); ag_drop(&den);
      ag_drop(&s); ag_drop(&sn);
    }
    d = ag_bin(MT_OP_mul, &gk, &t);
    ag_drop(&rz); ag_drop(&rzf); ag_drop(&rs);
  }
  ag_drop(&gk); ag_drop(&r); ag_drop(&t);
  return ag_keep(d);
}

/* ---- the registry's reductions: the derivative column, expanded ---- */

/* t, shaped like the result (keepdim or not), broadcast back to the
   input's shape; a number stays a number */
static ag_v f_expand(const mt_node *n, ag_v t) {
  if (!t.t) return t;
  mt_tensor k = to_kept(n, t.t), e = ag_expand(&k, n->in_ndim[0], n->in_shape[0]);
  ag_drop(&k);
  return ag_keep(e);
}
/* t's running sum along an along-dim op's dim */
static ag_v f_cumsum(const mt_node *n, ag_v t) {
  if (!t.t) { ag_failed = 1; mt_fail("%s: CUMSUM of a number", n->name); return agv_t(&ag_failed_value); }
  return ag_keep(ag_cumsum(t.t, n->dims[0]));
}

/* t summed over the reduced dims, kept as ones */
static ag_v f_sumr(const mt_node *n, ag_v t) {
  if (!t.t) { ag_failed = 1; mt_fail("%s: SUMR of a number", n->name); return agv_t(&ag_failed_value); }
  return ag_keep(ag_sum(t.t, n->mask, 1));
}

/* What each reduction's derivative reads */
#define NODERIV NOTHING
#define DERIV(reads, expr) reads
#define OPC(name, kernel, E, deriv, ...) [MT_OP_##name - MT_NUM_POINTWISE_OPS] = deriv,
static const unsigned char reduce_reads[MT_NUM_OPS - MT_NUM_POINTWISE_OPS] = {MT_REDUCE_OPS(OPC, _) MT_ALONG_OPS(OPC, _)};
#undef OPC
#undef DERIV
#undef NODERIV

static int reduce_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  unsigned reads = reduce_reads[n->op - MT_NUM_POINTWISE_OPS];
  const mt_tensor *x = NULL;
  mt_tensor r = {0};                              /* the result, when read */
  if ((reads & INPUT) && mt_ag_saved(n, 0, &x)) return -1;
  if ((reads & RESULT) && mt_ag_saved_result(n, reads & INPUT ? 1 : 0, &r)) return -1;
  ag_failed = 0;
  int mark = ag_scratch_mark();
  int64_t kept[MT_MAX_DIMS];
  const ag_v G = V(grad), X = x ? V(x) : V(&ag_failed_value), R = V((const mt_tensor *)&r);
  const double N = (double)kept_shape(n, kept), P = n->scalar;
  (void)X; (void)R; (void)N; (void)P;
#define EXPAND(t) f_expand(n, V(t))
#define SUMR(t) f_sumr(n, V(t))
#define CUMSUM(t) f_cumsum(n, V(t))
#define NAMED(fn) fn(n, G, X, R)
#define NODERIV ag_failed = 1; mt_fail("%s: no derivative", n->name)
#define DERIV(reads, expr) ag_formula_finish(n, 0, V(expr), mark, &gi[0])
#define OPC(name, kernel, E, deriv, ...) case MT_OP_##name: deriv; break;
  switch ((mt_op)n->op) {
    MT_REDUCE_OPS(OPC, _) MT_ALONG_OPS(OPC, _)
  default: ag_failed = 1; mt_fail("%s: no derivative", n->name); break;
  }
#undef OPC
#undef DERIV
#undef NODERIV
#undef NAMED
#undef CUMSUM
#undef SUMR
#undef EXPAND
  ag_release_scratch(mark);
  ag_drop(&r);
  return ag_done();
}

/* The node of r = op(x) over mask (along dim, for an op along one). */
static int record_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, double param,
                         int dim) {
  if (!mt_op_infos[op].differentiable || !ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(ag_backward_name(op), reduce_backward, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", mt_op_names[op]);
  n->op = op;
  n->mask = clip_mask(x->ndim, mask);
  n->keepdim = keepdim;
  n->scalar = param;
  n->dims[0] = dim;
  n->dims[1] = r->dtype;
  unsigned reads = reduce_reads[op - MT_NUM_POINTWISE_OPS];
  if (reads & INPUT) mt_ag_save(n, x, 0);
  if (reads & RESULT) mt_ag_save(n, r, 1);
  return mt_ag_attach(r, n);
}

int mt_ag_record_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, double param) {
  return record_reduce(r, x, op, mask, keepdim, param, 0);
}

/* an op along dim (checked by its kernel): a reduction's node over that
   dim, kept, with the dim */
int mt_ag_record_along(mt_tensor *r, const mt_tensor *x, mt_op op, int dim) {
  return record_reduce(r, x, op, x->ndim ? 1u << dim : 0, 1, 0, x->ndim ? dim : 0);
}
