/* mt_pointwise_param.c: elementwise ops with parameters besides their
   operands -- clamp, softplus, leaky_relu, addcmul/addcdiv, lerp -- each a
   kernel per dtype from the X-macros, run through mt_iter. */
#include <tgmath.h>
#include "mt_ops.h"
#include "mt_iter.h"
#include "mt_kernel.h"
#include "mt_shape.h"
#include "mt_isa.h"

/* Kernels are instantiated for every dtype, bool and unsigned included,
   where some expressions are trivially constant: that is intended. */
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wbool-operation"
#pragma GCC diagnostic ignored "-Wint-in-bool-context"
#pragma GCC diagnostic ignored "-Wbool-compare"

/* Kernel bodies: out = expr over one input (v), two (a, b) or three (a, b,
   c). A flat index loop when every operand steps alike (the case the
   compiler vectorizes), else per-operand strides. */
#define LOOP2(E, expr)                                                          \
  char *o = d[0]; const char *x = d[1];                                         \
  if (s[0] == s[1]) {                                                           \
    for (int64_t i = 0; i < n; i++) { ct v = MT_LOAD_##E(x + i * s[0]); MT_STORE_##E(o + i * s[0], (expr)); } \
  } else {                                                                      \
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) { ct v = MT_LOAD_##E(x); MT_STORE_##E(o, (expr)); } \
  }
#define LOOP3(E, expr)                                                          \
  char *o = d[0]; const char *p1 = d[1], *p2 = d[2];                            \
  if (s[1] == s[0] && s[2] == s[0]) {                                           \
    for (int64_t i = 0; i < n; i++) {                                           \
      int64_t k = i * s[0]; ct a = MT_LOAD_##E(p1 + k), b = MT_LOAD_##E(p2 + k); \
      MT_STORE_##E(o + k, (expr));                                              \
    }                                                                           \
  } else {                                                                      \
    for (int64_t i = 0; i < n; i++) {                                           \
      ct a = MT_LOAD_##E(p1 + i * s[1]), b = MT_LOAD_##E(p2 + i * s[2]);        \
      MT_STORE_##E(o + i * s[0], (expr));                                       \
    }                                                                           \
  }
#define LOAD3(E, off1, off2, off3)                                              \
  ct a = MT_LOAD_##E(p1 + (off1)), b = MT_LOAD_##E(p2 + (off2)), c = MT_LOAD_##E(p3 + (off3))
#define LOOP4(E, expr)                                                          \
  char *o = d[0]; const char *p1 = d[1], *p2 = d[2], *p3 = d[3];                \
  if (s[1] == s[0] && s[2] == s[0] && s[3] == s[0]) {                           \
    for (int64_t i = 0; i < n; i++) { int64_t k = i * s[0]; LOAD3(E, k, k, k); MT_STORE_##E(o + k, (expr)); } \
  } else {                                                                      \
    for (int64_t i = 0; i < n; i++) { LOAD3(E, i * s[1], i * s[2], i * s[3]); MT_STORE_##E(o + i * s[0], (expr)); } \
  }

/* mt_pointwise.c's in-place rule: the result's kind (bool < int < float)
   must fit the output's, and no two output elements may share memory. */
static int check_float(const char *op, const mt_tensor *x) {
  if (mt_dtype_is_float(x->dtype)) return 0;
  return mt_fail("%s: needs a float tensor, got %s (convert with x:float())", op, mt_dtypes[x->dtype].name);
}

static int check_inplace_shape(const char *op, const mt_tensor *r, int ndim, const int64_t *shape);

/* The result of a unary op: x itself in place, else a new tensor of x's
   shape on x's device. */
static int unary_result(mt_tensor *r, const mt_tensor *x, int inplace) {
  return inplace ? 0 : mt_tensor_init_like(r, x->dtype, x->ndim, x->shape, x);
}

/* An op's numbers: as doubles for float dtypes, as integers (already
   clipped to the dtype's range) for integer ones. */
typedef struct { double p[2]; int64_t i[2]; } param_ctx;

static mt_device_extra extras[MT_NUM_DEVICES];
const char *mt_param_kernel_name(mt_param_kernel kernel) {
  static const char *const names[] = {"clamp", "clamp", "clamp", "softplus", "leaky_relu", "addcmul", "addcdiv",
                                      "lerp", "lerp"};
  return (int)kernel >= 0 && kernel <= MT_PK_LERP_TENSOR ? names[kernel] : "param";
}

/* Off the CPU: the device's loop over out and ins (views of one dtype and
   shape on out's device), the checks all made here before. */
static __attribute__((noinline)) int device_loop(mt_param_kernel kind, mt_tensor *out, const mt_tensor *const *ins,
                                                 int nin, const param_ctx *c) {
  const char *name = mt_param_kernel_name(kind);
  const mt_device_extra *k = mt_extra_for(name, out, ins[0], nin > 1 ? ins[1] : NULL);
  if (!k) return -1;
  if (!k->param_loop) return mt_fail("%s: no kernel for this device yet (move the tensors with :cpu())", name);
  return k->param_loop(kind, out, ins, nin, c->p, c->i);
}

static int run_unary(mt_tensor *r, const mt_tensor *x, mt_param_kernel kind, mt_loop_fn fn, const param_ctx *c,
                     int inplace) {
  if (__builtin_expect(mt_any_off_cpu(r, x, NULL), 0)) {
    const mt_tensor *ins[1] = {x};
    if (device_loop(kind, r, ins, 1, c)) return -1;
  } else {
    const mt_tensor *ops[2] = {r, x};
    mt_iter it;
    mt_iter_init(&it, 2, ops);
    mt_iter_run(&it, fn, (void *)c, 0);
  }
  if (inplace) r->storage->version++;
  return 0;
}

/* ---- clamp ---- */

/* Bounds in the compute type (p[0] low, p[1] high): int64 copies (i[]) so
   integer tensors never see a double that does not convert. */

/* One comparison each, written so that a NaN element passes through (a NaN
   bound is handled before the kernels run); the compiler vectorizes it. */
#define CLAMP_LO(v) (!(v <= lo) ? v : lo)
#define CLAMP_HI(v) (!(v >= hi) ? v : hi)
#define CLAMP_KERNELS(E, T, N, TN, K)                                           \
  static MT_CLONES void clamp_lo_##E(char **d, const int64_t *s, int64_t n, void *cx) {   \
    typedef MT_CT_##E ct; const param_ctx *c = cx;                              \
    const ct lo = K == 2 ? (ct)c->p[0] : (ct)c->i[0];                           \
    LOOP2(E, CLAMP_LO(v))                                                       \
  }                                                                             \
  static MT_CLONES void clamp_hi_##E(char **d, const int64_t *s, int64_t n, void *cx) {   \
    typedef MT_CT_##E ct; const param_ctx *c = cx;                              \
    const ct hi = K == 2 ? (ct)c->p[1] : (ct)c->i[1];                           \
    LOOP2(E, CLAMP_HI(v))                                                       \
  }                                                                             \
  static MT_CLONES void clamp_both_##E(char **d, const int64_t *s, int64_t n, void *cx) { \
    typedef MT_CT_##E ct; const param_ctx *c = cx;                              \
    const ct lo = K == 2 ? (ct)c->p[0] : (ct)c->i[0];                           \
    const ct hi = K == 2 ? (ct)c->p[1] : (ct)c->i[1];                           \
    LOOP2(E, CLAMP_HI(CLAMP_LO(v)))                                             \
  }
