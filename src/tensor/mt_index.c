/* mt_index.c: indexing with tensors. Two walks serve every op: gather
   (out[p] = src[p + index[p] * step]) and scatter (dst[p + index[p] * step]
   = or += src[p]), over views whose indexed dim has stride 0; masks first
   become lists of element offsets. Also nonzero and where. */
#include <stdint.h>
#include <string.h>
#include "mt_index.h"
#include "mt_iter.h"
#include "mt_kernel.h"
#include "mt_ops.h"
#include "mt_isa.h"

/* One element moved by its size: every dtype is 1, 2, 4 or 8 bytes. */
#define MT_ELEM_SIZES(X) X(1, uint8_t) X(2, uint16_t) X(4, uint32_t) X(8, uint64_t)

static int size_slot(int dtype) {
  switch (mt_dtypes[dtype].size) {
  case 1: return 0;
  case 2: return 1;
  case 4: return 2;
  default: return 3;
  }
}

typedef struct {
  int64_t step;     /* bytes from one position of the indexed dim to the next */
  int64_t size;     /* the dim's length: a negative index counts back from it */
  int64_t base;     /* index origin (0 in C, 1 from Lua) */
  double alpha;     /* scatter-add multiplier */
} index_ctx;

/* Indices are checked before any walk, so this only maps them. */
static inline int64_t wrap_index(const index_ctx *c, int64_t v) {
  return v < 0 ? v + c->size : v - c->base;
}

/* ---- kernels ---- */
/* operands: out, src (indexed dim at stride 0), int64 index */
#define GATHER_KERNEL(S, T)                                                     \
  static MT_CLONES void gather_##S(char **d, const int64_t *s, int64_t n, void *c) {      \
    const index_ctx *ic = c;                                                    \
    char *o = d[0]; const char *x = d[1], *ix = d[2];                           \
    if (s[2] == 0) {  /* one index for the run (index_select's rows): a copy */ \
      const char *from = x + wrap_index(ic, *(const int64_t *)ix) * ic->step;   \
      if (s[0] == (int64_t)sizeof(T) && s[1] == (int64_t)sizeof(T))            \
        memcpy(o, from, (size_t)n * sizeof(T));                                 \
      else                                                                      \
        for (int64_t i = 0; i < n; i++) *(T *)(o + i * s[0]) = *(const T *)(from + i * s[1]); \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], ix += s[2])           \
      *(T *)o = *(const T *)(x + wrap_index(ic, *(const int64_t *)ix) * ic->step); \
  }
/* operands: dst (indexed dim at stride 0), src, int64 index */
#define SCATTER_KERNEL(S, T)                                                    \
  static MT_CLONES void scatter_##S(char **d, const int64_t *s, int64_t n, void *c) {     \
    const index_ctx *ic = c;                                                    \
    char *o = d[0]; const char *x = d[1], *ix = d[2];                           \
    for (int64_t i = 0; i < n; i++, o += s[0], x += s[1], ix += s[2])           \
      *(T *)(o + wrap_index(ic, *(const int64_t *)ix) * ic->step) = *(const T *)x; \
  }
/* operands: out, mask (bool or uint8), a, b */
/* Contiguous runs (a or b may be a scalar, stride 0) take branch-free
   indexed loops the compiler vectorises: the mask is data, and a branch on
   it mispredicts half the time. */
#define WHERE_KERNEL(S, T)                                                      \
  static MT_CLONES void where_##S(char **d, const int64_t *s, int64_t n, void *c) {       \
    (void)c;                                                                    \
    char *o = d[0]; const char *m = d[1], *a = d[2], *b = d[3];                 \
    const int64_t e = (int64_t)sizeof(T);                                       \
    if (s[0] == e && s[1] == 1 && (s[2] == e || s[2] == 0) && (s[3] == e || s[3] == 0)) { \
      T *restrict ov = (T *)o;                                                  \
      const uint8_t *restrict mv = (const uint8_t *)m;                          \
      const T *restrict av = (const T *)a, *restrict bv = (const T *)b;         \
      if (s[2] == e && s[3] == e) {                                             \
        for (int64_t i = 0; i < n; i++) { const T x = av[i], y = bv[i]; ov[i] = mv[i] ? x : y; } \
        return;                                                                 \
      }                                                                         \
      if (s[2] == 0 && s[3] == e) {                                             \
        const T x = *av;                                                        \
        for (int64_t i = 0; i < n; i++) { const T y = bv[i]; ov[i] = mv[i] ? x : y; } \
        return;                                                                 \
      }                                                                         \
      if (s[2] == e && s[3] == 0) {                                             \
        const T y = *bv;                                                        \
        for (int64_t i = 0; i < n; i++) { const T x = av[i]; ov[i] = mv[i] ? x : y; } \
        return;                                                                 \
      }                                                                         \
    }                                                                           \
    for (int64_t i = 0; i < n; i++, o += s[0], m += s[1], a += s[2], b += s[3]) \
      *(T *)o = *(const uint8_t *)m ? *(const T *)a : *(const T *)b;            \
  }
/* operands: x, mask; ctx: the value's bytes in x's dtype */
#define MASKED_FILL_KERNEL(S, T)                                                \
  static MT_CLONES void masked_fill_##S(char **d, const int64_t *s, int64_t n, void *c) { \
    T v;                                                                        \
    memcpy(&v, c, sizeof v);                                                    \
    char *o = d[0]; const char *m = d[1];                                       \
    if (s[0] == (int64_t)sizeof(T) && s[1] == 1) {     /* branch-free, vectorised */ \
      T *restrict ov = (T *)o;                                                  \
      const uint8_t *restrict mv = (const uint8_t *)m;                          \
      for (int64_t i = 0; i < n; i++) { const T x = ov[i]; ov[i] = mv[i] ? v : x; } \
      return;                                                                   \
    }                                                                           \
    for (int64_t i = 0; i < n; i++, o += s[0], m += s[1])                       \
      if (*(const uint8_t *)m) *(T *)o = v;                                     \
  }
MT_ELEM_SIZES(GATHER_KERNEL)
MT_ELEM_SIZES(SCATTER_KERNEL)
MT_ELEM_SIZES(WHERE_KERNEL)
MT_ELEM_SIZES(MASKED_FILL_KERNEL)

