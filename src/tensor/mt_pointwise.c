/* mt_pointwise.c: every elementwise kernel, generated from the op lists in
   mt_ops.h for each dtype, plus result-type rules and the parametric ops. */
#include <tgmath.h>
#include "mt_ops.h"
#include "mt_iter.h"
#include "mt_kernel.h"

/* Generated code instantiates comparisons like v < 0 for unsigned and bool
   types, where they are trivially constant: that is intended. */
#pragma GCC diagnostic ignored "-Wtype-limits"
#pragma GCC diagnostic ignored "-Wbool-operation"
#pragma GCC diagnostic ignored "-Wint-in-bool-context"
#pragma GCC diagnostic ignored "-Wbool-compare"

const char *const mt_op_names[MT_NUM_OPS] = {
#define MT_X(name, expr, E) #name,
  MT_UNARY_FLOAT_OPS(MT_X, _) MT_UNARY_SAME_OPS(MT_X, _) MT_UNARY_BOOL_OPS(MT_X, _)
  MT_BINARY_OPS(MT_X, _) MT_BINARY_FLOAT_OPS(MT_X, _) MT_COMPARE_OPS(MT_X, _)
#undef MT_X
};

/* ---- scalar helpers with C semantics fixed to PyTorch's ---- */
static inline double fmod_d(double a, double b) { return fmod(a, b); }
static inline float fmod_f(float a, float b) { return fmod(a, b); }
static inline int64_t fmod_i(int64_t a, int64_t b) { return b == 0 ? 0 : (b == -1 ? 0 : a % b); }
#define mt_fmod(a, b) _Generic((a), float: fmod_f, double: fmod_d, default: fmod_i)(a, b)

static inline double rem_d(double a, double b) { double m = fmod(a, b); return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }
static inline float rem_f(float a, float b) { float m = fmod(a, b); return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }
static inline int64_t rem_i(int64_t a, int64_t b) { if (b == 0 || b == -1) return 0; int64_t m = a % b; return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m; }
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

typedef struct { double p1; } kernel_ctx;

/* One kernel per (op, dtype). The first loop is the contiguous case the
   compiler vectorizes; the second a scalar right operand; the third general. */
#define MT_UNARY_KERNEL(name, expr, E)                                          \
  static void k_##name##_##E(char **d, const int64_t *s, int64_t n, void *c) {  \
    typedef MT_CT_##E ct; (void)c;                                              \
    char *o = d[0]; const char *x = d[1];                                       \
    if (s[0] == s[1]) {                                                         \
      int64_t step = s[0];                                                      \
      for (int64_t i = 0; i < n; i++) { ct v = MT_LOAD_##E(x + i * step); MT_STORE_##E(o + i * step, (expr)); } \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) { ct v = MT_LOAD_##E(x); MT_STORE_##E(o, (expr)); } \
  }
#define MT_UNARY_BOOL_KERNEL(name, expr, E)                                     \
  static void k_##name##_##E(char **d, const int64_t *s, int64_t n, void *c) {  \
    typedef MT_CT_##E ct; (void)c; (void)sizeof(ct);                            \
    char *o = d[0]; const char *x = d[1];                                       \
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1]) { ct v = MT_LOAD_##E(x); MT_STORE_BOOL(o, (expr)); } \
  }