MT_DTYPES(CLAMP_KERNELS)

#define CLAMP_ENTRY(E, T, N, TN, K) [MT_##E] = {clamp_lo_##E, clamp_hi_##E, clamp_both_##E},
static const mt_loop_fn clamp_kernels[MT_NDTYPES][3] = {MT_DTYPES(CLAMP_ENTRY)};

/* The range of an integer dtype. */
static void int_range(int dtype, int64_t *min, int64_t *max) {
  int bits = 8 * mt_dtypes[dtype].size;
  if (dtype == MT_UINT8) { *min = 0; *max = 255; return; }
  *max = (int64_t)(UINT64_MAX >> (65 - bits));
  *min = -*max - 1;
}

/* An integer bound: PyTorch rejects one that would move every element out
   of the dtype's range, and lets one beyond the other end do nothing. */
static int int_bound(const char *which, int dtype, double v, int is_lo, int64_t *out) {
  int64_t min, max;
  int_range(dtype, &min, &max);
  if (v != v) return mt_fail("clamp: %s value is NaN, which an integer tensor cannot hold", which);
  if ((is_lo && v > (double)max) || (!is_lo && v < (double)min))
    return mt_fail("clamp: %s value %g is outside the representable range of %s", which, v, mt_dtypes[dtype].name);
  v = is_lo ? ceil(v) : floor(v);
  *out = v <= (double)min ? min : v >= (double)max ? max : (int64_t)v;
  return 0;
}