#define GATHER_ENTRY(S, T) gather_##S,
#define SCATTER_ENTRY(S, T) scatter_##S,
#define WHERE_ENTRY(S, T) where_##S,
#define MASKED_FILL_ENTRY(S, T) masked_fill_##S,
static const mt_loop_fn gather_kernels[4] = {MT_ELEM_SIZES(GATHER_ENTRY)};
static const mt_loop_fn scatter_kernels[4] = {MT_ELEM_SIZES(SCATTER_ENTRY)};
static const mt_loop_fn where_kernels[4] = {MT_ELEM_SIZES(WHERE_ENTRY)};
static const mt_loop_fn masked_fill_kernels[4] = {MT_ELEM_SIZES(MASKED_FILL_ENTRY)};

/* scatter with add, per dtype: dst += alpha * src in the compute type */
#define SCATTER_ADD_KERNEL(E, T, N, TN, K)                                      \
  static MT_CLONES void scatter_add_##E(char **d, const int64_t *s, int64_t n, void *c) { \
    typedef MT_CT_##E ct;                                                       \
    const index_ctx *ic = c;                                                    \
    const ct alpha = (ct)ic->alpha;                                             \
    char *o = d[0]; const char *x = d[1], *ix = d[2];                           \
    for (int64_t i = 0; i < n; i++, x += s[1], ix += s[2], o += s[0]) {         \
      char *p = o + wrap_index(ic, *(const int64_t *)ix) * ic->step;            \
      ct a = MT_LOAD_##E(p), b = MT_LOAD_##E(x);                                \
      MT_STORE_##E(p, a + alpha * b);                                           \
    }                                                                           \
  }
#define SCATTER_ADD_ENTRY(E, T, N, TN, K) [MT_##E] = scatter_add_##E,
MT_DTYPES(SCATTER_ADD_KERNEL)
static const mt_loop_fn scatter_add_kernels[MT_NDTYPES] = {MT_DTYPES(SCATTER_ADD_ENTRY)};

/* nonzero test per dtype: NaN is nonzero, -0.0 is zero */
typedef int (*nonzero_fn)(const char *p);
#define NONZERO_TEST(E, T, N, TN, K) \
  static int nonzero_##E(const char *p) { return MT_LOAD_##E(p) != 0; }
#define NONZERO_ENTRY(E, T, N, TN, K) [MT_##E] = nonzero_##E,
MT_DTYPES(NONZERO_TEST)
static const nonzero_fn nonzero_tests[MT_NDTYPES] = {MT_DTYPES(NONZERO_ENTRY)};

/* ---- views made for one call ---- */
/* A borrowed view: t's storage, offset and dtype with a new geometry. Never
   retained or released; it lives only inside the call that made it. */
static mt_tensor borrow(const mt_tensor *t, int ndim, const int64_t *shape, const int64_t *stride) {
  mt_tensor v = *t;
  v.grad_meta = NULL;
  v.ndim = ndim;
  memcpy(v.shape, shape, sizeof(int64_t) * (size_t)ndim);
  memcpy(v.stride, stride, sizeof(int64_t) * (size_t)ndim);
  return v;
}

/* t itself, or a 1-element 1-D view of a 0-dim t: the ops below work in
   this frame and give 0-dim results back as PyTorch does. */
static mt_tensor frame(const mt_tensor *t) {
  static const int64_t one = 1;
  return t->ndim ? borrow(t, t->ndim, t->shape, t->stride) : borrow(t, 1, &one, &one);
}

/* value (one element, any dtype) as dtype into buf; integers stay exact */
static void store_scalar(char *buf, int dtype, const mt_tensor *value) {
  const char *p = mt_data(value);
  if (mt_dtype_is_float(value->dtype)) mt_set_f64(dtype, buf, mt_get_f64(value->dtype, p));
  else mt_set_i64(dtype, buf, mt_get_i64(value->dtype, p));
}

static int check_value(const char *op, const mt_tensor *value) {
  char b[128];
  if (value->ndim != 0)
    return mt_fail("%s: value must be a number or a 0-dim tensor, got a tensor of shape %s", op,
                   mt_shape_str(value, b, sizeof b));
  return 0;
}

/* ---- index tensors ---- */
/* index as int64: an alias, or a converted copy of an int32 index */
static int index_as_int64(const char *op, mt_tensor *r, const mt_tensor *index) {
  if (index->dtype != MT_INT64 && index->dtype != MT_INT32)
    return mt_fail("%s: index must be an int64 or int32 tensor, got %s", op, mt_dtypes[index->dtype].name);
  return mt_to_dtype(r, index, MT_INT64);
}

typedef struct { int64_t size, base, bad; int found; } range_ctx;

static MT_CLONES void range_kernel(char **d, const int64_t *s, int64_t n, void *c) {
  range_ctx *k = c;
  if (k->found) return;
  const char *p = d[0];
  if (s[0] == (int64_t)sizeof(int64_t)) {      /* a contiguous run: one branch-free test first */
    const int64_t *v = (const int64_t *)p;
    int64_t lo = INT64_MAX, hi = INT64_MIN, in_gap = 0;
    for (int64_t i = 0; i < n; i++) {
      lo = v[i] < lo ? v[i] : lo;
      hi = v[i] > hi ? v[i] : hi;
      in_gap |= (v[i] >= 0) & (v[i] < k->base);
    }
    if (n == 0 || (lo >= -k->size && hi - k->base < k->size && !in_gap)) return;
  }
  for (int64_t i = 0; i < n; i++, p += s[0]) {
    int64_t v = *(const int64_t *)p;
    if (v < -k->size || (v >= 0 && v < k->base) || v - k->base >= k->size) {
      k->found = 1;
      k->bad = v;
      return;
    }
  }
}

/* Fails on the first (row-major) index outside [-size, size) shifted by base. */
static int check_range(const char *op, const mt_tensor *index, int dim, int64_t size, int64_t base) {
  range_ctx k = {size, base, 0, 0};
  const mt_tensor *ops[1] = {index};
  mt_iter it;
  mt_iter_init(&it, 1, ops);
  mt_iter_run(&it, range_kernel, &k, 1);
  if (!k.found) return 0;
  return mt_fail("%s: index %lld out of range for dim %d of size %lld%s", op, (long long)k.bad, dim + 1,
                 (long long)size, k.bad == 0 && base == 1 ? " (indices are 1-based)" : "");
}

/* ---- the two walks ---- */
/* r[p] = xv[p + iv[p] * step] over r's shape (xv, iv: views of that shape). */
static void run_gather(const mt_tensor *r, const mt_tensor *xv, const mt_tensor *iv, index_ctx *c) {
  const mt_tensor *ops[3] = {r, xv, iv};
  mt_iter it;
  mt_iter_init(&it, 3, ops);
  mt_iter_run(&it, gather_kernels[size_slot(r->dtype)], c, 0);
}