#define MT_BINARY_KERNEL_AS(name, expr, E, STORE)                               \
  static void k_##name##_##E(char **d, const int64_t *s, int64_t n, void *c) {  \
    typedef MT_CT_##E ct; const ct p1 = (ct)((const kernel_ctx *)c)->p1; (void)p1; \
    char *o = d[0]; const char *pa = d[1], *pb = d[2];                          \
    if (s[1] == s[0] && s[2] == s[0]) {                                         \
      int64_t step = s[0];                                                      \
      for (int64_t i = 0; i < n; i++) { ct a = MT_LOAD_##E(pa + i * step), b = MT_LOAD_##E(pb + i * step); STORE(o + i * step, (expr)); } \
      return;                                                                   \
    }                                                                           \
    if (s[2] == 0 && s[1] == s[0]) {                                            \
      const ct b = MT_LOAD_##E(pb); int64_t step = s[0];                        \
      for (int64_t i = 0; i < n; i++) { ct a = MT_LOAD_##E(pa + i * step); STORE(o + i * step, (expr)); } \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++, o += s[0], pa += s[1], pb += s[2]) {       \
      ct a = MT_LOAD_##E(pa), b = MT_LOAD_##E(pb); STORE(o, (expr));            \
    }                                                                           \
  }
#define MT_BINARY_KERNEL(name, expr, E) MT_BINARY_KERNEL_AS(name, expr, E, MT_STORE_##E)
#define MT_COMPARE_KERNEL(name, expr, E) MT_BINARY_KERNEL_AS(name, expr, E, MT_STORE_BOOL)

#define MT_GEN_ALL(E, T, N, TN, K)                                              \
  MT_UNARY_SAME_OPS(MT_UNARY_KERNEL, E)                                         \
  MT_UNARY_BOOL_OPS(MT_UNARY_BOOL_KERNEL, E)                                    \
  MT_BINARY_OPS(MT_BINARY_KERNEL, E)                                            \
  MT_COMPARE_OPS(MT_COMPARE_KERNEL, E)
#define MT_GEN_FLOAT(E, T, N, TN, K)                                            \
  MT_UNARY_FLOAT_OPS(MT_UNARY_KERNEL, E)                                        \
  MT_BINARY_FLOAT_OPS(MT_BINARY_KERNEL, E)
MT_DTYPES(MT_GEN_ALL)
MT_FLOAT_DTYPES(MT_GEN_FLOAT)

#define MT_ENTRY(name, expr, E) [MT_OP_##name][MT_##E] = k_##name##_##E,
#define MT_TAB_ALL(E, T, N, TN, K)                                              \
  MT_UNARY_SAME_OPS(MT_ENTRY, E) MT_UNARY_BOOL_OPS(MT_ENTRY, E)                 \
  MT_BINARY_OPS(MT_ENTRY, E) MT_COMPARE_OPS(MT_ENTRY, E)
#define MT_TAB_FLOAT(E, T, N, TN, K)                                            \
  MT_UNARY_FLOAT_OPS(MT_ENTRY, E) MT_BINARY_FLOAT_OPS(MT_ENTRY, E)
static const mt_loop_fn kernels[MT_NUM_OPS][MT_NDTYPES] = {
  MT_DTYPES(MT_TAB_ALL)
  MT_FLOAT_DTYPES(MT_TAB_FLOAT)
};

/* op classes, by position in the enum */
#define MT_COUNT(name, expr, E) +1
enum {
  N_UNARY_FLOAT = 0 MT_UNARY_FLOAT_OPS(MT_COUNT, _),
  N_UNARY_SAME = 0 MT_UNARY_SAME_OPS(MT_COUNT, _),
  N_UNARY_BOOL = 0 MT_UNARY_BOOL_OPS(MT_COUNT, _),
  N_BINARY = 0 MT_BINARY_OPS(MT_COUNT, _),
  N_BINARY_FLOAT = 0 MT_BINARY_FLOAT_OPS(MT_COUNT, _),
};
static int is_unary_float(mt_op op) { return (int)op < N_UNARY_FLOAT; }
static int is_unary_bool(mt_op op) { int o = (int)op; return o >= N_UNARY_FLOAT + N_UNARY_SAME && o < N_UNARY_FLOAT + N_UNARY_SAME + N_UNARY_BOOL; }
static int first_binary(void) { return N_UNARY_FLOAT + N_UNARY_SAME + N_UNARY_BOOL; }
static int is_binary_float(mt_op op) { int b = first_binary() + N_BINARY; return (int)op >= b && (int)op < b + N_BINARY_FLOAT; }
static int is_compare(mt_op op) { return (int)op >= first_binary() + N_BINARY + N_BINARY_FLOAT; }

/* ---- result types ---- */
int mt_result_type(const mt_operand *ops, int n, int default_float) {
  int dim_t = -1, zero_t = -1, scalar_kind = -1;
  for (int i = 0; i < n; i++) {
    if (ops[i].t) {
      int dt = ops[i].t->dtype;
      int *slot = ops[i].t->ndim > 0 ? &dim_t : &zero_t;
      *slot = *slot < 0 ? dt : (int)mt_promote(*slot, dt);
    } else {
      int k = ops[i].is_int ? 1 : 2;
      if (k > scalar_kind) scalar_kind = k;
    }
  }
  int r = dim_t;
  if (zero_t >= 0) {
    if (r < 0) r = zero_t;
    else if (mt_dtypes[zero_t].kind > mt_dtypes[r].kind) r = zero_t;
  }
  if (scalar_kind >= 0) {
    if (r < 0) r = scalar_kind == 2 ? default_float : MT_INT64;
    else if (scalar_kind > mt_dtypes[r].kind) r = scalar_kind == 2 ? default_float : MT_INT64;
  }
  return r;
}

/* Makes *view an operand of the given dtype and shape: a converted copy or a
   broadcast view of a tensor, or a stride-0 view of a scalar in buf. */
static int prepare(mt_tensor *view, mt_storage *scalar_storage, char *buf, const mt_operand *op,
                   int dtype, int ndim, const int64_t *shape) {
  if (!op->t) {
    if (op->is_int) mt_set_i64(dtype, buf, (int64_t)op->value);
    else mt_set_f64(dtype, buf, op->value);
    memset(scalar_storage, 0, sizeof *scalar_storage);
    scalar_storage->refcount = 1;
    scalar_storage->data = buf;
    scalar_storage->nbytes = 8;
    view->storage = scalar_storage;
    view->offset = 0;
    view->dtype = dtype;
    view->ndim = ndim;
    for (int i = 0; i < ndim; i++) { view->shape[i] = shape[i]; view->stride[i] = 0; }
    mt_storage_retain(scalar_storage);
    return 0;
  }
  mt_tensor conv = {0};
  if (mt_to_dtype(&conv, op->t, dtype)) return -1;
  int rc = mt_expand(view, &conv, ndim, shape);
  mt_tensor_release(&conv);
  return rc;
}

static int check_inplace_dtype(const char *op, int result, int out) {
  if (mt_dtypes[result].kind > mt_dtypes[out].kind)
    return mt_fail("%s_: result type %s can't be cast to the desired output type %s", op,
                   mt_dtypes[result].name, mt_dtypes[out].name);
  return 0;
}

int mt_unary(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float) {
  const char *name = mt_op_names[op];
  int in_dtype = x->dtype, out_dtype = x->dtype;
  if (is_unary_float(op)) {
    if (!mt_dtype_is_float(x->dtype)) {
      if (inplace) return check_inplace_dtype(name, default_float, x->dtype);
      in_dtype = out_dtype = default_float;
    }
  } else if (is_unary_bool(op)) {
    out_dtype = MT_BOOL;
    if (inplace) return mt_fail("%s: has no in-place form", name);
  } else if (x->dtype == MT_BOOL) {
    return mt_fail("%s: not supported for bool tensors", name);
  }
  mt_tensor in = {0};
  if (mt_to_dtype(&in, x, in_dtype)) return -1;
  if (!inplace && mt_tensor_init(r, out_dtype, x->ndim, x->shape)) { mt_tensor_release(&in); return -1; }
  const mt_tensor *ops[2] = {r, &in};
  mt_iter it;
  mt_iter_init(&it, 2, ops);
  mt_iter_run(&it, kernels[op][in_dtype], NULL, 0);
  mt_tensor_release(&in);
  if (inplace) r->storage->version++;
  return 0;
}

int mt_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op,
              double alpha, int inplace, int default_float) {
  const char *name = mt_op_names[op];
  mt_operand both[2] = {*a, *b};
  int dtype = mt_result_type(both, 2, default_float);
  if (dtype < 0) return mt_fail("%s: needs at least one tensor", name);
  if (is_binary_float(op) && !mt_dtype_is_float(dtype)) dtype = default_float;
  if (!is_compare(op) && dtype == MT_BOOL && op != MT_OP_add && op != MT_OP_mul &&
      op != MT_OP_maximum && op != MT_OP_minimum)
    return mt_fail("%s: not supported for bool tensors", name);
  int out_dtype = is_compare(op) ? MT_BOOL : dtype;
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  const int64_t *sa = a->t ? a->t->shape : NULL, *sb = b->t ? b->t->shape : NULL;
  if (mt_broadcast_shapes(name, a->t ? a->t->ndim : 0, sa, b->t ? b->t->ndim : 0, sb, &ndim, shape))
    return -1;
  if (inplace) {
    if (r->ndim != ndim || memcmp(r->shape, shape, sizeof(int64_t) * (size_t)ndim)) {
      char b1[128], b2[128];
      return mt_fail("%s_: output of shape %s cannot hold the broadcast result (other is %s)", name,
                     mt_shape_str(r, b1, sizeof b1), b->t ? mt_shape_str(b->t, b2, sizeof b2) : "a number");
    }
    if (check_inplace_dtype(name, out_dtype, r->dtype)) return -1;
    if (!is_compare(op)) dtype = r->dtype;
    out_dtype = r->dtype;
  }
  mt_storage s1, s2;
  char buf1[8], buf2[8];
  mt_tensor va = {0}, vb = {0}, out = {0};
  if (prepare(&va, &s1, buf1, a, dtype, ndim, shape)) return -1;
  if (prepare(&vb, &s2, buf2, b, dtype, ndim, shape)) { mt_tensor_release(&va); return -1; }
  mt_tensor *dst = r;
  int rc = 0;
  if (inplace && is_compare(op) && r->dtype != MT_BOOL) {
    rc = mt_tensor_init(&out, MT_BOOL, ndim, shape);
    dst = &out;
  } else if (!inplace) rc = mt_tensor_init(r, out_dtype, ndim, shape);
  if (rc == 0) {
    const mt_tensor *ops[3] = {dst, &va, &vb};
    mt_iter it;
    kernel_ctx ctx = {alpha};
    mt_iter_init(&it, 3, ops);
    mt_iter_run(&it, kernels[op][dtype], &ctx, 0);
    if (dst == &out) rc = mt_copy(r, &out);
    else if (inplace) r->storage->version++;
  }
  mt_tensor_release(&va);
  mt_tensor_release(&vb);
  mt_tensor_release(&out);
  return rc;
}