int mt_clamp(mt_tensor *r, const mt_tensor *x, const double *lo, const double *hi, int inplace) {
  if (!lo && !hi) return mt_fail("clamp: at least one of min and max must be given");
  if (x->dtype == MT_BOOL) return mt_fail("clamp: not supported for bool tensors");
  if (inplace && mt_check_writable("clamp", r)) return -1;
  param_ctx c = {{lo ? *lo : 0, hi ? *hi : 0}, {0, 0}};
  if (!mt_dtype_is_float(x->dtype)) {
    if (lo && int_bound("min", x->dtype, *lo, 1, &c.i[0])) return -1;
    if (hi && int_bound("max", x->dtype, *hi, 0, &c.i[1])) return -1;
  }
  if (unary_result(r, x, inplace)) return -1;
  if ((lo && *lo != *lo) || (hi && *hi != *hi)) return mt_fill(r, NAN);   /* as PyTorch */
  int which = lo && hi ? 2 : hi ? 1 : 0;
  return run_unary(r, x, (mt_param_kernel)(MT_PK_CLAMP_LO + which), clamp_kernels[x->dtype][which], &c, inplace);
}

/* maximum or minimum, on the operands' device */
static int binary_on(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op, int inplace,
                     int default_float) {
  if (__builtin_expect(!mt_any_off_cpu(a->t, b->t, NULL), 1)) return mt_binary(r, a, b, op, 1, inplace, default_float);
  const mt_device_extra *k = mt_extra_for(mt_op_names[op], a->t, b->t, NULL);
  if (!k) return -1;
  if (!k->binary) return mt_fail("clamp: no kernel for this device yet (move the tensors with :cpu())");
  return k->binary(r, a, b, op, 1, inplace, default_float);
}

/* clamp's bounds as operands: a tensor bound broadcasts (maximum, then
   minimum, with their promotion), number bounds promote x as PyTorch's
   result type says. */
int mt_clamp_operands(mt_tensor *r, const mt_operand *in, int which, int inplace, int default_float) {
  static const char *const names[4] = {"clamp", "clamp_min", "clamp_max", "clamp"};
  const char *name = names[which & 3];
  const mt_tensor *x = in[0].t;
  const mt_operand *lo = which & 1 ? &in[1] : NULL, *hi = which == 3 ? &in[2] : which == 2 ? &in[1] : NULL;
  if (!lo && !hi) return mt_fail("clamp: at least one of min and max must be given");
  mt_operand ops[3] = {in[0]};
  int n = 1;
  if (lo) ops[n++] = *lo;
  if (hi) ops[n++] = *hi;
  int dtype = mt_result_type(ops, n, default_float);
  if (inplace && mt_check_inplace(name, dtype, r)) return -1;
  if ((lo && lo->t) || (hi && hi->t)) {
    int ndim = x->ndim;
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, x->shape, sizeof(int64_t) * (size_t)ndim);
    for (int i = 1; i < n; i++) {
      if (!ops[i].t) continue;
      int64_t out[MT_MAX_DIMS];
      if (mt_broadcast_shapes(name, ndim, shape, ops[i].t->ndim, ops[i].t->shape, &ndim, out)) return -1;
      memcpy(shape, out, sizeof(int64_t) * (size_t)ndim);
    }
    if (inplace && check_inplace_shape(name, r, ndim, shape)) return -1;
    mt_operand cur = in[0];
    mt_tensor low = {0};
    int rc = 0;
    if (lo) {
      mt_tensor *out = inplace ? r : hi ? &low : r;
      rc = binary_on(out, &cur, lo, MT_OP_maximum, inplace, default_float);
      cur.t = out;
    }
    if (!rc && hi) rc = binary_on(r, &cur, hi, MT_OP_minimum, inplace, default_float);
    mt_tensor_release(&low);
    return rc;
  }
  const double *plo = lo ? &lo->value : NULL, *phi = hi ? &hi->value : NULL;
  if (dtype != x->dtype) {                     /* promoted, as in PyTorch (not in place: checked above) */
    if (mt_to_dtype(r, x, dtype)) return -1;
    return mt_clamp(r, r, plo, phi, 1);
  }
  return mt_clamp(r, x, plo, phi, inplace);
}

/* ---- softplus, leaky_relu ---- */