/* dv[p + iv[p] * step] = (or +=) sv[p] over dv's shape. Serial: repeated
   indices must land in one order whatever the thread count. */
static void run_scatter(const mt_tensor *dv, const mt_tensor *sv, const mt_tensor *iv, index_ctx *c, int add) {
  const mt_tensor *ops[3] = {dv, sv, iv};
  mt_iter it;
  mt_iter_init(&it, 3, ops);
  mt_iter_run(&it, add ? scatter_add_kernels[dv->dtype] : scatter_kernels[size_slot(dv->dtype)], c, 1);
  dv->storage->version++;
}

/* ---- index_select, index_add_, index_copy_, index_fill_ ---- */
static int index_select_impl(const char *op, mt_tensor *r, const mt_tensor *x, int dim,
                             const mt_tensor *index, int64_t base) {
  char b[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  if (index->ndim > 1) return mt_fail("%s: index must be 0-D or 1-D, got shape %s", op, mt_shape_str(index, b, sizeof b));
  int64_t m = mt_numel(index);
  if (x->ndim == 0 && m != 1)
    return mt_fail("%s: a 0-dim tensor takes exactly one index, got %lld", op, (long long)m);
  mt_tensor idx = {0};
  if (index_as_int64(op, &idx, index)) return -1;
  mt_tensor xf = frame(x);
  int rc = check_range(op, &idx, dim, xf.shape[dim], base);
  if (rc == 0) {
    int64_t shape[MT_MAX_DIMS], xs[MT_MAX_DIMS], is[MT_MAX_DIMS] = {0};
    memcpy(shape, xf.shape, sizeof(int64_t) * (size_t)xf.ndim);
    memcpy(xs, xf.stride, sizeof(int64_t) * (size_t)xf.ndim);
    shape[dim] = m;
    xs[dim] = 0;
    is[dim] = idx.ndim ? idx.stride[0] : 0;
    rc = mt_tensor_init(r, x->dtype, xf.ndim, shape);
    if (rc == 0) {
      mt_tensor xv = borrow(&xf, xf.ndim, shape, xs), iv = borrow(&idx, xf.ndim, shape, is);
      index_ctx c = {xf.stride[dim] * mt_dtypes[x->dtype].size, xf.shape[dim], base, 1};
      run_gather(r, &xv, &iv, &c);
      r->ndim = x->ndim;
    }
  }
  mt_tensor_release(&idx);
  return rc;
}

/* Each op below hands tensors off the CPU to their device's kernel
   (mt_device_extra, mt_ops.h). */
int mt_index_select(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base) {
  if (__builtin_expect(mt_any_off_cpu(x, index, NULL), 0))
    MT_EXTRA_CALL("index_select", index_select, x, index, NULL, r, x, dim, index, base);
  return index_select_impl("index_select", r, x, dim, index, base);
}

/* x's slices index[j] along dim take src's slice j (or value); add: +=. */
static int index_put_impl(const char *op, mt_tensor *x, int dim, const mt_tensor *index,
                          const mt_tensor *src, const mt_tensor *value, int add, double alpha, int64_t base) {
  char b1[128], b2[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  if (index->ndim > 1) return mt_fail("%s: index must be 0-D or 1-D, got shape %s", op, mt_shape_str(index, b1, sizeof b1));
  if (value && check_value(op, value)) return -1;
  mt_tensor xf = frame(x), srcf = {0};
  int64_t shape[MT_MAX_DIMS], xs[MT_MAX_DIMS], is[MT_MAX_DIMS] = {0};
  memcpy(shape, xf.shape, sizeof(int64_t) * (size_t)xf.ndim);
  memcpy(xs, xf.stride, sizeof(int64_t) * (size_t)xf.ndim);
  shape[dim] = mt_numel(index);
  xs[dim] = 0;
  if (src) {
    if (src->dtype != x->dtype)
      return mt_fail("%s: self (%s) and source (%s) must have the same dtype", op,
                     mt_dtypes[x->dtype].name, mt_dtypes[src->dtype].name);
    srcf = frame(src);
    mt_tensor want = borrow(&xf, xf.ndim, shape, xs);
    if (!mt_same_shape(&srcf, &want))
      return mt_fail("%s: source must have shape %s (self's with the index's length in dim %d), got %s", op,
                     mt_dims_str(shape, xf.ndim, b1, sizeof b1), dim + 1, mt_shape_str(src, b2, sizeof b2));
  }
  mt_tensor idx = {0};
  if (index_as_int64(op, &idx, index)) return -1;
  int rc = check_range(op, &idx, dim, xf.shape[dim], base);
  if (rc == 0) {
    mt_storage s;
    char buf[8];
    mt_tensor sv;
    if (src) sv = srcf;
    else {
      store_scalar(buf, x->dtype, value);
      mt_scalar_view(&sv, &s, buf, x->dtype, xf.ndim, shape);
    }
    is[dim] = idx.ndim ? idx.stride[0] : 0;
    mt_tensor dv = borrow(&xf, xf.ndim, shape, xs), iv = borrow(&idx, xf.ndim, shape, is);
    index_ctx c = {xf.stride[dim] * mt_dtypes[x->dtype].size, xf.shape[dim], base, alpha};
    run_scatter(&dv, &sv, &iv, &c, add);
  }
  mt_tensor_release(&idx);
  return rc;
}

int mt_index_add(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, double alpha,
                 int64_t base) {
  if (__builtin_expect(mt_any_off_cpu(x, index, src), 0))
    MT_EXTRA_CALL("index_add_", index_add, x, index, src, x, dim, index, src, alpha, base);
  return index_put_impl("index_add_", x, dim, index, src, NULL, 1, alpha, base);
}

int mt_index_copy(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int64_t base) {
  if (__builtin_expect(mt_any_off_cpu(x, index, src), 0))
    MT_EXTRA_CALL("index_copy_", index_copy, x, index, src, x, dim, index, src, base);
  return index_put_impl("index_copy_", x, dim, index, src, NULL, 0, 1, base);
}

int mt_index_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int64_t base) {
  if (__builtin_expect(mt_any_off_cpu(x, index, value), 0))
    MT_EXTRA_CALL("index_fill_", index_fill, x, index, value, x, dim, index, value, base);
  return index_put_impl("index_fill_", x, dim, index, NULL, value, 0, 1, base);
}

/* ---- gather, scatter ---- */
int mt_gather(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base) {
  if (__builtin_expect(mt_any_off_cpu(x, index, NULL), 0))
    MT_EXTRA_CALL("gather", gather, x, index, NULL, r, x, dim, index, base);
  const char *op = "gather";
  char b1[128], b2[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  mt_tensor xf = frame(x), inf = frame(index);
  if (x->ndim == 0 ? index->ndim > 1 : index->ndim != x->ndim)
    return mt_fail("%s: index must have as many dims as self (%d), got %d", op, x->ndim, index->ndim);
  for (int d = 0; d < xf.ndim; d++)
    if (d != dim && inf.shape[d] > xf.shape[d])
      return mt_fail("%s: index %s is larger than self %s in dim %d (only dim %d may be larger)", op,
                     mt_shape_str(index, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2), d + 1, dim + 1);
  mt_tensor idx = {0};
  if (index_as_int64(op, &idx, index)) return -1;
  int rc = check_range(op, &idx, dim, xf.shape[dim], base);
  if (rc == 0) rc = mt_tensor_init(r, x->dtype, index->ndim, index->shape);
  if (rc == 0) {
    int64_t xs[MT_MAX_DIMS];
    memcpy(xs, xf.stride, sizeof(int64_t) * (size_t)xf.ndim);
    xs[dim] = 0;
    mt_tensor rf = frame(r), xv = borrow(&xf, inf.ndim, inf.shape, xs), iv = frame(&idx);
    index_ctx c = {xf.stride[dim] * mt_dtypes[x->dtype].size, xf.shape[dim], base, 1};
    run_gather(&rf, &xv, &iv, &c);
  }
  mt_tensor_release(&idx);
  return rc;
}

/* scatter_, scatter_add_ and their value forms (src NULL) */
static int scatter_impl(const char *op, mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src,
                        const mt_tensor *value, int add, int64_t base) {
  char b1[128], b2[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  mt_tensor xf = frame(x), inf = frame(index), srcf = {0};
  if (x->ndim == 0 ? index->ndim > 1 : index->ndim != x->ndim)
    return mt_fail("%s: index must have as many dims as self (%d), got %d", op, x->ndim, index->ndim);
  if (value && check_value(op, value)) return -1;
  if (src) {
    if (src->dtype != x->dtype)
      return mt_fail("%s: self (%s) and src (%s) must have the same dtype", op, mt_dtypes[x->dtype].name,
                     mt_dtypes[src->dtype].name);
    srcf = frame(src);
    if (srcf.ndim != inf.ndim)
      return mt_fail("%s: src must have as many dims as index (%d), got %d", op, index->ndim, src->ndim);
  }
  for (int d = 0; d < xf.ndim; d++) {
    if (d != dim && inf.shape[d] > xf.shape[d])
      return mt_fail("%s: index %s is larger than self %s in dim %d (only dim %d may be larger)", op,
                     mt_shape_str(index, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2), d + 1, dim + 1);
    if (src && inf.shape[d] > srcf.shape[d])
      return mt_fail("%s: index %s is larger than src %s in dim %d", op, mt_shape_str(index, b1, sizeof b1),
                     mt_shape_str(src, b2, sizeof b2), d + 1);
  }
  mt_tensor idx = {0};
  if (index_as_int64(op, &idx, index)) return -1;
  int rc = check_range(op, &idx, dim, xf.shape[dim], base);
  if (rc == 0) {
    mt_storage s;
    char buf[8];
    mt_tensor sv;
    if (src) sv = borrow(&srcf, inf.ndim, inf.shape, srcf.stride);
    else {
      store_scalar(buf, x->dtype, value);
      mt_scalar_view(&sv, &s, buf, x->dtype, inf.ndim, inf.shape);
    }
    int64_t xs[MT_MAX_DIMS];
    memcpy(xs, xf.stride, sizeof(int64_t) * (size_t)xf.ndim);
    xs[dim] = 0;
    mt_tensor dv = borrow(&xf, inf.ndim, inf.shape, xs), iv = frame(&idx);
    index_ctx c = {xf.stride[dim] * mt_dtypes[x->dtype].size, xf.shape[dim], base, 1};
    run_scatter(&dv, &sv, &iv, &c, add);
  }
  mt_tensor_release(&idx);
  return rc;
}

int mt_scatter(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int add, int64_t base) {
  if (__builtin_expect(mt_any_off_cpu(x, index, src), 0))
    MT_EXTRA_CALL(add ? "scatter_add_" : "scatter_", scatter, x, index, src, x, dim, index, src, add, base);
  return scatter_impl(add ? "scatter_add_" : "scatter_", x, dim, index, src, NULL, add, base);
}

int mt_scatter_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int add,
                    int64_t base) {
  if (__builtin_expect(mt_any_off_cpu(x, index, value), 0))
    MT_EXTRA_CALL("scatter_", scatter_fill, x, index, value, x, dim, index, value, add, base);
  return scatter_impl("scatter_", x, dim, index, NULL, value, add, base);
}

/* ---- masks ---- */
typedef void (*visit_fn)(void *ctx, const int64_t *index);

/* Visits t's nonzero elements in row-major order with their multi-index
   (visit may be NULL) and returns how many there are. */
static int64_t walk_nonzero(const mt_tensor *t, visit_fn visit, void *ctx) {
  int64_t numel = mt_numel(t), idx[MT_MAX_DIMS] = {0}, count = 0;
  if (numel == 0) return 0;
  nonzero_fn test = nonzero_tests[t->dtype];
  int nd = t->ndim;
  int64_t es = mt_dtypes[t->dtype].size;
  if (nd == 0) {
    if (!test(mt_data(t))) return 0;
    if (visit) visit(ctx, idx);
    return 1;
  }
  int64_t inner = t->shape[nd - 1], step = t->stride[nd - 1] * es;
  for (int64_t row = 0; row < numel / inner; row++) {
    const char *p = mt_data(t);
    for (int d = 0; d < nd - 1; d++) p += idx[d] * t->stride[d] * es;
    for (int64_t j = 0; j < inner; j++, p += step) {
      if (!test(p)) continue;
      count++;
      if (visit) { idx[nd - 1] = j; visit(ctx, idx); }
    }
    for (int d = nd - 2; d >= 0; d--) { if (++idx[d] < t->shape[d]) break; idx[d] = 0; }
  }
  return count;
}

static int check_mask(const char *op, const mt_tensor *mask) {
  if (mask->dtype != MT_BOOL && mask->dtype != MT_UINT8)
    return mt_fail("%s: mask must be a bool (or uint8) tensor, got %s", op, mt_dtypes[mask->dtype].name);
  return 0;
}

/* x[mask] needs mask's shape to equal x's leading dims. */
static int check_leading(const char *op, const mt_tensor *x, const mt_tensor *mask) {
  char b1[128], b2[128];
  if (check_mask(op, mask)) return -1;
  int ok = mask->ndim <= x->ndim;
  for (int d = 0; ok && d < mask->ndim; d++) ok = mask->shape[d] == x->shape[d];
  if (!ok)
    return mt_fail("%s: mask of shape %s does not match the leading dims of the indexed tensor %s", op,
                   mt_shape_str(mask, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2));
  return 0;
}

int mt_index_check_mask(const char *op, const mt_tensor *x, const mt_tensor *mask) {
  return check_leading(op, x, mask);
}

typedef struct { const int64_t *stride; int ndim; int64_t *out; } offset_ctx;

static void offset_visit(void *c, const int64_t *index) {
  offset_ctx *k = c;
  int64_t off = 0;
  for (int d = 0; d < k->ndim; d++) off += index[d] * k->stride[d];
  *k->out++ = off;
}

/* The element offsets (from x's first element) of the rows x[mask] picks,
   in row-major order: a 1-D int64 tensor. */
static int mask_offsets(const char *op, const mt_tensor *x, const mt_tensor *mask, mt_tensor *offsets) {
  if (check_leading(op, x, mask)) return -1;
  int64_t count = walk_nonzero(mask, NULL, NULL);
  if (mt_tensor_init(offsets, MT_INT64, 1, &count)) return -1;
  offset_ctx c = {x->stride, mask->ndim, (int64_t *)mt_data(offsets)};
  walk_nonzero(mask, offset_visit, &c);
  return 0;
}

/* The shape of x[mask] (count, then x's dims past the mask's) and the
   views walking it: x's rows (dv) and the offsets (iv), both at stride 0
   where the other varies. */
static int mask_views(const char *op, const mt_tensor *x, int k, const mt_tensor *off, int *nd,
                      int64_t *shape, mt_tensor *dv, mt_tensor *iv) {
  int n = 1 + x->ndim - k;
  if (n > MT_MAX_DIMS) return mt_fail("%s: result would have %d dims, at most %d supported", op, n, MT_MAX_DIMS);
  int64_t xs[MT_MAX_DIMS] = {0}, is[MT_MAX_DIMS] = {0};
  shape[0] = off->shape[0];
  is[0] = 1;
  for (int d = k; d < x->ndim; d++) { shape[d - k + 1] = x->shape[d]; xs[d - k + 1] = x->stride[d]; }
  *nd = n;
  *dv = borrow(x, n, shape, xs);
  *iv = borrow(off, n, shape, is);
  return 0;
}

static int index_mask_impl(const char *op, mt_tensor *r, const mt_tensor *x, const mt_tensor *mask) {
  mt_tensor off = {0}, xv, iv;
  int64_t shape[MT_MAX_DIMS];
  int nd;
  if (mask_offsets(op, x, mask, &off)) return -1;
  int rc = mask_views(op, x, mask->ndim, &off, &nd, shape, &xv, &iv);
  if (rc == 0) rc = mt_tensor_init(r, x->dtype, nd, shape);
  if (rc == 0) {
    index_ctx c = {mt_dtypes[x->dtype].size, 0, 0, 1};
    run_gather(r, &xv, &iv, &c);
  }
  mt_tensor_release(&off);
  return rc;
}

/* Off the CPU, x[mask] is the rows of x's leading dims (merged into one)
   at the positions the device's nonzero finds in the mask; x[mask] = v
   copies into them (x's contiguous copy, copied back, when x is strided). */
static int mask_positions(const char *op, mt_tensor *pos, const mt_tensor *me);

static int lead_rows(mt_tensor *rows, const mt_tensor *x, int k) {
  int64_t shape[MT_MAX_DIMS];
  int n = 1 + x->ndim - k, over = 0;
  shape[0] = 1;
  for (int d = 0; d < k; d++) shape[0] = mt_size_mul(shape[0], x->shape[d], &over);
  if (over) return mt_fail("index: the %d leading dims of x hold too many elements", k);
  for (int d = k; d < x->ndim; d++) shape[d - k + 1] = x->shape[d];
  return mt_reshape(rows, x, n, shape);
}

static __attribute__((noinline)) int index_mask_off_cpu(const char *op, mt_tensor *r, const mt_tensor *x,
                                                        const mt_tensor *mask) {
  if (!mt_extra_for(op, x, mask, NULL) || check_leading(op, x, mask)) return -1;
  mt_tensor pos = {0}, rows = {0};
  int rc = mask_positions(op, &pos, mask) || lead_rows(&rows, x, mask->ndim) || mt_index_select(r, &rows, 0, &pos, 0);
  mt_tensor_release(&pos);
  mt_tensor_release(&rows);
  return rc ? -1 : 0;
}

static __attribute__((noinline)) int index_mask_put_off_cpu(const char *op, mt_tensor *x, const mt_tensor *mask,
                                                            const mt_tensor *value) {
  char b1[128], b2[128];
  if (!mt_extra_for(op, x, mask, value) || check_leading(op, x, mask)) return -1;
  int k = mask->ndim, strided = !mt_is_contiguous(x);
  mt_tensor pos = {0}, xc = {0}, rows = {0}, conv = {0}, src = {0}, dense = {0}, moved = {0};
  int rc = 0;
  if (!mt_same_device(value, x)) {               /* a 0-dim CPU value goes over */
    rc = mt_tensor_init_like(&moved, value->dtype, value->ndim, value->shape, x) || mt_copy(&moved, value);
    value = &moved;
  }
  rc = rc || mask_positions(op, &pos, mask) || (strided ? mt_clone(&xc, x) : mt_contiguous(&xc, x)) ||
       lead_rows(&rows, &xc, k) || mt_to_dtype(&conv, value, x->dtype);
  if (rc == 0) {
    int64_t shape[MT_MAX_DIMS];
    memcpy(shape, rows.shape, sizeof(int64_t) * (size_t)rows.ndim);
    shape[0] = pos.shape[0];
    if (mt_expand(&src, &conv, rows.ndim, shape))
      rc = mt_fail("%s: value of shape %s cannot broadcast to the indexed shape %s", op,
                   mt_shape_str(value, b1, sizeof b1), mt_dims_str(shape, rows.ndim, b2, sizeof b2));
  }
  rc = rc || mt_contiguous(&dense, &src) || mt_index_copy(&rows, 0, &pos, &dense, 0) || (strided && mt_copy(x, &xc));
  mt_tensor *all[] = {&pos, &xc, &rows, &conv, &src, &dense, &moved};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_tensor_release(all[i]);
  return rc ? -1 : 0;
}

int mt_index_mask(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask) {
  if (__builtin_expect(mt_any_off_cpu(x, mask, NULL), 0)) return index_mask_off_cpu("index", r, x, mask);
  return index_mask_impl("index", r, x, mask);
}

/* x = value where mask_view (x's shape) is set */
static void run_masked_fill(mt_tensor *x, const mt_tensor *mask_view, const mt_tensor *value) {
  char buf[8];
  store_scalar(buf, x->dtype, value);
  const mt_tensor *ops[2] = {x, mask_view};
  mt_iter it;
  mt_iter_init(&it, 2, ops);
  mt_iter_run(&it, masked_fill_kernels[size_slot(x->dtype)], buf, 0);
  x->storage->version++;
}

int mt_index_mask_put(mt_tensor *x, const mt_tensor *mask, const mt_tensor *value) {
  const char *op = "index assignment";
  char b1[128], b2[128];
  if (__builtin_expect(mt_any_off_cpu(x, mask, value), 0)) return index_mask_put_off_cpu(op, x, mask, value);
  if (value->ndim == 0) {
    /* a scalar: fill through the mask, widened over x's remaining dims */
    if (check_leading(op, x, mask)) return -1;
    int64_t ms[MT_MAX_DIMS] = {0};
    memcpy(ms, mask->stride, sizeof(int64_t) * (size_t)mask->ndim);
    mt_tensor mv = borrow(mask, x->ndim, x->shape, ms);
    run_masked_fill(x, &mv, value);
    return 0;
  }
  mt_tensor off = {0}, conv = {0}, sv = {0}, dv, iv;
  int64_t shape[MT_MAX_DIMS];
  int nd;
  if (mask_offsets(op, x, mask, &off)) return -1;
  int rc = mask_views(op, x, mask->ndim, &off, &nd, shape, &dv, &iv);
  if (rc == 0) rc = mt_to_dtype(&conv, value, x->dtype);
  if (rc == 0 && mt_expand(&sv, &conv, nd, shape))
    rc = mt_fail("%s: value of shape %s cannot broadcast to the indexed shape %s", op,
                 mt_shape_str(value, b1, sizeof b1), mt_dims_str(shape, nd, b2, sizeof b2));
  if (rc == 0) {
    index_ctx c = {mt_dtypes[x->dtype].size, 0, 0, 1};
    run_scatter(&dv, &sv, &iv, &c, 0);
  }
  mt_tensor_release(&off);
  mt_tensor_release(&conv);
  mt_tensor_release(&sv);
  return rc;
}

static int masked_fill_impl(const char *op, mt_tensor *x, const mt_tensor *mask, const mt_tensor *value) {
  char b1[128], b2[128];
  if (check_mask(op, mask) || check_value(op, value)) return -1;
  mt_tensor mv = {0};
  if (mt_expand(&mv, mask, x->ndim, x->shape))
    return mt_fail("%s: mask of shape %s cannot broadcast to self's shape %s", op,
                   mt_shape_str(mask, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2));
  run_masked_fill(x, &mv, value);
  mt_tensor_release(&mv);
  return 0;
}

int mt_masked_fill(mt_tensor *x, const mt_tensor *mask, const mt_tensor *value) {
  if (__builtin_expect(mt_any_off_cpu(x, mask, value), 0))
    MT_EXTRA_CALL("masked_fill_", masked_fill, x, mask, value, x, mask, value);
  return masked_fill_impl("masked_fill_", x, mask, value);
}

/* x and mask broadcast to one shape: their expanded views in xe, me */
static int expand_both(const char *op, const mt_tensor *x, const mt_tensor *mask, mt_tensor *xe, mt_tensor *me) {
  int nd;
  int64_t shape[MT_MAX_DIMS];
  if (check_mask(op, mask)) return -1;
  if (mt_broadcast_shapes(op, x->ndim, x->shape, mask->ndim, mask->shape, &nd, shape)) return -1;
  if (mt_expand(xe, x, nd, shape)) return -1;
  if (mt_expand(me, mask, nd, shape)) { mt_tensor_release(xe); return -1; }
  return 0;
}

int mt_masked_fill_out(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value) {
  if (__builtin_expect(mt_any_off_cpu(x, mask, value), 0))
    MT_EXTRA_CALL("masked_fill", masked_fill_out, x, mask, value, r, x, mask, value);
  const char *op = "masked_fill";
  mt_tensor xe = {0}, me = {0};
  if (check_value(op, value) || expand_both(op, x, mask, &xe, &me)) return -1;
  int rc = mt_clone(r, &xe);
  if (rc == 0) rc = masked_fill_impl(op, r, &me, value);
  mt_tensor_release(&xe);
  mt_tensor_release(&me);
  return rc;
}

/* Off the CPU, the masks are the device's nonzero (the flat positions the
   mask sets, in order) and its index ops on flat views. */
static __attribute__((noinline)) int mask_positions(const char *op, mt_tensor *pos, const mt_tensor *me) {
  if (!mt_extra_for(op, me, NULL, NULL)) return -1;
  int64_t n = mt_numel(me);
  mt_tensor mc = {0}, flat = {0}, nz = {0};
  int rc = mt_contiguous(&mc, me) || mt_reshape(&flat, &mc, 1, &n) || mt_nonzero(&nz, &flat, 0) ||
           mt_reshape(pos, &nz, 1, &nz.shape[0]);
  mt_tensor_release(&mc);
  mt_tensor_release(&flat);
  mt_tensor_release(&nz);
  return rc ? -1 : 0;
}

static __attribute__((noinline)) int masked_select_off_cpu(const char *op, mt_tensor *r, const mt_tensor *xe,
                                                           const mt_tensor *me) {
  if (!mt_extra_for(op, xe, me, NULL)) return -1;
  int64_t n = mt_numel(xe);
  mt_tensor xc = {0}, flat = {0}, pos = {0};
  int rc = mask_positions(op, &pos, me) || mt_contiguous(&xc, xe) || mt_reshape(&flat, &xc, 1, &n) ||
           mt_index_select(r, &flat, 0, &pos, 0);
  mt_tensor_release(&xc);
  mt_tensor_release(&flat);
  mt_tensor_release(&pos);
  return rc ? -1 : 0;
}

int mt_masked_select(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask) {
  const char *op = "masked_select";
  mt_tensor xe = {0}, me = {0};
  if (expand_both(op, x, mask, &xe, &me)) return -1;
  int rc = mt_any_off_cpu(x, mask, NULL) ? masked_select_off_cpu(op, r, &xe, &me) : index_mask_impl(op, r, &xe, &me);
  mt_tensor_release(&xe);
  mt_tensor_release(&me);
  return rc;
}

/* x's places that me (x's shape) sets take src's first elements in order:
   an index_copy into x's flat view (a contiguous copy of x, copied back,
   when x is strided) */
static __attribute__((noinline)) int masked_scatter_off_cpu(const char *op, mt_tensor *x, const mt_tensor *me,
                                                            const mt_tensor *src) {
  int64_t n = mt_numel(x), m = mt_numel(src);
  mt_tensor pos = {0}, sc = {0}, sflat = {0}, part = {0}, xc = {0}, xflat = {0};
  int rc = mask_positions(op, &pos, me);
  int64_t count = rc == 0 ? pos.shape[0] : 0;
  if (rc == 0 && m < count)
    rc = mt_fail("%s: source has %lld elements but the mask selects %lld", op, (long long)m, (long long)count);
  int strided = !mt_is_contiguous(x);
  rc = rc || mt_contiguous(&sc, src) || mt_reshape(&sflat, &sc, 1, &m) || mt_narrow(&part, &sflat, 0, 0, count) ||
       (strided ? mt_clone(&xc, x) : mt_contiguous(&xc, x)) || mt_reshape(&xflat, &xc, 1, &n) ||
       mt_index_copy(&xflat, 0, &pos, &part, 0) || (strided && mt_copy(x, &xc));
  mt_tensor *all[] = {&pos, &sc, &sflat, &part, &xc, &xflat};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_tensor_release(all[i]);
  return rc ? -1 : 0;
}

int mt_masked_scatter(mt_tensor *x, const mt_tensor *mask, const mt_tensor *src) {
  const char *op = "masked_scatter_";
  char b1[128], b2[128];
  if (check_mask(op, mask)) return -1;
  if (src->dtype != x->dtype)
    return mt_fail("%s: self (%s) and source (%s) must have the same dtype", op, mt_dtypes[x->dtype].name,
                   mt_dtypes[src->dtype].name);
  mt_tensor me = {0}, off = {0}, sc = {0};
  if (mt_expand(&me, mask, x->ndim, x->shape))
    return mt_fail("%s: mask of shape %s cannot broadcast to self's shape %s", op,
                   mt_shape_str(mask, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2));
  if (mt_any_off_cpu(x, mask, src)) {
    int rc = mt_extra_for(op, x, mask, src) ? masked_scatter_off_cpu(op, x, &me, src) : -1;
    mt_tensor_release(&me);
    return rc;
  }
  int rc = mask_offsets(op, x, &me, &off);
  int64_t count = rc == 0 ? off.shape[0] : 0;
  if (rc == 0 && mt_numel(src) < count)
    rc = mt_fail("%s: source has %lld elements but the mask selects %lld", op, (long long)mt_numel(src),
                 (long long)count);
  if (rc == 0) rc = mt_contiguous(&sc, src);
  if (rc == 0) {
    static const int64_t zero = 0, one = 1;
    mt_tensor dv = borrow(x, 1, &count, &zero), sv = borrow(&sc, 1, &count, &one);
    index_ctx c = {mt_dtypes[x->dtype].size, 0, 0, 1};
    run_scatter(&dv, &sv, &off, &c, 0);
  }
  mt_tensor_release(&me);
  mt_tensor_release(&off);
  mt_tensor_release(&sc);
  return rc;
}

/* ---- x[index] and x[index] = value ---- */
/* index as a flat int64 tensor (r), after the checks both directions share */
static int flat_index(const char *op, mt_tensor *r, const mt_tensor *x, const mt_tensor *index) {
  if (x->ndim == 0) return mt_fail("%s: cannot index a 0-dim tensor with an index tensor", op);
  if (index->ndim + x->ndim - 1 > MT_MAX_DIMS)
    return mt_fail("%s: result would have %d dims, at most %d supported", op, index->ndim + x->ndim - 1, MT_MAX_DIMS);
  mt_tensor idx = {0};
  if (index_as_int64(op, &idx, index)) return -1;
  int64_t n = mt_numel(&idx);
  int rc = mt_reshape(r, &idx, 1, &n);
  mt_tensor_release(&idx);
  return rc;
}

/* index's shape followed by x's dims past the first */
static int indexed_shape(const mt_tensor *x, const mt_tensor *index, int64_t *shape) {
  memcpy(shape, index->shape, sizeof(int64_t) * (size_t)index->ndim);
  memcpy(shape + index->ndim, x->shape + 1, sizeof(int64_t) * (size_t)(x->ndim - 1));
  return index->ndim + x->ndim - 1;
}

int mt_index_tensor(mt_tensor *r, const mt_tensor *x, const mt_tensor *index, int64_t base) {
  const char *op = "index";
  mt_tensor flat = {0}, sel = {0};
  if (flat_index(op, &flat, x, index)) return -1;
  int rc = index_select_impl(op, &sel, x, 0, &flat, base);
  if (rc == 0) {
    int64_t shape[MT_MAX_DIMS];
    int nd = indexed_shape(x, index, shape);
    rc = mt_view(r, &sel, nd, shape);
  }
  mt_tensor_release(&flat);
  mt_tensor_release(&sel);
  return rc;
}

/* row numbers of the set elements of a mask, row-major over its dims */
typedef struct { int ndim; int64_t stride[MT_MAX_DIMS]; int64_t *out; } row_ctx;
static void row_visit(void *c, const int64_t *index) {
  row_ctx *k = c;
  int64_t row = 0;
  for (int d = 0; d < k->ndim; d++) row += index[d] * k->stride[d];
  *k->out++ = row;
}

int mt_index_key(const mt_tensor *x, const mt_tensor *key, int64_t base, mt_tensor *flat, int64_t *flat_base,
                 int *lead, int *nd, int64_t *shape) {
  const char *op = "index";
  if (key->dtype != MT_BOOL && key->dtype != MT_UINT8) {      /* indices along dim 1 */
    if (flat_index(op, flat, x, key)) return -1;
    *flat_base = base;
    *lead = 1;
    *nd = indexed_shape(x, key, shape);
    return 0;
  }
  if (check_leading(op, x, key)) return -1;                   /* a mask over x's leading dims */
  int k = key->ndim, n = 1 + x->ndim - k;
  if (n > MT_MAX_DIMS) return mt_fail("%s: result would have %d dims, at most %d supported", op, n, MT_MAX_DIMS);
  int64_t count;
  if (__builtin_expect(mt_device_of(key) != MT_CPU, 0)) {      /* the device's nonzero of the mask */
    if (mask_positions(op, flat, key)) return -1;
    count = flat->shape[0];
  } else {
    count = walk_nonzero(key, NULL, NULL);
    if (mt_tensor_init(flat, MT_INT64, 1, &count)) return -1;
    row_ctx c = {k, {0}, (int64_t *)mt_data(flat)};
    int64_t st = 1;
    int over = 0;                                /* the mask's own numel: it cannot, but it is checked */
    for (int d = k - 1; d >= 0; d--) { c.stride[d] = st; st = mt_size_mul(st, key->shape[d], &over); }
    if (over) { mt_tensor_release(flat); return mt_fail("%s: mask of %d dims too large", op, k); }
    walk_nonzero(key, row_visit, &c);
  }
  *flat_base = 0;
  *lead = k;
  shape[0] = count;
  for (int d = k; d < x->ndim; d++) shape[d - k + 1] = x->shape[d];
  *nd = n;
  return 0;
}

/* ---- nonzero ---- */
typedef struct { int ndim; int64_t base; int64_t *out; } nonzero_ctx;

static void nonzero_visit(void *c, const int64_t *index) {
  nonzero_ctx *k = c;
  for (int d = 0; d < k->ndim; d++) *k->out++ = index[d] + k->base;
}

int mt_nonzero(mt_tensor *r, const mt_tensor *x, int64_t base) {
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0)) MT_EXTRA_CALL("nonzero", nonzero, x, NULL, NULL, r, x, base);
  int64_t shape[2] = {walk_nonzero(x, NULL, NULL), x->ndim};
  if (mt_tensor_init(r, MT_INT64, 2, shape)) return -1;
  nonzero_ctx c = {x->ndim, base, (int64_t *)mt_data(r)};
  walk_nonzero(x, nonzero_visit, &c);
  return 0;
}

