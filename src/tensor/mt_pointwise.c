/* mt_pointwise.c: every elementwise kernel, generated from the kernel column
   of the op registry (src/ops/registry.h) for each dtype, with PyTorch's result-type and in-place rules. */
#include <tgmath.h>
#include "mt_ops.h"
#include "mt_iter.h"
#include "mt_kernel.h"
#include "mt_pointwise_rules.h"
#include "mt_isa.h"
#include "mt_convert.h"

/* Generated code instantiates comparisons like v < 0 for unsigned and bool
   types, where they are trivially constant: that is intended. */
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wbool-operation"
#pragma GCC diagnostic ignored "-Wint-in-bool-context"
#pragma GCC diagnostic ignored "-Wbool-compare"

/* every op's name, in the enum's order: both come from MT_OP_LISTS */
const char *const mt_op_names[MT_NUM_OPS] = {
#define MT_X(name, expr, E, ...) [MT_OP_##name] = #name,
#define MT_LIST(list) list(MT_X, _)
  MT_OP_LISTS(MT_LIST)
#undef MT_LIST
#undef MT_X
};

int mt_not_in_family(const char *entry, int op, const char *what) {
  return mt_fail("%s: %s is not %s", entry, op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?", what);
}

/* ---- scalar helpers with C semantics fixed to PyTorch's ---- */
static inline double fmod_d(double a, double b) { return fmod(a, b); }
static inline float fmod_f(float a, float b) { return fmod(a, b); }
/* Integer fmod and remainder by zero set this; the op then raises
   (PyTorch's ZeroDivisionError). Every writer stores 1, so races are benign. */
static int int_div_by_zero;
static inline int64_t int_zero_divisor(void) { __atomic_store_n(&int_div_by_zero, 1, __ATOMIC_RELAXED); return 0; }
static inline int64_t fmod_i(int64_t a, int64_t b) { return b == 0 ? int_zero_divisor() : (b == -1 ? 0 : a % b); }
#define mt_fmod(a, b) _Generic((a), float: fmod_f, double: fmod_d, default: fmod_i)(a, b)

static inline double rem_d(double a, double b) { double m = fmod(a, b); return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }
static inline float rem_f(float a, float b) { float m = fmod(a, b); return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }
static inline int64_t rem_i(int64_t a, int64_t b) {
  if (b == 0) return int_zero_divisor();
  if (b == -1) return 0;
  int64_t m = a % b;
  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;
}
#define mt_remainder(a, b) _Generic((a), float: rem_f, double: rem_d, default: rem_i)(a, b)

static inline double pow_d(double a, double b) { return pow(a, b); }
static inline float pow_f(float a, float b) { return b == 2.0f ? a * a : pow(a, b); }
/* Integer powers: a negative exponent truncates 1/a^n toward zero. */
static inline int64_t pow_i(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  uint64_t r = 1, base = (uint64_t)a;
  while (b) { if (b & 1) r *= base; base *= base; b >>= 1; }
  return (int64_t)r;
}
#define mt_pow(a, b) _Generic((a), float: pow_f, double: pow_d, default: pow_i)(a, b)

/* Floor division as Python's //: the quotient is rebuilt from the exact
   remainder, so 1 // 0.1 is 9 (0.1 is a little above a tenth) where
   floor(1 / 0.1) rounds up to 10; a zero quotient keeps the sign of a / b. */
#define MT_DIV_FLOOR_FN(name, T)                                                \
  static inline T name(T a, T b) {                                              \
    if (b == 0) return a / b;                                                   \
    T m = fmod(a, b), q = (a - m) / b;                                          \
    if (m != 0 && (m < 0) != (b < 0)) q -= 1;                                   \
    if (q == 0) return copysign((T)0, a / b);                                   \
    T f = floor(q);                                                             \
    return q - f > (T)0.5 ? f + 1 : f;                                          \
  }
MT_DIV_FLOOR_FN(div_floor_f, float)
MT_DIV_FLOOR_FN(div_floor_d, double)
static inline float div_trunc_f(float a, float b) { return trunc(a / b); }
static inline double div_trunc_d(double a, double b) { return trunc(a / b); }
/* Integers: by -1 is a negation that wraps (the most negative value stays),
   where C's division would trap. */
static inline int64_t div_trunc_i(int64_t a, int64_t b) {
  if (b == 0) return int_zero_divisor();
  return b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b;
}
static inline int64_t div_floor_i(int64_t a, int64_t b) {
  int64_t q = div_trunc_i(a, b);
  return b != 0 && b != -1 && a % b != 0 && (a < 0) != (b < 0) ? q - 1 : q;
}
#define mt_div_floor(a, b) _Generic((a), float: div_floor_f, double: div_floor_d, default: div_floor_i)(a, b)
#define mt_div_trunc(a, b) _Generic((a), float: div_trunc_f, double: div_trunc_d, default: div_trunc_i)(a, b)

typedef struct { double p1; } kernel_ctx;

/* The storage type of each dtype, for the typed loops below. */
#define MT_X(E, T, N, TN, K) typedef T mt_st_##E;
MT_DTYPES(MT_X)
#undef MT_X

/* float16 runs go through float32 blocks: mt_convert.c widens and narrows them with the
   CPU's own instructions (F16C, eight at a time), the op runs in float on the block, and
   float16 results round once, as one-element stores do (the same bits). One element at a
   time, a float16 add took 4.5x bfloat16's time (2^20 elements: 1.31 against 0.29 ms). */
#define MT_HALF_BLOCK 256
#define MT_IS_HALF(E) (MT_##E == MT_FLOAT16)
/* the m results of a block (its operands declared by DECL from element i) stored at P: a
   float16 output through a float block, any other (a comparison's bool) one at a time */
#define MT_HALF_RESULTS(OT, STORE, P, m, DECL, expr)                            \
  do {                                                                          \
    if (sizeof(OT) == sizeof(uint16_t)) {                                       \
      _Pragma("omp simd")                                                       \
      for (int64_t i = 0; i < (m); i++) { DECL; ob[i] = (float)(expr); }        \
      mt_cvt_f32_to_f16((uint16_t *)(void *)(P), ob, (m));                      \
    } else {                                                                    \
      _Pragma("omp simd")                                                       \
      for (int64_t i = 0; i < (m); i++) { DECL; STORE((P) + i, (expr)); }       \
    }                                                                           \
  } while (0)

/* One kernel per (op, dtype). Runs of adjacent elements, with or without a
   scalar operand (stride 0), get typed loops the compiler vectorizes; other
   strides take the byte-stride loop. Iterations never depend on each other
   (an in-place output is exactly its input; partial overlaps are copied by
   the caller), hence omp simd. OT is the output's storage type. */
#define MT_UNARY_KERNEL_AS(name, expr, E, OT, STORE)                            \
  static MT_CLONES void k_##name##_##E(char **d, const int64_t *s, int64_t n, void *c) { \
    typedef MT_CT_##E ct; typedef mt_st_##E st; (void)c;                        \
    char *o = d[0]; const char *x = d[1];                                       \
    if (s[0] == (int64_t)sizeof(OT) && s[1] == (int64_t)sizeof(st)) {           \
      OT *O = (OT *)o; const st *X = (const st *)x;                             \
      if (MT_IS_HALF(E)) {                                                      \
        float xb[MT_HALF_BLOCK], ob[MT_HALF_BLOCK];                             \
        for (int64_t i0 = 0; i0 < n; i0 += MT_HALF_BLOCK) {                     \
          const int64_t m = n - i0 < MT_HALF_BLOCK ? n - i0 : MT_HALF_BLOCK;    \
          mt_cvt_f16_to_f32(xb, (const uint16_t *)(X + i0), m);                 \
          MT_HALF_RESULTS(OT, STORE, O + i0, m, ct v = (ct)xb[i], expr);        \
        }                                                                       \
        return;                                                                 \
      }                                                                         \
      _Pragma("omp simd")                                                       \
      for (int64_t i = 0; i < n; i++) { ct v = MT_LOAD_##E(X + i); STORE(O + i, (expr)); } \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) { ct v = MT_LOAD_##E(x); STORE(o, (expr)); } \
  }
#define MT_UNARY_KERNEL(name, expr, E, ...) MT_UNARY_KERNEL_AS(name, expr, E, mt_st_##E, MT_STORE_##E)
#define MT_UNARY_BOOL_KERNEL(name, expr, E, ...) MT_UNARY_KERNEL_AS(name, expr, E, bool, MT_STORE_BOOL)

#define MT_BINARY_KERNEL_AS(name, expr, E, OT, STORE)                           \
  static MT_CLONES void k_##name##_##E(char **d, const int64_t *s, int64_t n, void *c) { \
    typedef MT_CT_##E ct; typedef mt_st_##E st;                                 \
    const ct p1 = (ct)((const kernel_ctx *)c)->p1; (void)p1;                    \
    char *o = d[0]; const char *pa = d[1], *pb = d[2];                          \
    const int64_t es = (int64_t)sizeof(st);                                     \
    if (s[0] == (int64_t)sizeof(OT) && (s[1] == es || s[1] == 0) && (s[2] == es || s[2] == 0)) { \
      OT *O = (OT *)o; const st *A = (const st *)pa, *B = (const st *)pb;       \
      if (MT_IS_HALF(E)) {    /* a scalar operand fills its block once */        \
        float ab[MT_HALF_BLOCK], bb[MT_HALF_BLOCK], ob[MT_HALF_BLOCK];          \
        for (int64_t i = 0; !s[1] && i < MT_HALF_BLOCK; i++) ab[i] = (float)MT_LOAD_##E(A); \
        for (int64_t i = 0; !s[2] && i < MT_HALF_BLOCK; i++) bb[i] = (float)MT_LOAD_##E(B); \
        for (int64_t i0 = 0; i0 < n; i0 += MT_HALF_BLOCK) {                     \
          const int64_t m = n - i0 < MT_HALF_BLOCK ? n - i0 : MT_HALF_BLOCK;    \
          if (s[1]) mt_cvt_f16_to_f32(ab, (const uint16_t *)(A + i0), m);       \
          if (s[2]) mt_cvt_f16_to_f32(bb, (const uint16_t *)(B + i0), m);       \
          MT_HALF_RESULTS(OT, STORE, O + i0, m, ct a = (ct)ab[i]; ct b = (ct)bb[i], expr); \
        }                                                                       \
        return;                                                                 \
      }                                                                         \
      if (s[1] && s[2]) {                                                       \
        _Pragma("omp simd")                                                     \
        for (int64_t i = 0; i < n; i++) { ct a = MT_LOAD_##E(A + i), b = MT_LOAD_##E(B + i); STORE(O + i, (expr)); } \
      } else if (s[1]) {                                                        \
        const ct b = MT_LOAD_##E(B);                                            \
        _Pragma("omp simd")                                                     \
        for (int64_t i = 0; i < n; i++) { ct a = MT_LOAD_##E(A + i); STORE(O + i, (expr)); } \
      } else {                                                                  \
        const ct a = MT_LOAD_##E(A);                                            \
        _Pragma("omp simd")                                                     \
        for (int64_t i = 0; i < n; i++) { ct b = MT_LOAD_##E(B + (s[2] ? i : 0)); STORE(O + i, (expr)); } \
      }                                                                         \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++, o += s[0], pa += s[1], pb += s[2]) {       \
      ct a = MT_LOAD_##E(pa), b = MT_LOAD_##E(pb); STORE(o, (expr));            \
    }                                                                           \
  }
#define MT_BINARY_KERNEL(name, expr, E, ...) MT_BINARY_KERNEL_AS(name, expr, E, mt_st_##E, MT_STORE_##E)
#define MT_COMPARE_KERNEL(name, expr, E, ...) MT_BINARY_KERNEL_AS(name, expr, E, bool, MT_STORE_BOOL)

#define MT_GEN_ALL(E, T, N, TN, K)                                              \
  MT_UNARY_SAME_OPS(MT_UNARY_KERNEL, E)                                         \
  MT_UNARY_BOOL_OPS(MT_UNARY_BOOL_KERNEL, E)                                    \
  MT_BINARY_OPS(MT_BINARY_KERNEL, E)                                            \
  MT_BINARY_DIV_OPS(MT_BINARY_KERNEL, E)                                        \
  MT_COMPARE_OPS(MT_COMPARE_KERNEL, E)
#define MT_GEN_FLOAT(E, T, N, TN, K)                                            \
  MT_UNARY_FLOAT_OPS(MT_UNARY_KERNEL, E)                                        \
  MT_UNARY_FLOAT_ONLY_OPS(MT_UNARY_KERNEL, E)                                   \
  MT_UNARY_ROUND_OPS(MT_UNARY_KERNEL, E)                                        \
  MT_BINARY_FLOAT_OPS(MT_BINARY_KERNEL, E)
/* the integer-only ops, for the dtypes of kind 0 (bool) and 1 (integers) */
#define MT_NOT_FLOAT_0(code) code
#define MT_NOT_FLOAT_1(code) code
#define MT_NOT_FLOAT_2(code)
#define MT_GEN_INT(E, T, N, TN, K)                                              \
  MT_NOT_FLOAT_##K(MT_UNARY_INT_OPS(MT_UNARY_KERNEL, E) MT_BINARY_INT_OPS(MT_BINARY_KERNEL, E))
MT_DTYPES(MT_GEN_ALL)
MT_FLOAT_DTYPES(MT_GEN_FLOAT)
MT_DTYPES(MT_GEN_INT)

#define MT_ENTRY(name, expr, E, ...) [MT_OP_##name][MT_##E] = k_##name##_##E,
#define MT_TAB_ALL(E, T, N, TN, K)                                              \
  MT_UNARY_SAME_OPS(MT_ENTRY, E) MT_UNARY_BOOL_OPS(MT_ENTRY, E)                 \
  MT_BINARY_OPS(MT_ENTRY, E) MT_BINARY_DIV_OPS(MT_ENTRY, E) MT_COMPARE_OPS(MT_ENTRY, E)
#define MT_TAB_FLOAT(E, T, N, TN, K)                                            \
  MT_UNARY_FLOAT_OPS(MT_ENTRY, E) MT_UNARY_FLOAT_ONLY_OPS(MT_ENTRY, E)          \
  MT_UNARY_ROUND_OPS(MT_ENTRY, E)                                               \
  MT_BINARY_FLOAT_OPS(MT_ENTRY, E)
#define MT_TAB_INT(E, T, N, TN, K)                                              \
  MT_NOT_FLOAT_##K(MT_UNARY_INT_OPS(MT_ENTRY, E) MT_BINARY_INT_OPS(MT_ENTRY, E))
static const mt_loop_fn kernels[MT_NUM_OPS][MT_NDTYPES] = {
  MT_DTYPES(MT_TAB_ALL)
  MT_FLOAT_DTYPES(MT_TAB_FLOAT)
  MT_DTYPES(MT_TAB_INT)
};

/* ---- result types ---- */
int mt_result_type(const mt_operand *ops, int n, int default_float) {
  int dim_t = -1, zero_t = -1, scalar_kind = -1;
  for (int i = 0; i < n; i++) {
    if (ops[i].t) {
      int dt = ops[i].t->dtype;
      int *slot = ops[i].t->ndim > 0 ? &dim_t : &zero_t;
      *slot = *slot < 0 ? dt : (int)mt_promote(*slot, dt);
    } else {
      int k = ops[i].is_int == 2 ? 0 : ops[i].is_int ? 1 : 2;
      if (k > scalar_kind) scalar_kind = k;
    }
  }
  int r = dim_t;
  if (zero_t >= 0) {
    if (r < 0) r = zero_t;
    else if (mt_dtypes[zero_t].kind > mt_dtypes[r].kind) r = zero_t;
  }
  if (scalar_kind >= 0 && (r < 0 || scalar_kind > mt_dtypes[r].kind))
    r = scalar_kind == 2 ? default_float : scalar_kind == 1 ? MT_INT64 : MT_BOOL;
  return r;
}

/* Makes *view an operand of the given dtype and shape: a converted copy or a
   broadcast view of a tensor, or a stride-0 view of a scalar in buf. An
   input that shares memory with the in-place output out (other than being
   out itself) is copied first, so that writes never feed later reads. */
static int prepare(mt_tensor *view, mt_storage *scalar_storage, char *buf, const mt_operand *op,
                   int dtype, int ndim, const int64_t *shape, const mt_tensor *out) {
  if (!op->t) {
    if (op->is_int) mt_set_i64(dtype, buf, (int64_t)op->value);
    else mt_set_f64(dtype, buf, op->value);
    mt_scalar_view(view, scalar_storage, buf, dtype, ndim, shape);
    return 0;
  }
  mt_tensor conv = {0};
  int aliased = out && op->t->storage == out->storage && !mt_same_view(op->t, out);
  if (aliased && op->t->dtype == dtype ? mt_clone(&conv, op->t) : mt_to_dtype(&conv, op->t, dtype))
    return -1;
  int rc = mt_expand(view, &conv, ndim, shape);
  mt_tensor_release(&conv);
  return rc;
}

/* In-place results: the dtype must not lose a kind (float into int), and no
   two elements of the output may share memory (an expanded tensor). */
/* Runs kernel over {out, inputs...}; in place with a dtype other than the
   output's, it computes into a temporary and casts into out. */
static int run_into(mt_tensor *out, int compute_dtype, int nin, const mt_tensor *in0,
                    const mt_tensor *in1, mt_loop_fn kernel, void *ctx) {
  mt_tensor tmp = {0};
  mt_tensor *dst = out;
  if (out->dtype != compute_dtype) {
    if (mt_tensor_init(&tmp, compute_dtype, out->ndim, out->shape)) return -1;
    dst = &tmp;
  }
  const mt_tensor *ops[3] = {dst, in0, in1};
  mt_iter it;
  mt_iter_init(&it, nin + 1, ops);
  mt_iter_run(&it, kernel, ctx, 0);
  int rc = 0;
  if (dst == &tmp) rc = mt_copy(out, &tmp);
  else out->storage->version++;
  mt_tensor_release(&tmp);
  return rc;
}

int mt_unary(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float) {
  int in_dtype, out_dtype, rc;
  if (mt_unary_rules(r, x, op, inplace, default_float, &in_dtype, &out_dtype, &rc)) return rc;
  if (!inplace && mt_tensor_init(r, out_dtype, x->ndim, x->shape)) return -1;
  mt_tensor in = {0};
  if (mt_to_dtype(&in, x, in_dtype)) return -1;
  int compute = mt_op_class[op] == MT_C_UNARY_BOOL ? MT_BOOL : in_dtype;
  rc = run_into(r, compute, 1, &in, NULL, kernels[op][in_dtype], NULL);
  mt_tensor_release(&in);
  return rc;
}

/* The per-op hot path (DESIGN: per-op cost is a headline number): a tensor of
   the compute dtype, contiguous, with a same-shaped contiguous tensor or a
   number, small enough to stay on one thread. It skips broadcasting, operand
   views and the iterator: one allocation and one kernel call. */
static int is_flat_pair(const mt_operand *a, const mt_operand *b, int dtype) {
  const mt_tensor *x = a->t, *y = b->t;
  if (!x || x->dtype != dtype || !mt_is_contiguous(x) || mt_numel(x) >= MT_ITER_GRAIN) return 0;
  return !y || (y->dtype == dtype && mt_same_shape(x, y) && mt_is_contiguous(y));
}

static int run_flat(mt_tensor *r, int out_dtype, const mt_operand *a, const mt_operand *b,
                    mt_loop_fn kernel, kernel_ctx *ctx) {
  const mt_tensor *x = a->t;
  if (mt_tensor_init(r, out_dtype, x->ndim, x->shape)) return -1;
  char scalar[8];
  if (!b->t) {
    if (b->is_int) mt_set_i64(x->dtype, scalar, (int64_t)b->value);
    else mt_set_f64(x->dtype, scalar, b->value);
  }
  int64_t es = mt_dtypes[x->dtype].size;
  char *data[3] = {mt_data(r), mt_data(x), b->t ? mt_data(b->t) : scalar};
  int64_t strides[3] = {mt_dtypes[out_dtype].size, es, b->t ? es : 0};
  kernel(data, strides, mt_numel(x), ctx);
  return 0;
}

int mt_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op,
              double alpha, int inplace, int default_float) {
  const char *name = mt_op_names[op];
  int dtype = 0, out_dtype = 0;
  if (mt_binary_rules(a, b, op, alpha, default_float, &dtype, &out_dtype)) return -1;
  int checks_zero = mt_op_divides(op) && !mt_dtype_is_float(dtype);
  kernel_ctx ctx = {alpha};
  if (!inplace && !checks_zero && is_flat_pair(a, b, dtype))
    return run_flat(r, out_dtype, a, b, kernels[op][dtype], &ctx);
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  if (mt_binary_shape(r, a, b, op, inplace, out_dtype, &ndim, shape)) return -1;
  if (!inplace && mt_tensor_init(r, out_dtype, ndim, shape)) return -1;
  mt_storage s1, s2;
  char buf1[8], buf2[8];
  mt_tensor va = {0}, vb = {0};
  const mt_tensor *out = inplace ? r : NULL;
  if (prepare(&va, &s1, buf1, a, dtype, ndim, shape, out)) return -1;
  if (prepare(&vb, &s2, buf2, b, dtype, ndim, shape, out)) { mt_tensor_release(&va); return -1; }
  if (checks_zero) __atomic_store_n(&int_div_by_zero, 0, __ATOMIC_RELAXED);
  int rc = run_into(r, out_dtype, 2, &va, &vb, kernels[op][dtype], &ctx);
  if (rc == 0 && checks_zero && __atomic_load_n(&int_div_by_zero, __ATOMIC_RELAXED))
    rc = mt_fail("%s: ZeroDivisionError (integer %s by zero)", name, name);
  mt_tensor_release(&va);
  mt_tensor_release(&vb);
  return rc;
}