#define ACTIVATION_KERNELS(E, T, N, TN, K)                                      \
  static MT_CLONES void softplus_##E(char **d, const int64_t *s, int64_t n, void *cx) {   \
    typedef MT_CT_##E ct; const param_ctx *c = cx;                              \
    const ct beta = (ct)c->p[0], threshold = (ct)c->p[1];                       \
    LOOP2(E, v * beta > threshold ? v : mt_log1p(mt_exp(v * beta)) / beta)      \
  }                                                                             \
  static MT_CLONES void leaky_relu_##E(char **d, const int64_t *s, int64_t n, void *cx) { \
    typedef MT_CT_##E ct; const ct slope = (ct)((const param_ctx *)cx)->p[0];   \
    LOOP2(E, v > 0 ? v : v * slope)                                             \
  }
MT_FLOAT_DTYPES(ACTIVATION_KERNELS)

#define ACTIVATION_ENTRY(E, T, N, TN, K) [MT_##E] = {softplus_##E, leaky_relu_##E},
static const mt_loop_fn activation_kernels[MT_NDTYPES][2] = {MT_FLOAT_DTYPES(ACTIVATION_ENTRY)};

int mt_softplus(mt_tensor *r, const mt_tensor *x, double beta, double threshold) {
  if (check_float("softplus", x)) return -1;
  if (beta == 0) return mt_fail("softplus: beta must be nonzero");
  if (unary_result(r, x, 0)) return -1;
  param_ctx c = {{beta, threshold}, {0, 0}};
  return run_unary(r, x, MT_PK_SOFTPLUS, activation_kernels[x->dtype][0], &c, 0);
}

int mt_leaky_relu(mt_tensor *r, const mt_tensor *x, double slope, int inplace) {
  if (check_float(inplace ? "leaky_relu_" : "leaky_relu", x)) return -1;
  if (inplace && mt_check_writable("leaky_relu", r)) return -1;
  if (unary_result(r, x, inplace)) return -1;
  param_ctx c = {{slope, 0}, {0, 0}};
  return run_unary(r, x, MT_PK_LEAKY_RELU, activation_kernels[x->dtype][1], &c, inplace);
}

/* ---- operands of the ternary ops ---- */

/* *view becomes t converted to dtype and broadcast to shape, on like's
   device (a 0-dim CPU operand beside GPU tensors is copied over). */
static int operand_view(mt_tensor *view, const mt_tensor *t, int dtype, int ndim, const int64_t *shape,
                        const mt_tensor *like) {
  mt_tensor conv = {0}, moved = {0};
  int rc = 0;
  if (!mt_same_device(t, like)) {
    rc = mt_tensor_init_like(&moved, t->dtype, t->ndim, t->shape, like) || mt_copy(&moved, t);
    t = &moved;
  }
  rc = rc || mt_to_dtype(&conv, t, dtype) || mt_expand(view, &conv, ndim, shape);
  mt_tensor_release(&conv);
  mt_tensor_release(&moved);
  return rc ? -1 : 0;
}

/* The broadcast shape of n tensors (a NULL entry is skipped). */
static int broadcast_all(const char *op, const mt_tensor *const *ts, int n, int *ndim, int64_t *shape) {
  *ndim = 0;
  for (int i = 0; i < n; i++) {
    if (!ts[i]) continue;
    int64_t out[MT_MAX_DIMS];
    if (mt_broadcast_shapes(op, *ndim, shape, ts[i]->ndim, ts[i]->shape, ndim, out)) return -1;
    memcpy(shape, out, sizeof(int64_t) * (size_t)*ndim);
  }
  return 0;
}

/* In place, the output must already have the broadcast shape. */
static int check_inplace_shape(const char *op, const mt_tensor *r, int ndim, const int64_t *shape) {
  if (r->ndim == ndim && !memcmp(r->shape, shape, sizeof(int64_t) * (size_t)ndim)) return 0;
  char b1[128], b2[128];
  mt_tensor like = {0};
  like.ndim = ndim;
  memcpy(like.shape, shape, sizeof(int64_t) * (size_t)ndim);
  return mt_fail("%s_: output of shape %s doesn't match the broadcast shape %s", op,
                 mt_shape_str(r, b1, sizeof b1), mt_shape_str(&like, b2, sizeof b2));
}

/* Runs fn over (r, ins...) with the inputs converted to dtype and
   broadcast; in place, r already has the shape, and a result of another
   dtype goes through a temporary cast into r. */