/* ---- where ---- */
/* op as a view of dtype and shape: a converted, expanded tensor, or a
   stride-0 view of a scalar held in buf. */
static int where_operand(mt_tensor *v, mt_storage *s, char *buf, const mt_operand *op, int dtype, int nd,
                         const int64_t *shape) {
  if (!op->t) {
    if (op->is_int) mt_set_i64(dtype, buf, (int64_t)op->value);
    else mt_set_f64(dtype, buf, op->value);
    mt_scalar_view(v, s, buf, dtype, nd, shape);
    return 0;
  }
  mt_tensor conv = {0};
  if (mt_to_dtype(&conv, op->t, dtype)) return -1;
  int rc = mt_expand(v, &conv, nd, shape);
  mt_tensor_release(&conv);
  return rc;
}

int mt_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b, int default_float) {
  const char *op = "where";
  if (__builtin_expect((mt_device_of(cond) | (a->t ? mt_device_of(a->t) : 0) | (b->t ? mt_device_of(b->t) : 0)) != MT_CPU,
                       0)) {
    const mt_device_extra *k = mt_extra_for(op, cond, a->t, b->t);
    return k ? k->where(r, cond, a, b, default_float) : -1;
  }
  if (cond->dtype != MT_BOOL && cond->dtype != MT_UINT8)
    return mt_fail("%s: condition must be a bool (or uint8) tensor, got %s", op, mt_dtypes[cond->dtype].name);
  mt_operand both[2] = {*a, *b};
  int dtype = mt_result_type(both, 2, default_float);
  int nd = cond->ndim;
  int64_t shape[MT_MAX_DIMS], prev[MT_MAX_DIMS];
  memcpy(shape, cond->shape, sizeof(int64_t) * (size_t)nd);
  for (int i = 0; i < 2; i++) {
    if (!both[i].t) continue;
    memcpy(prev, shape, sizeof(int64_t) * (size_t)nd);
    if (mt_broadcast_shapes(op, nd, prev, both[i].t->ndim, both[i].t->shape, &nd, shape)) return -1;
  }
  mt_storage sa, sb;
  char ba[8], bb[8];
  mt_tensor ce = {0}, av = {0}, bv = {0};
  int rc = mt_expand(&ce, cond, nd, shape);
  if (rc == 0) rc = where_operand(&av, &sa, ba, a, dtype, nd, shape);
  if (rc == 0) rc = where_operand(&bv, &sb, bb, b, dtype, nd, shape);
  if (rc == 0) rc = mt_tensor_init(r, dtype, nd, shape);
  if (rc == 0) {
    const mt_tensor *ops[4] = {r, &ce, &av, &bv};
    mt_iter it;
    mt_iter_init(&it, 4, ops);
    mt_iter_run(&it, where_kernels[size_slot(dtype)], NULL, 0);
  }
  mt_tensor_release(&ce);
  mt_tensor_release(&av);
  mt_tensor_release(&bv);
  return rc;
}