static int run_ternary(mt_tensor *r, const mt_tensor *const *ins, int nin, int dtype, int ndim,
                       const int64_t *shape, mt_param_kernel kind, mt_loop_fn fn, const param_ctx *ctx, int inplace) {
  mt_tensor views[3] = {{0}}, tmp = {0};
  const mt_tensor *like = inplace ? r : ins[0];   /* the device: the output's, or the first input's */
  int rc = 0, made = 0;
  for (; made < nin && rc == 0; made++) rc = operand_view(&views[made], ins[made], dtype, ndim, shape, like);
  mt_tensor *dst = r;
  if (rc == 0 && inplace && r->dtype != dtype) { rc = mt_tensor_init_like(&tmp, dtype, ndim, shape, like); dst = &tmp; }
  else if (rc == 0 && !inplace) rc = mt_tensor_init_like(r, dtype, ndim, shape, like);
  if (rc == 0 && mt_device_of(like) != MT_CPU) {
    const mt_tensor *vs[3] = {&views[0], &views[1], &views[2]};
    rc = device_loop(kind, dst, vs, nin, ctx);
  } else if (rc == 0) {
    const mt_tensor *ops[4] = {dst, &views[0], &views[1], &views[2]};
    mt_iter it;
    mt_iter_init(&it, nin + 1, ops);
    mt_iter_run(&it, fn, (void *)ctx, 0);
  }
  if (rc == 0) {
    if (dst == &tmp) rc = mt_copy(r, &tmp);
    else if (inplace) r->storage->version++;
  }
  for (int i = 0; i < made; i++) mt_tensor_release(&views[i]);
  mt_tensor_release(&tmp);
  return rc;
}

/* ---- gelu's derivative ---- */

/* d gelu / dx: exact, Phi(x) + x phi(x); tanh form, with t = tanh(c (x + a x^3)),
   0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2). */
#define GELU_GRAD(x) ((ct)0.5 * ((ct)1 + mt_erf((x) * (ct)0.70710678118654752440)) + \
                      (x) * (ct)0.39894228040143267794 * mt_exp((ct)-0.5 * (x) * (x)))
#define GELU_TANH_GRAD(x, t) ((ct)0.5 * ((ct)1 + (t)) + (ct)0.5 * (x) * ((ct)1 - (t) * (t)) * \
                              (ct)0.79788456080286535588 * ((ct)1 + (ct)3 * (ct)0.044715 * (x) * (x)))
#define GELU_TANH_T(x) mt_tanh((ct)0.79788456080286535588 * ((x) + (ct)0.044715 * (x) * (x) * (x)))
/* out = g * gelu'(x); a contiguous run gets a loop the compiler vectorises */
#define GELU_BACKWARD_KERNELS(E, T, N, TN, K)                                   \
  static MT_CLONES void gelu_backward_##E(char **d, const int64_t *s, int64_t n, void *cx) { \
    typedef MT_CT_##E ct; typedef T st; (void)cx;                               \
    if (s[0] == (int64_t)sizeof(st) && s[1] == s[0] && s[2] == s[0]) {           \
      st *o = (st *)d[0]; const st *g = (const st *)d[1], *x = (const st *)d[2]; \
      _Pragma("omp simd")                                                       \
      for (int64_t i = 0; i < n; i++) {                                         \
        ct v = MT_LOAD_##E(x + i);                                              \
        MT_STORE_##E(o + i, MT_LOAD_##E(g + i) * GELU_GRAD(v));                 \
      }                                                                         \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++) {                                           \
      ct v = MT_LOAD_##E(d[2] + i * s[2]);                                      \
      MT_STORE_##E(d[0] + i * s[0], MT_LOAD_##E(d[1] + i * s[1]) * GELU_GRAD(v)); \
    }                                                                           \
  }                                                                             \
  static MT_CLONES void gelu_tanh_backward_##E(char **d, const int64_t *s, int64_t n, void *cx) { \
    typedef MT_CT_##E ct; (void)cx;                                             \
    for (int64_t i = 0; i < n; i++) {                                           \
      ct v = MT_LOAD_##E(d[2] + i * s[2]), t = GELU_TANH_T(v);                  \
      MT_STORE_##E(d[0] + i * s[0], MT_LOAD_##E(d[1] + i * s[1]) * GELU_TANH_GRAD(v, t)); \
    }                                                                           \
  }
MT_FLOAT_DTYPES(GELU_BACKWARD_KERNELS)

#define GELU_BACKWARD_ENTRY(E, T, N, TN, K) [MT_##E] = {gelu_backward_##E, gelu_tanh_backward_##E},
static const mt_loop_fn gelu_backward_kernels[MT_NDTYPES][2] = {MT_FLOAT_DTYPES(GELU_BACKWARD_ENTRY)};

/* ---- addcmul, addcdiv ---- */

#define ADDCMUL_KERNEL(E, T, N, TN, K)                                          \
  static MT_CLONES void addcmul_##E(char **d, const int64_t *s, int64_t n, void *cx) {    \
    typedef MT_CT_##E ct; const param_ctx *pc = cx;                             \
    const ct value = K == 2 ? (ct)pc->p[0] : (ct)pc->i[0];                      \
    LOOP4(E, MT_WRAP(a, +, MT_WRAP(MT_WRAP(value, *, b), *, c)))                                                 \
  }
#define ADDCDIV_KERNEL(E, T, N, TN, K)                                          \
  static MT_CLONES void addcdiv_##E(char **d, const int64_t *s, int64_t n, void *cx) {    \
    typedef MT_CT_##E ct; const ct value = (ct)((const param_ctx *)cx)->p[0];   \
    LOOP4(E, a + value * b / c)                                                 \
  }
MT_DTYPES(ADDCMUL_KERNEL)
MT_FLOAT_DTYPES(ADDCDIV_KERNEL)

#define ADDCMUL_ENTRY(E, T, N, TN, K) [MT_##E] = addcmul_##E,
#define ADDCDIV_ENTRY(E, T, N, TN, K) [MT_##E] = addcdiv_##E,
static const mt_loop_fn addcmul_kernels[MT_NDTYPES] = {MT_DTYPES(ADDCMUL_ENTRY)};
static const mt_loop_fn addcdiv_kernels[MT_NDTYPES] = {MT_FLOAT_DTYPES(ADDCDIV_ENTRY)};

int mt_addc(mt_tensor *r, const mt_tensor *a, const mt_tensor *t1, const mt_tensor *t2,
            double value, int divide, int inplace, int default_float) {
  const char *name = divide ? "addcdiv" : "addcmul";
  if (!t1 || !t2) return mt_fail("%s: tensor1 and tensor2 must be tensors", name);
  mt_operand operands[3] = {{a, 0, 0}, {t1, 0, 0}, {t2, 0, 0}};
  int dtype = mt_result_type(operands, 3, default_float);
  if (dtype == MT_BOOL) return mt_fail("%s: not supported for bool tensors", name);
  if (!mt_dtype_is_float(dtype)) {
    if (divide)
      return mt_fail("addcdiv: integer division is not supported; use float tensors (got %s)", mt_dtypes[dtype].name);
    if (value != trunc(value) || fabs(value) >= 0x1p63)
      return mt_fail("addcmul: value must be an integer for integer tensors, got %g", value);
  }
  const mt_tensor *ins[3] = {a, t1, t2};
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  if (broadcast_all(name, ins, 3, &ndim, shape)) return -1;
  if (inplace && (check_inplace_shape(name, r, ndim, shape) || mt_check_inplace(name, dtype, r))) return -1;
  param_ctx c = {{value, 0}, {mt_dtype_is_float(dtype) ? 0 : (int64_t)value, 0}};
  return run_ternary(r, ins, 3, dtype, ndim, shape, divide ? MT_PK_ADDCDIV : MT_PK_ADDCMUL,
                     (divide ? addcdiv_kernels : addcmul_kernels)[dtype], &c, inplace);
}

/* ---- lerp ---- */

/* PyTorch's form: from the nearer end, so weight 1 gives exactly end. */
#define LERP(a, b, w) (fabs(w) < (ct)0.5 ? a + w * (b - a) : b - (b - a) * ((ct)1 - w))
#define LERP_KERNELS(E, T, N, TN, K)                                            \
  static MT_CLONES void lerp_scalar_##E(char **d, const int64_t *s, int64_t n, void *cx) { \
    typedef MT_CT_##E ct; const ct w = (ct)((const param_ctx *)cx)->p[0];       \
    LOOP3(E, LERP(a, b, w))                                                     \
  }                                                                             \
  static MT_CLONES void lerp_tensor_##E(char **d, const int64_t *s, int64_t n, void *cx) { \
    typedef MT_CT_##E ct; (void)cx;                                             \
    LOOP4(E, LERP(a, b, c))                                                     \
  }
MT_FLOAT_DTYPES(LERP_KERNELS)