/* ---- the registry's index ops ---- */
int mt_index_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, int64_t base) {
  switch (op) {
#define INDEX(call, signature) call
#define OPC(name, kernel, E, ...) case MT_OP_##name: return kernel;
    MT_INDEX_OPS(OPC, _)
#undef OPC
#undef INDEX
  default: break;
  }
  return mt_fail("mt_index_op: %s is not an index op", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
}

/* ---- the registry's puts ---- */
int mt_put_op(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, const mt_tensor *index, const mt_tensor *src,
              double alpha, int64_t base, int inplace) {
  if (!mt_op_is_put(op))
    return mt_fail("mt_put_op: %s is not a put", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
  if (!inplace && mt_clone(r, x)) return -1;
  switch (op) {
#define PUT(call, signature) call
#define OPC(name, kernel, E, ...) case MT_OP_##name: return kernel;
    MT_PUT_OPS(OPC, _)
#undef OPC
#undef PUT
  default: break;
  }
  return -1;
}

/* ---- the registry's mask ops ---- */
static int mt_masked_scatter_op(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *src,
                                int inplace) {
  if (!src) return mt_fail("masked_scatter: the source must be a tensor");
  if (!inplace && mt_clone(r, x)) return -1;
  return mt_masked_scatter(r, mask, src);
}

int mt_mask_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_tensor *mask, const mt_tensor *src, int inplace) {
  if (!mt_op_is_mask(op))
    return mt_fail("mt_mask_op: %s is not a mask op", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
  if (op == MT_OP_masked_fill && !src) return mt_fail("masked_fill: the value must be given");
  switch (op) {
#define MASK(call, signature) call
#define OPC(name, kernel, E, ...) case MT_OP_##name: return kernel;
    MT_MASK_OPS(OPC, _)
#undef OPC
#undef MASK
  default: break;
  }
  return -1;
}