#define LERP_ENTRY(E, T, N, TN, K) [MT_##E] = {lerp_scalar_##E, lerp_tensor_##E},
static const mt_loop_fn lerp_kernels[MT_NDTYPES][2] = {MT_FLOAT_DTYPES(LERP_ENTRY)};

int mt_lerp(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, const mt_operand *w, int inplace) {
  const char *name = inplace ? "lerp_" : "lerp";
  if (!b) return mt_fail("%s: end must be a tensor", name);
  if (check_float(name, a)) return -1;
  if (b->dtype != a->dtype)
    return mt_fail("%s: expected dtype %s for end but got %s", name, mt_dtypes[a->dtype].name, mt_dtypes[b->dtype].name);
  const mt_tensor *wt = w->t;
  /* a 0-dim weight may be any float dtype, as in PyTorch */
  if (wt && (!mt_dtype_is_float(wt->dtype) || (wt->ndim > 0 && wt->dtype != a->dtype)))
    return mt_fail("%s: expected dtype %s for weight but got %s", name, mt_dtypes[a->dtype].name, mt_dtypes[wt->dtype].name);
  const mt_tensor *ins[3] = {a, b, wt};
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  if (broadcast_all("lerp", ins, 3, &ndim, shape)) return -1;
  if (inplace && (check_inplace_shape("lerp", r, ndim, shape) || mt_check_writable("lerp", r))) return -1;
  param_ctx c = {{w->value, 0}, {0, 0}};
  return run_ternary(r, ins, wt ? 3 : 2, a->dtype, ndim, shape, wt ? MT_PK_LERP_TENSOR : MT_PK_LERP_SCALAR,
                     lerp_kernels[a->dtype][wt ? 1 : 0], &c, inplace);
}

/* ---- writes: fill, zero, copy ---- */
/* r: x itself in place (checked writable), else a new tensor like x */
static int write_target(mt_tensor *r, const mt_tensor *x, const char *op, int inplace) {
  if (inplace) return mt_check_writable(op, r);
  return mt_tensor_init_like(r, x->dtype, x->ndim, x->shape, x);
}

int mt_fill_operand(mt_tensor *r, const mt_tensor *x, const mt_operand *v, int inplace) {
  const char *op = v ? "fill" : "zero";
  if (write_target(r, x, op, inplace)) return -1;
  if (!v) return mt_fill(r, 0);
  if (!v->t) return mt_fill(r, v->value);
  if (mt_numel(v->t) != 1) {
    char b[128];
    return mt_fail("fill_: expects a value with one element, got a tensor of size %s", mt_shape_str(v->t, b, sizeof b));
  }
  mt_tensor one = {0};                            /* exact: no trip through double */
  int rc = mt_view(&one, v->t, 0, NULL) || mt_copy(r, &one);
  mt_tensor_release(&one);
  return rc ? -1 : 0;
}

int mt_copy_operand(mt_tensor *r, const mt_tensor *x, const mt_tensor *src, int inplace) {
  if (write_target(r, x, "copy", inplace)) return -1;
  if (mt_numel(r) == mt_numel(src) && !mt_same_shape(r, src) && mt_is_contiguous(src)) {
    mt_tensor v = {0};                            /* Torch7: any shape of the same element count */
    int rc = mt_view(&v, src, r->ndim, r->shape) || mt_copy(r, &v);
    mt_tensor_release(&v);
    return rc ? -1 : 0;
  }
  return mt_copy(r, src);
}

/* ---- the registry's ops with parameters ---- */
int mt_param(mt_tensor *r, const mt_operand *in, mt_op op, const double *p, int inplace, int default_float) {
  (void)p; (void)default_float;
  if (!in[0].t) return mt_fail("%s: self must be a tensor", mt_op_is_param(op) ? mt_op_names[op] : "mt_param");
  switch (op) {
#define PARAM(call, signature) call
#define PARAM_INPLACE(call, signature) call
    MT_PARAM_OPS(MT_KERNEL_CASE, _)
#undef PARAM_INPLACE
#undef PARAM
  default: break;
  }
  return mt_not_in_family("mt_param", op, "an op with parameters");
}

/* ---- the derivatives of activations written from their result ----
   d = g * f'(y) in one pass, for a backward that records nothing: relu
   (g where y > 0), tanh (g (1 - y^2)) and sigmoid (g y (1 - y)); gelu's,
   from its input, are above. The recorded formulas stay for create_graph. */
#define ACT_GRAD(kind, a, b) \
  ((kind) == MT_ACT_RELU ? ((b) > 0 ? (a) : (ct)0) : (kind) == MT_ACT_TANH ? (a) * ((ct)1 - (b) * (b)) : (a) * ((b) * ((ct)1 - (b))))
#define ACT_GRAD_KERNEL(E, T, N, TN, K, KIND, NAME)                             \
  static MT_CLONES void NAME##_grad_##E(char **d, const int64_t *s, int64_t n, void *cx) { \
    typedef MT_CT_##E ct; (void)cx;                                             \
    if (s[0] == (int64_t)sizeof(T) && s[1] == s[0] && s[2] == s[0]) {           \
      T *o = (T *)d[0]; const T *g = (const T *)d[1], *y = (const T *)d[2];     \
      for (int64_t i = 0; i < n; i++) {                                         \
        const ct a = MT_LOAD_##E(g + i), b = MT_LOAD_##E(y + i);                \
        MT_STORE_##E(o + i, ACT_GRAD(KIND, a, b));                              \
      }                                                                         \
      return;                                                                   \
    }                                                                           \
    LOOP3(E, ACT_GRAD(KIND, a, b))                                              \
  }
#define ACT_GRAD_KERNELS(E, T, N, TN, K)                                        \
  ACT_GRAD_KERNEL(E, T, N, TN, K, MT_ACT_RELU, relu)                            \
  ACT_GRAD_KERNEL(E, T, N, TN, K, MT_ACT_TANH, tanh)                            \
  ACT_GRAD_KERNEL(E, T, N, TN, K, MT_ACT_SIGMOID, sigmoid)
MT_FLOAT_DTYPES(ACT_GRAD_KERNELS)

#define ACT_GRAD_ENTRY(E, T, N, TN, K) [MT_##E] = {relu_grad_##E, tanh_grad_##E, sigmoid_grad_##E},
static const mt_loop_fn act_grad_kernels[MT_NDTYPES][3] = {MT_FLOAT_DTYPES(ACT_GRAD_ENTRY)};

void mt_register_extra(int device, const mt_device_extra *k) {
  if (device > MT_CPU && device < MT_NUM_DEVICES) extras[device] = *k;
}

const mt_device_extra *mt_extra_for(const char *op, const mt_tensor *t, const mt_tensor *u, const mt_tensor *v) {
  const mt_tensor *in[3] = {t, u, v}, *first = NULL;
  for (int i = 0; i < 3 && !first; i++)
    if (in[i] && mt_device_of(in[i]) != MT_CPU) first = in[i];
  for (int i = 0; i < 3; i++)
    if (in[i] && !mt_same_device(in[i], first) && !(mt_device_of(in[i]) == MT_CPU && in[i]->ndim == 0)) {
      mt_check_same_device(op, first, in[i]);
      return NULL;
    }
  int device = mt_device_of(first);
  if (device <= MT_CPU || device >= MT_NUM_DEVICES || !extras[device].activation_grad) {
    char d[32];
    mt_fail("%s: no kernel for tensors on %s", op, mt_tensor_device_str(first, d, sizeof d));
    return NULL;
  }
  return &extras[device];
}

int mt_activation_grad(mt_tensor *r, const mt_tensor *g, const mt_tensor *v, mt_activation kind) {
  if (__builtin_expect((mt_device_of(g) | mt_device_of(v)) != MT_CPU, 0)) {
    const mt_device_extra *k = mt_extra_for("activation_grad", g, v, NULL);
    return k ? k->activation_grad(r, g, v, kind) : -1;
  }
  char b1[128], b2[128];
  if (check_float("activation_grad", v)) return -1;
  if (g->dtype != v->dtype || !mt_same_shape(g, v))
    return mt_fail("activation_grad: gradient %s %s for a value %s %s", mt_dtypes[g->dtype].name,
                   mt_shape_str(g, b1, sizeof b1), mt_dtypes[v->dtype].name, mt_shape_str(v, b2, sizeof b2));
  const mt_tensor *ins[2] = {g, v};
  const mt_loop_fn fn = kind >= MT_ACT_GELU ? gelu_backward_kernels[v->dtype][kind == MT_ACT_GELU_TANH]
                                            : act_grad_kernels[v->dtype][kind];
  /* the CPU's tensors only (other devices took their own kernel above): no device loop */
  return run_ternary(r, ins, 2, v->dtype, v->ndim, v->shape, (mt_param_kernel)-1, fn, NULL, 0);
}
