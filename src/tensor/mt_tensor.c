/* mt_tensor.c: errors, storage lifetime, tensor geometry, views, broadcast
   and the converting copy every other op builds on. */
#include "mt_tensor.h"
#include "mt_alloc.h"
#include "mt_convert.h"
#include "mt_iter.h"
#include "mt_kernel.h"
#include "mt_live.h"
#include "mt_mapguard.h"
#include "mt_isa.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

const mt_dtype_info mt_dtypes[MT_NDTYPES] = {
#define MT_X(E, T, N, TN, K) {N, TN, (int)sizeof(T), K},
  MT_DTYPES(MT_X)
#undef MT_X
};

/* ---- errors ---- */
static _Thread_local char error_buf[512];

const char *mt_error(void) { return error_buf; }

int mt_fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_buf, sizeof error_buf, fmt, ap);
  va_end(ap);
  return -1;
}

const char *mt_dims_str(const int64_t *dims, int ndim, char *buf, size_t n) {
  size_t used = 0;
  buf[0] = 0;
  if (ndim == 0) { snprintf(buf, n, "[]"); return buf; }
  for (int i = 0; i < ndim && used < n; i++)
    used += (size_t)snprintf(buf + used, n - used, i ? "x%lld" : "%lld", (long long)dims[i]);
  return buf;
}

const char *mt_shape_str(const mt_tensor *t, char *buf, size_t n) { return mt_dims_str(t->shape, t->ndim, buf, n); }

/* ---- dtypes ---- */
int mt_dtype_from_name(const char *name) {
  static const struct { const char *alias; int dtype; } aliases[] = {
    {"float", MT_FLOAT32}, {"double", MT_FLOAT64}, {"half", MT_FLOAT16},
    {"long", MT_INT64}, {"int", MT_INT32}, {"short", MT_INT16}, {"char", MT_INT8},
    {"byte", MT_UINT8}, {"torch.float32", MT_FLOAT32}, {"torch.float64", MT_FLOAT64},
  };
  if (strncmp(name, "torch.", 6) == 0) {
    size_t len = strlen(name);
    if (len > 12 && strcmp(name + len - 6, "Tensor") == 0) {
      for (int d = 0; d < MT_NDTYPES; d++) {
        size_t sl = strlen(mt_dtypes[d].torch7);
        if (len - 12 == sl && strncmp(name + 6, mt_dtypes[d].torch7, sl) == 0) return d;
      }
      return -1;
    }
    name += 6;
  }
  for (int d = 0; d < MT_NDTYPES; d++)
    if (strcmp(name, mt_dtypes[d].name) == 0) return d;
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(name, aliases[i].alias) == 0) return aliases[i].dtype;
  return -1;
}

/* Ranks inside a kind for promotion: uint8 and int8 promote to int16. */
mt_dtype mt_promote(mt_dtype a, mt_dtype b) {
  if (a == b) return a;
  int ka = mt_dtypes[a].kind, kb = mt_dtypes[b].kind;
  if (ka != kb) return ka > kb ? a : b;
  if (ka == 2) {
    if (a == MT_FLOAT64 || b == MT_FLOAT64) return MT_FLOAT64;
    if (a == MT_FLOAT32 || b == MT_FLOAT32) return MT_FLOAT32;
    return MT_FLOAT32;                         /* float16 with bfloat16 */
  }
  if ((a == MT_UINT8 && b == MT_INT8) || (a == MT_INT8 && b == MT_UINT8)) return MT_INT16;
  return mt_dtypes[a].size >= mt_dtypes[b].size ? (a == MT_UINT8 ? b : a)
                                                : (b == MT_UINT8 ? a : b);
}

mt_dtype mt_promote_scalar(mt_dtype t, int scalar_is_float, mt_dtype default_float) {
  int k = mt_dtypes[t].kind;
  if (scalar_is_float) return k == 2 ? t : default_float;
  if (k == 0) return MT_INT64;
  return t;
}

/* ---- storage ---- */
/* Small storages keep header and data in one block (one allocation per
   tensor); when the header would push the data into the next power-of-two
   bucket (a 1 MiB tensor becoming a 2 MiB block), the data gets its own
   block. The header takes a whole alignment unit so data stays aligned. */
#define MT_STORAGE_HEADER 64
_Static_assert(sizeof(mt_storage) <= MT_STORAGE_HEADER, "storage header outgrew its slot");

static int header_fits(size_t nbytes) {
  if (nbytes <= MT_STORAGE_HEADER) return 1;
  size_t bucket = (size_t)1 << (64 - __builtin_clzll((unsigned long long)(nbytes - 1)));
  return nbytes + MT_STORAGE_HEADER <= bucket;   /* same power-of-two bucket */
}

/* A CPU storage not yet in the registry of live storages: its creator adds
   it, with the tensor it is for when there is one. */
static mt_storage *storage_alloc(size_t nbytes) {
  int inline_data = header_fits(nbytes);
  mt_storage *s = mt_alloc(MT_STORAGE_HEADER + (inline_data ? nbytes : 0));
  if (!s) return NULL;
  memset(s, 0, sizeof *s);
  if (inline_data) s->data = (char *)s + MT_STORAGE_HEADER;
  else if (!(s->data = mt_alloc(nbytes))) { mt_free(s, MT_STORAGE_HEADER); return NULL; }
  s->refcount = 1;
  s->nbytes = nbytes;
  s->owns = inline_data ? MT_STORAGE_INLINE : MT_STORAGE_SEPARATE;
  return s;
}

mt_storage *mt_storage_new(size_t nbytes) { return mt_storage_new_for(nbytes, -1); }

mt_storage *mt_storage_new_for(size_t nbytes, int dtype) {
  mt_storage *s = storage_alloc(nbytes);
  if (s) mt_live_add(s, dtype, -1, NULL);
  return s;
}

mt_storage *mt_storage_mapped(void *data, size_t nbytes) {
  mt_storage *s = mt_alloc(MT_STORAGE_HEADER);
  if (!s) return NULL;
  memset(s, 0, sizeof *s);
  s->refcount = 1;
  s->data = data;
  s->nbytes = nbytes;
  s->owns = MT_STORAGE_MAPPED;
  mt_live_add(s, -1, -1, NULL);
  return s;
}

void mt_storage_retain(mt_storage *s) { s->refcount++; }

/* ---- devices ---- */
static mt_device_backend backends[MT_NUM_DEVICES];
static const char *const device_type_names[MT_NUM_DEVICES] = {"cpu", "cuda"};

void mt_register_device(int device, const mt_device_backend *b) {
  if (device > MT_CPU && device < MT_NUM_DEVICES) backends[device] = *b;
}

const mt_device_backend *mt_device_backend_of(int device) {
  return device > MT_CPU && device < MT_NUM_DEVICES && backends[device].alloc ? &backends[device] : NULL;
}

const char *mt_device_str(int device, int index, char *buf, size_t n) {
  const char *name = device >= 0 && device < MT_NUM_DEVICES ? device_type_names[device] : "unknown";
  if (device == MT_CPU) snprintf(buf, n, "%s", name);
  else snprintf(buf, n, "%s:%d", name, index);
  return buf;
}

const char *mt_tensor_device_str(const mt_tensor *t, char *buf, size_t n) {
  return mt_device_str(mt_device_of(t), mt_device_index_of(t), buf, n);
}

int mt_check_same_device(const char *op, const mt_tensor *a, const mt_tensor *b) {
  if (!a || !b || mt_same_device(a, b)) return 0;
  char b1[32], b2[32];
  return mt_fail("%s: expected all tensors to be on the same device, but found at least two devices, %s and %s", op,
                 mt_tensor_device_str(a, b1, sizeof b1), mt_tensor_device_str(b, b2, sizeof b2));
}

/* A storage on (device, index), not yet in the registry (as storage_alloc). */
static mt_storage *storage_alloc_on(size_t nbytes, int device, int index) {
  if (device == MT_CPU) return storage_alloc(nbytes);
  const mt_device_backend *b = mt_device_backend_of(device);
  if (!b) {
    char buf[32];
    mt_fail("no backend for device %s is loaded", mt_device_str(device, index, buf, sizeof buf));
    return NULL;
  }
  mt_storage *s = mt_alloc(MT_STORAGE_HEADER);
  if (!s) { mt_fail("out of memory"); return NULL; }
  memset(s, 0, sizeof *s);
  if (!(s->data = b->alloc(nbytes, index))) { mt_free(s, MT_STORAGE_HEADER); return NULL; }
  s->refcount = 1;
  s->nbytes = nbytes;
  s->device = device;
  s->device_index = index;
  s->owns = MT_STORAGE_DEVICE;
  return s;
}

mt_storage *mt_storage_new_on(size_t nbytes, int device, int index) {
  mt_storage *s = storage_alloc_on(nbytes, device, index);
  if (s) mt_live_add(s, -1, -1, NULL);
  return s;
}

void mt_storage_release(mt_storage *s) {
  if (!s || --s->refcount > 0) return;
  mt_live_remove(s);
  if (s->owns == MT_STORAGE_MAPPED) {
    if (s->nbytes) mt_mapguard_unmap(s->data, s->nbytes);
    mt_free(s, MT_STORAGE_HEADER);
    return;
  }
  if (s->owns == MT_STORAGE_INLINE) { mt_free(s, MT_STORAGE_HEADER + s->nbytes); return; }
  if (s->owns == MT_STORAGE_DEVICE) {
    backends[s->device].free(s->data, s->nbytes, s->device_index);
    mt_free(s, MT_STORAGE_HEADER);
    return;
  }
  mt_free(s->data, s->nbytes);
  mt_free(s, MT_STORAGE_HEADER);
}

/* ---- checked size arithmetic ---- */
int mt_mul_size(const char *op, int64_t a, int64_t b, int64_t *r) {
  if (__builtin_mul_overflow(a, b, r))
    return mt_fail("%s: size arithmetic overflows (%lld * %lld)", op, (long long)a, (long long)b);
  return 0;
}

int mt_add_size(const char *op, int64_t a, int64_t b, int64_t *r) {
  if (__builtin_add_overflow(a, b, r))
    return mt_fail("%s: size arithmetic overflows (%lld + %lld)", op, (long long)a, (long long)b);
  return 0;
}

int64_t mt_shape_numel(const char *op, int ndim, const int64_t *shape) {
  if (ndim > MT_MAX_DIMS) return mt_fail("%s: %d dims, at most %d supported", op, ndim, MT_MAX_DIMS);
  int64_t nonzero = 1;
  int empty = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] < 0) return mt_fail("%s: negative size %lld in dim %d", op, (long long)shape[i], i + 1);
    if (shape[i] == 0) { empty = 1; continue; }
    if (nonzero > MT_MAX_NUMEL / shape[i]) {
      char b[256];
      return mt_fail("%s: size %s is too large (a tensor holds at most 2^60 - 1 elements)", op, mt_dims_str(shape, ndim, b, sizeof b));
    }
    nonzero *= shape[i];
  }
  return empty ? 0 : nonzero;
}

/* The lowest and highest element offsets t reaches, computed checked; -1 on
   overflow. Only called once sizes are valid, so shape - 1 >= 0. */
static int view_reach(const mt_tensor *t, int64_t *lo, int64_t *hi) {
  *lo = *hi = t->offset;
  for (int i = 0; i < t->ndim; i++) {
    int64_t span;
    if (__builtin_mul_overflow(t->shape[i] - 1, t->stride[i], &span)) return -1;
    if (__builtin_add_overflow(span < 0 ? *lo : *hi, span, span < 0 ? lo : hi)) return -1;
  }
  return 0;
}

int mt_check_view(const char *op, const mt_tensor *t) {
  int64_t numel = mt_shape_numel(op, t->ndim, t->shape), lo, hi;
  if (numel < 0) return -1;
  int64_t cap = (int64_t)(t->storage->nbytes / (size_t)mt_dtypes[t->dtype].size);
  /* an empty view reaches nothing: its offset may pass the end, as an empty
     narrow at the end of a strided dim's does */
  int bad = t->offset < 0 || t->offset > MT_MAX_NUMEL;
  for (int i = 0; i < t->ndim; i++) bad |= t->stride[i] > MT_MAX_NUMEL || t->stride[i] < -MT_MAX_NUMEL;
  if (!bad && numel > 0) bad = view_reach(t, &lo, &hi) || lo < 0 || hi >= cap;
  if (!bad) return 0;
  char b1[256], b2[256];
  return mt_fail("%s: a view of shape %s, strides %s and offset %lld reaches outside its storage of %lld elements",
                 op, mt_shape_str(t, b1, sizeof b1), mt_dims_str(t->stride, t->ndim, b2, sizeof b2),
                 (long long)t->offset, (long long)cap);
}

/* ---- lifetime ---- */
/* Never overflows for a shape that passed mt_shape_numel. */
void mt_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride) {
  int64_t s = 1;
  for (int i = ndim - 1; i >= 0; i--) { stride[i] = s; s *= shape[i] > 0 ? shape[i] : 1; }
}

int mt_tensor_init(mt_tensor *t, int dtype, int ndim, const int64_t *shape) {
  return mt_tensor_init_op("tensor", t, dtype, ndim, shape);
}

int mt_tensor_init_op(const char *op, mt_tensor *t, int dtype, int ndim, const int64_t *shape) {
  return mt_tensor_init_on(op, t, dtype, ndim, shape, MT_CPU, 0);
}

int mt_tensor_init_like(mt_tensor *t, int dtype, int ndim, const int64_t *shape, const mt_tensor *like) {
  return mt_tensor_init_on("tensor", t, dtype, ndim, shape, mt_device_of(like), mt_device_index_of(like));
}

int mt_tensor_init_on(const char *op, mt_tensor *t, int dtype, int ndim, const int64_t *shape, int device,
                      int index) {
  int64_t n = mt_shape_numel(op, ndim, shape);
  if (n < 0) return -1;
  size_t nbytes = (size_t)n * (size_t)mt_dtypes[dtype].size;
  mt_storage *s;
  if (__builtin_expect(device == MT_CPU, 1)) {
    if (!(s = storage_alloc(nbytes))) return mt_fail("%s: out of memory allocating %zu bytes", op, nbytes);
  } else if (!(s = storage_alloc_on(nbytes, device, index))) {
    char buf[32];
    return mt_fail("%s: allocating %zu bytes on %s: %s", op, nbytes, mt_device_str(device, index, buf, sizeof buf),
                   mt_error());
  }
  mt_live_add(s, dtype, ndim, shape);
  t->storage = s;
  t->offset = 0;
  t->dtype = dtype;
  t->ndim = ndim;
  t->grad_meta = NULL;
  if (ndim) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  mt_contiguous_strides(ndim, shape, t->stride);
  return 0;
}

int mt_resize(mt_tensor *t, int ndim, const int64_t *shape) {
  int64_t n = mt_shape_numel("resize_", ndim, shape);
  if (n < 0) return -1;
  int64_t end;
  if (mt_add_size("resize_", t->offset, n, &end)) return -1;
  if (end > MT_MAX_NUMEL) return mt_fail("resize_: %lld elements from offset %lld is too large", (long long)n, (long long)t->offset);
  size_t need = (size_t)end * (size_t)mt_dtypes[t->dtype].size;
  if (n > 0 && need > t->storage->nbytes) {
    if (t->storage->device != MT_CPU) {
      char buf[32];
      return mt_fail("resize_: a tensor on %s cannot grow its storage (%zu bytes to %zu)",
                     mt_tensor_device_str(t, buf, sizeof buf), t->storage->nbytes, need);
    }
    mt_storage *s = storage_alloc(need);
    if (!s) return mt_fail("resize_: out of memory allocating %zu bytes", need);
    mt_live_add(s, t->dtype, ndim, shape);
    memcpy(s->data, t->storage->data, t->storage->nbytes);
    mt_storage_release(t->storage);
    t->storage = s;
  }
  t->ndim = ndim;
  if (ndim) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  mt_contiguous_strides(ndim, shape, t->stride);
  return 0;
}

void mt_tensor_alias(mt_tensor *t, const mt_tensor *src) {
  mt_storage_retain(src->storage);
  t->storage = src->storage;
  t->offset = src->offset;
  t->dtype = src->dtype;
  t->ndim = src->ndim;
  t->grad_meta = NULL;
  memcpy(t->shape, src->shape, sizeof(int64_t) * (size_t)src->ndim);
  memcpy(t->stride, src->stride, sizeof(int64_t) * (size_t)src->ndim);
}

void mt_scalar_view(mt_tensor *v, mt_storage *s, char *buf, int dtype, int ndim, const int64_t *shape) {
  memset(s, 0, sizeof *s);
  s->refcount = 2;                   /* the caller's and the view's: never freed */
  s->live_slot = -1;                 /* nor listed among the live storages */
  s->data = buf;
  s->nbytes = 8;
  v->storage = s;
  v->offset = 0;
  v->dtype = dtype;
  v->ndim = ndim;
  v->grad_meta = NULL;
  for (int i = 0; i < ndim; i++) { v->shape[i] = shape[i]; v->stride[i] = 0; }
}

void mt_tensor_release(mt_tensor *t) {
  if (t->storage) mt_storage_release(t->storage);
  t->storage = NULL;
}

void mt_tensor_move(mt_tensor *t, mt_tensor *src) {
  void *gm = t->grad_meta;
  mt_tensor_release(t);
  *t = *src;
  t->grad_meta = gm;
  src->storage = NULL;
}

int mt_is_contiguous(const mt_tensor *t) {
  int64_t s = 1;
  for (int i = t->ndim - 1; i >= 0; i--) {
    if (t->shape[i] == 1) continue;
    if (t->stride[i] != s) return 0;
    s *= t->shape[i];
  }
  return 1;
}

int mt_same_shape(const mt_tensor *a, const mt_tensor *b) {
  if (a->ndim != b->ndim) return 0;
  for (int i = 0; i < a->ndim; i++) if (a->shape[i] != b->shape[i]) return 0;
  return 1;
}

int mt_check_writable(const char *op, const mt_tensor *out) {
  for (int i = 0; i < out->ndim; i++)
    if (out->stride[i] == 0 && out->shape[i] > 1) {
      char b[128];
      return mt_fail("%s_: unsupported operation: more than one element of the written-to tensor "
                     "(%s, expanded) refers to a single memory location; clone() it first", op,
                     mt_shape_str(out, b, sizeof b));
    }
  return 0;
}

int mt_check_inplace(const char *op, int result_dtype, const mt_tensor *out) {
  if (mt_dtypes[result_dtype].kind > mt_dtypes[out->dtype].kind)
    return mt_fail("%s_: result type %s can't be cast to the desired output type %s", op,
                   mt_dtypes[result_dtype].name, mt_dtypes[out->dtype].name);
  return mt_check_writable(op, out);
}

int mt_wrap_dim(const char *op, int dim, int ndim) {
  int n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n)
    return mt_fail("%s: dimension %d out of range (expected 1..%d, or -%d..-1 from the end)", op,
                   dim >= 0 ? dim + 1 : dim, n, n);
  return dim < 0 ? dim + n : dim;
}

int mt_item(const mt_tensor *t, double *v) {
  if (mt_numel(t) != 1) {
    char b[128];
    return mt_fail("item: only one element tensors can be converted to numbers (got %s)", mt_shape_str(t, b, sizeof b));
  }
  if (__builtin_expect(mt_device_of(t) == MT_CPU, 1)) { *v = mt_get_f64(t->dtype, mt_data(t)); return 0; }
  mt_tensor h = {0};
  int rc = mt_tensor_init(&h, t->dtype, t->ndim, t->shape) || mt_copy(&h, t);
  if (!rc) *v = mt_get_f64(h.dtype, mt_data(&h));
  mt_tensor_release(&h);
  return rc ? -1 : 0;
}

/* ---- element access ---- */
double mt_get_f64(int dtype, const void *p) {
  switch (dtype) {
#define MT_X(E, T, N, TN, K) case MT_##E: return (double)MT_LOAD_##E(p);
    MT_DTYPES(MT_X)
#undef MT_X
  }
  return 0;
}

int64_t mt_get_i64(int dtype, const void *p) {
  switch (dtype) {
#define MT_X(E, T, N, TN, K) case MT_##E: return (int64_t)MT_LOAD_##E(p);
    MT_DTYPES(MT_X)
#undef MT_X
  }
  return 0;
}

void mt_set_f64(int dtype, void *p, double v) {
  switch (dtype) {
#define MT_X(E, T, N, TN, K) case MT_##E: MT_STORE_##E(p, v); break;
    MT_DTYPES(MT_X)
#undef MT_X
  }
}

void mt_set_i64(int dtype, void *p, int64_t v) {
  switch (dtype) {
#define MT_X(E, T, N, TN, K) case MT_##E: MT_STORE_##E(p, v); break;
    MT_DTYPES(MT_X)
#undef MT_X
  }
}

char *mt_elem_ptr(const mt_tensor *t, const int64_t *index) {
  int64_t off = t->offset;
  for (int i = 0; i < t->ndim; i++) off += index[i] * t->stride[i];
  return (char *)t->storage->data + off * mt_dtypes[t->dtype].size;
}

/* ---- converting copy: one kernel per (dst, src) dtype pair ---- */
#define MT_COPY_KERNEL(ED, ES)                                                  \
  static MT_CLONES void copy_##ED##_##ES(char **d, const int64_t *s, int64_t n, void *c) { \
    (void)c;                                                                    \
    char *o = d[0]; const char *a = d[1];                                       \
    for (int64_t i = 0; i < n; i++) { MT_STORE_##ED(o, MT_LOAD_##ES(a)); o += s[0]; a += s[1]; } \
  }
#define MT_COPY_KERNEL2(ED, ES) MT_COPY_KERNEL(ED, ES)
#define MT_COPY_ROW(ED, TD, ND, TND, KD) MT_COPY_KERNEL2(ED, SRC)
#define MT_COPY_ENTRY2(ED, ES) copy_##ED##_##ES,
#define MT_COPY_ENTRY(ED, ES) MT_COPY_ENTRY2(ED, ES)
#define MT_COPY_TABLE_ROW(ES, TS, NS, TNS, KS) {MT_COPY_TABLE_COLS(ES)},
/* source dtype SRC, each destination dtype */
#define SRC FLOAT32
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC FLOAT64
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC FLOAT16
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC BFLOAT16
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC INT8
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC UINT8
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC INT16
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC INT32
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC INT64
MT_DTYPES(MT_COPY_ROW)
#undef SRC
#define SRC BOOL
MT_DTYPES(MT_COPY_ROW)
#undef SRC

#define MT_COPY_COL(ED, TD, ND, TND, KD) MT_COPY_ENTRY(ED, SRC)
/* copy_kernels[src][dst] */
static const mt_loop_fn copy_kernels[MT_NDTYPES][MT_NDTYPES] = {
#define SRC FLOAT32
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC FLOAT64
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC FLOAT16
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC BFLOAT16
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC INT8
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC UINT8
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC INT16
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC INT32
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC INT64
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
#define SRC BOOL
  {MT_DTYPES(MT_COPY_COL)},
#undef SRC
};

/* float32 <-> bfloat16 / float16 copies: contiguous runs on mt_convert.c's vector loops,
   others on the pair's kernel of the table (ctx points at it) */
#define MT_CVT_LOOP(NAME, CALL, OUT_SIZE, IN_SIZE)                                   \
  static MT_CLONES void NAME(char **d, const int64_t *s, int64_t n, void *c) {                \
    if (s[0] == (OUT_SIZE) && s[1] == (IN_SIZE)) CALL;                               \
    else (*(const mt_loop_fn *)c)(d, s, n, NULL);                                    \
  }
MT_CVT_LOOP(cvt_f32_bf16, mt_cvt_f32_to_bf16((uint16_t *)d[0], (const float *)d[1], n), 2, 4)
MT_CVT_LOOP(cvt_bf16_f32, mt_cvt_bf16_to_f32((float *)d[0], (const uint16_t *)d[1], n), 4, 2)
MT_CVT_LOOP(cvt_f32_f16, mt_cvt_f32_to_f16((uint16_t *)d[0], (const float *)d[1], n), 2, 4)
MT_CVT_LOOP(cvt_f16_f32, mt_cvt_f16_to_f32((float *)d[0], (const uint16_t *)d[1], n), 4, 2)

/* the vector loop for copying src dtype to dst dtype, or NULL */
static mt_loop_fn cvt_loop(int src, int dst) {
  if (src == MT_FLOAT32 && dst == MT_BFLOAT16) return cvt_f32_bf16;
  if (src == MT_BFLOAT16 && dst == MT_FLOAT32) return cvt_bf16_f32;
  if (src == MT_FLOAT32 && dst == MT_FLOAT16) return cvt_f32_f16;
  if (src == MT_FLOAT16 && dst == MT_FLOAT32) return cvt_f16_f32;
  return NULL;
}

static MT_CLONES void copy_same(char **d, const int64_t *s, int64_t n, void *c) {
  size_t es = *(const int *)c;
  if ((size_t)s[0] == es && (size_t)s[1] == es) { memmove(d[0], d[1], es * (size_t)n); return; }
  char *o = d[0]; const char *a = d[1];
  switch (es) {
  case 1: for (int64_t i = 0; i < n; i++, o += s[0], a += s[1]) *o = *a; break;
  case 2: for (int64_t i = 0; i < n; i++, o += s[0], a += s[1]) *(uint16_t *)o = *(const uint16_t *)a; break;
  case 4: for (int64_t i = 0; i < n; i++, o += s[0], a += s[1]) *(uint32_t *)o = *(const uint32_t *)a; break;
  default: for (int64_t i = 0; i < n; i++, o += s[0], a += s[1]) *(uint64_t *)o = *(const uint64_t *)a; break;
  }
}

/* A copy whose source walks the inner dim with a larger step than the next
   one (a transpose) thrashes the cache row by row; it is done in tiles. */
#define MT_COPY_TILED_MIN 4096

static int crosses_layout(const mt_iter *it) {
  if (it->ndim < 2 || it->numel < MT_COPY_TILED_MIN) return 0;
  int64_t inner = llabs(it->strides[0][1]), outer = llabs(it->strides[1][1]);
  return inner > outer && it->shape[0] > 1 && it->shape[1] > 1;
}

int mt_copy(mt_tensor *dst, const mt_tensor *src) {
  mt_tensor expanded = {0};
  if (!mt_same_shape(dst, src)) {
    if (mt_expand(&expanded, src, dst->ndim, dst->shape) != 0) {
      char b1[128], b2[128];
      return mt_fail("copy_: cannot broadcast %s to %s", mt_shape_str(src, b1, sizeof b1),
                     mt_shape_str(dst, b2, sizeof b2));
    }
    src = &expanded;
  }
  int dev = dst->storage->device != MT_CPU ? dst->storage->device : src->storage->device;
  if (__builtin_expect(dev != MT_CPU, 0)) {
    const mt_device_backend *b = mt_device_backend_of(dev);
    int rc = b ? b->copy(dst, src) : mt_fail("copy_: no backend for the device is loaded");
    mt_tensor_release(&expanded);
    if (!rc) dst->storage->version++;
    return rc;
  }
  const mt_tensor *ops[2] = {dst, src};
  mt_iter it;
  mt_iter_init(&it, 2, ops);
  int es = mt_dtypes[dst->dtype].size;
  mt_loop_fn kernel = dst->dtype == src->dtype ? copy_same : copy_kernels[src->dtype][dst->dtype];
  void *ctx = dst->dtype == src->dtype ? &es : NULL;
  const mt_loop_fn vector = cvt_loop(src->dtype, dst->dtype);
  if (vector) {
    ctx = (void *)&copy_kernels[src->dtype][dst->dtype];
    kernel = vector;
  }
  if (crosses_layout(&it)) mt_iter_run_tiled(&it, kernel, ctx);
  else mt_iter_run(&it, kernel, ctx, 0);
  mt_tensor_release(&expanded);
  dst->storage->version++;
  return 0;
}

int mt_contiguous(mt_tensor *r, const mt_tensor *src) {
  if (mt_is_contiguous(src)) { mt_tensor_alias(r, src); return 0; }
  return mt_clone(r, src);
}

int mt_contiguous_as(mt_tensor *r, const mt_tensor *src, int dtype) {
  if (src->dtype != dtype) return mt_to_dtype(r, src, dtype);   /* a fresh contiguous copy */
  return mt_contiguous(r, src);
}

int mt_clone(mt_tensor *r, const mt_tensor *src) {
  if (mt_tensor_init_like(r, src->dtype, src->ndim, src->shape, src)) return -1;
  return mt_copy(r, src);
}

int mt_to_copy(mt_tensor *r, const mt_tensor *x, int dtype, int device, int index, const char *op) {
  return mt_tensor_init_on(op, r, dtype, x->ndim, x->shape, device, index) || mt_copy(r, x) ? -1 : 0;
}

int mt_to_dtype(mt_tensor *r, const mt_tensor *src, int dtype) {
  if (src->dtype == dtype) { mt_tensor_alias(r, src); return 0; }
  if (mt_tensor_init_like(r, dtype, src->ndim, src->shape, src)) return -1;
  return mt_copy(r, src);
}

typedef struct { char value[8]; size_t size; } fill_ctx;

/* One store per element of the value's width (a memcpy of a size known only at run time
   was a library call per element: zeros of 1.6M bfloat16 took 2.6 ms). */
#define FILL_AS(T)                                                              \
  do {                                                                          \
    T x;                                                                        \
    memcpy(&x, f->value, sizeof x);                                             \
    if (s[0] == (int64_t)sizeof x) {                                            \
      T *p = (T *)(void *)o;                                                    \
      for (int64_t i = 0; i < n; i++) p[i] = x;                                 \
    } else {                                                                    \
      for (int64_t i = 0; i < n; i++, o += s[0]) memcpy(o, &x, sizeof x);      \
    }                                                                           \
  } while (0)

static MT_CLONES void fill_kernel(char **d, const int64_t *s, int64_t n, void *c) {
  const fill_ctx *f = c;
  char *o = d[0];
  switch (f->size) {
  case 1: FILL_AS(uint8_t); return;
  case 2: FILL_AS(uint16_t); return;
  case 4: FILL_AS(uint32_t); return;
  case 8: FILL_AS(uint64_t); return;
  default: for (int64_t i = 0; i < n; i++, o += s[0]) memcpy(o, f->value, f->size);
  }
}
#undef FILL_AS

int mt_fill(mt_tensor *t, double v) {
  if (__builtin_expect(t->storage->device != MT_CPU, 0)) {
    const mt_device_backend *b = mt_device_backend_of(t->storage->device);
    int rc = b ? b->fill(t, v) : mt_fail("fill_: no backend for the device is loaded");
    if (!rc) t->storage->version++;
    return rc;
  }
  fill_ctx f;
  mt_set_f64(t->dtype, f.value, v);
  f.size = (size_t)mt_dtypes[t->dtype].size;
  mt_iter it;
  const mt_tensor *ops[1] = {t};
  mt_iter_init(&it, 1, ops);
  mt_iter_run(&it, fill_kernel, &f, 0);
  t->storage->version++;
  return 0;
}

/* ---- views ---- */
static int view_begin(mt_tensor *r, const mt_tensor *t) {
  mt_tensor_alias(r, t);
  return 0;
}

int mt_view_end(const char *op, mt_tensor *r) {
  if (mt_check_view(op, r) == 0) return 0;
  mt_tensor_release(r);
  return -1;
}

/* r's offset moves index steps of stride along a dim, checked (in an empty
   view neither is bounded by the storage). */
static int view_step(const char *op, mt_tensor *r, int64_t index, int64_t stride) {
  int64_t by;
  if (mt_mul_size(op, index, stride, &by) == 0 && mt_add_size(op, r->offset, by, &r->offset) == 0) return 0;
  mt_tensor_release(r);
  return -1;
}

int mt_as_strided(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape,
                  const int64_t *stride, int64_t offset) {
  if (ndim > MT_MAX_DIMS) return mt_fail("as_strided: too many dims (%d)", ndim);
  for (int i = 0; i < ndim; i++)
    if (stride[i] < 0) return mt_fail("as_strided: negative stride %lld in dim %d", (long long)stride[i], i + 1);
  view_begin(r, t);
  r->ndim = ndim;
  r->offset = offset;
  memcpy(r->shape, shape, sizeof(int64_t) * (size_t)ndim);
  memcpy(r->stride, stride, sizeof(int64_t) * (size_t)ndim);
  return mt_view_end("as_strided", r);
}

/* Infers a -1 entry and checks the element count. */
static int infer_shape(const char *op, const mt_tensor *t, int ndim, const int64_t *in, int64_t *out) {
  int64_t known = 1, numel = mt_numel(t);
  int infer = -1;
  if (ndim > MT_MAX_DIMS) return mt_fail("%s: too many dims (%d)", op, ndim);
  for (int i = 0; i < ndim; i++) {
    out[i] = in[i];
    if (in[i] == -1) {
      if (infer >= 0) return mt_fail("%s: only one dimension can be inferred", op);
      infer = i;
    } else if (in[i] < 0) return mt_fail("%s: invalid size %lld", op, (long long)in[i]);
    else if (__builtin_mul_overflow(known, in[i], &known)) goto bad;
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0) goto bad;
    out[infer] = numel / known;
  } else if (known != numel) goto bad;
  return mt_shape_numel(op, ndim, out) < 0 ? -1 : 0;
bad: {
    char b[256];
    return mt_fail("%s: shape '%s' is invalid for input of size %lld", op,
                   mt_dims_str(in, ndim, b, sizeof b), (long long)numel);
  }
}

/* Strides for viewing t with a new shape without copying, as PyTorch's
   computeStride: -1 when the layout does not allow it. */
static int view_strides(const mt_tensor *t, int ndim, const int64_t *shape, int64_t *stride) {
  int64_t numel = mt_numel(t);
  if (numel == 0 || t->ndim == 0) { mt_contiguous_strides(ndim, shape, stride); return 0; }
  int view_d = ndim - 1;
  int64_t chunk_base_stride = t->stride[t->ndim - 1];
  int64_t tensor_numel = 1, view_numel = 1;
  for (int d = t->ndim - 1; d >= 0; d--) {
    tensor_numel *= t->shape[d];
    if (d == 0 || (t->shape[d - 1] != 1 && t->stride[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
        stride[view_d] = view_numel * chunk_base_stride;
        view_numel *= shape[view_d];
        view_d--;
      }
      if (view_numel != tensor_numel) return -1;
      if (d > 0) { chunk_base_stride = t->stride[d - 1]; tensor_numel = 1; view_numel = 1; }
    }
  }
  if (view_d != -1) return -1;
  return 0;
}

int mt_view(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape) {
  int64_t s[MT_MAX_DIMS], st[MT_MAX_DIMS];
  if (infer_shape("view", t, ndim, shape, s)) return -1;
  if (view_strides(t, ndim, s, st))
    return mt_fail("view: size is not compatible with input tensor's size and stride; use reshape instead");
  view_begin(r, t);
  r->ndim = ndim;
  memcpy(r->shape, s, sizeof(int64_t) * (size_t)ndim);
  memcpy(r->stride, st, sizeof(int64_t) * (size_t)ndim);
  return 0;
}

int mt_reshape(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape) {
  int64_t s[MT_MAX_DIMS], st[MT_MAX_DIMS];
  if (infer_shape("reshape", t, ndim, shape, s)) return -1;
  if (view_strides(t, ndim, s, st) == 0) return mt_view(r, t, ndim, s);
  mt_tensor c = {0};
  if (mt_clone(&c, t)) return -1;
  int rc = mt_view(r, &c, ndim, s);
  mt_tensor_release(&c);
  return rc;
}

int mt_transpose(mt_tensor *r, const mt_tensor *t, int d0, int d1) {
  if ((d0 = mt_wrap_dim("transpose", d0, t->ndim)) < 0) return -1;
  if ((d1 = mt_wrap_dim("transpose", d1, t->ndim)) < 0) return -1;
  view_begin(r, t);
  if (t->ndim == 0) return 0;
  int64_t x = r->shape[d0]; r->shape[d0] = r->shape[d1]; r->shape[d1] = x;
  x = r->stride[d0]; r->stride[d0] = r->stride[d1]; r->stride[d1] = x;
  return 0;
}

int mt_permute(mt_tensor *r, const mt_tensor *t, const int *dims) {
  int seen[MT_MAX_DIMS] = {0};
  for (int i = 0; i < t->ndim; i++) {
    int d = mt_wrap_dim("permute", dims[i], t->ndim);
    if (d < 0) return -1;
    if (seen[d]++) return mt_fail("permute: dimension %d repeated", d + 1);
  }
  view_begin(r, t);
  for (int i = 0; i < t->ndim; i++) {
    int d = dims[i] < 0 ? dims[i] + t->ndim : dims[i];
    r->shape[i] = t->shape[d];
    r->stride[i] = t->stride[d];
  }
  return 0;
}

int mt_narrow(mt_tensor *r, const mt_tensor *t, int dim, int64_t start, int64_t len) {
  if (t->ndim == 0) return mt_fail("narrow: cannot narrow a 0-dim tensor");
  if ((dim = mt_wrap_dim("narrow", dim, t->ndim)) < 0) return -1;
  int64_t first = start < 0 ? start + t->shape[dim] : start;
  if (!mt_range_ok(first, len, t->shape[dim]))
    return mt_fail("narrow: start %lld and length %lld out of range for dim %d of size %lld",
                   (long long)(start < 0 ? start : start + 1), (long long)len, dim + 1, (long long)t->shape[dim]);
  view_begin(r, t);
  r->shape[dim] = len;
  return view_step("narrow", r, first, t->stride[dim]);
}

int mt_slice(mt_tensor *r, const mt_tensor *t, int dim, int64_t start, int64_t stop, int64_t step) {
  if (t->ndim == 0) return mt_fail("slice: cannot slice a 0-dim tensor");
  if ((dim = mt_wrap_dim("slice", dim, t->ndim)) < 0) return -1;
  if (step <= 0) return mt_fail("slice: step must be positive, got %lld", (long long)step);
  int64_t n = t->shape[dim];
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  if (start < 0) start = 0;
  if (stop > n) stop = n;
  if (start > n) start = n;
  int64_t len = stop > start ? (stop - start - 1) / step + 1 : 0;
  view_begin(r, t);
  r->shape[dim] = len;
  if (len > 1 && mt_mul_size("slice", t->stride[dim], step, &r->stride[dim])) { mt_tensor_release(r); return -1; }
  return view_step("slice", r, start, t->stride[dim]);
}

int mt_select(mt_tensor *r, const mt_tensor *t, int dim, int64_t index) {
  if (t->ndim == 0) return mt_fail("select: cannot select from a 0-dim tensor");
  if ((dim = mt_wrap_dim("select", dim, t->ndim)) < 0) return -1;
  int64_t n = t->shape[dim];
  if (index < -n || index >= n)
    return mt_fail("select: index %lld out of range for dim %d of size %lld",
                   (long long)(index >= 0 ? index + 1 : index), dim + 1, (long long)n);
  if (index < 0) index += n;
  view_begin(r, t);
  for (int i = dim; i < t->ndim - 1; i++) { r->shape[i] = t->shape[i + 1]; r->stride[i] = t->stride[i + 1]; }
  r->ndim--;
  return view_step("select", r, index, t->stride[dim]);
}

int mt_squeeze(mt_tensor *r, const mt_tensor *t, int dim) {
  if (dim != MT_MAX_DIMS && t->ndim > 0 && (dim = mt_wrap_dim("squeeze", dim, t->ndim)) < 0) return -1;
  view_begin(r, t);
  int k = 0;
  for (int i = 0; i < t->ndim; i++) {
    int drop = t->shape[i] == 1 && (dim == MT_MAX_DIMS || dim == i);
    if (drop) continue;
    r->shape[k] = t->shape[i];
    r->stride[k] = t->stride[i];
    k++;
  }
  r->ndim = k;
  return 0;
}

int mt_unsqueeze(mt_tensor *r, const mt_tensor *t, int dim) {
  if (t->ndim >= MT_MAX_DIMS) return mt_fail("unsqueeze: too many dims");
  if ((dim = mt_wrap_dim("unsqueeze", dim, t->ndim + 1)) < 0) return -1;
  view_begin(r, t);
  for (int i = t->ndim; i > dim; i--) { r->shape[i] = t->shape[i - 1]; r->stride[i] = t->stride[i - 1]; }
  r->shape[dim] = 1;
  /* PyTorch's stride for the new dim; a size-1 dim is never stepped along,
     so where the product overflows (an empty view) any stride serves */
  if (dim == t->ndim || __builtin_mul_overflow(t->shape[dim], t->stride[dim], &r->stride[dim])) r->stride[dim] = 1;
  r->ndim = t->ndim + 1;
  return 0;
}

int mt_expand(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape) {
  char b1[128];
  if (ndim < t->ndim || ndim > MT_MAX_DIMS)
    return mt_fail("expand: cannot expand %s to %d dims", mt_shape_str(t, b1, sizeof b1), ndim);
  int64_t st[MT_MAX_DIMS], sh[MT_MAX_DIMS];
  int lead = ndim - t->ndim;
  for (int i = ndim - 1; i >= 0; i--) {
    int j = i - lead;
    int64_t size = j >= 0 ? t->shape[j] : 1, stride = j >= 0 ? t->stride[j] : 0;
    int64_t want = shape[i];
    if (want == -1) { if (j < 0) return mt_fail("expand: -1 not allowed in a new leading dim"); want = size; }
    if (want < 0) return mt_fail("expand: invalid size %lld for dim %d (sizes must be >= 0, or -1 to keep one)", (long long)want, i + 1);
    if (size == want) { sh[i] = size; st[i] = stride; }
    else if (size == 1) { sh[i] = want; st[i] = 0; }
    else return mt_fail("expand: size %lld of dim %d of %s cannot expand to %lld",
                        (long long)size, j + 1, mt_shape_str(t, b1, sizeof b1), (long long)want);
  }
  view_begin(r, t);
  r->ndim = ndim;
  memcpy(r->shape, sh, sizeof(int64_t) * (size_t)ndim);
  memcpy(r->stride, st, sizeof(int64_t) * (size_t)ndim);
  return mt_view_end("expand", r);
}

int mt_unfold(mt_tensor *r, const mt_tensor *t, int dim, int64_t size, int64_t step) {
  if (t->ndim >= MT_MAX_DIMS) return mt_fail("unfold: too many dims");
  int n = t->ndim;
  if ((dim = mt_wrap_dim("unfold", dim, n)) < 0) return -1;
  int64_t len = n ? t->shape[dim] : 1;
  if (size < 0 || size > len) return mt_fail("unfold: size %lld exceeds dim %d of size %lld", (long long)size, dim + 1, (long long)len);
  if (step <= 0) return mt_fail("unfold: step must be positive, got %lld", (long long)step);
  view_begin(r, t);
  if (n) {
    r->shape[dim] = (len - size) / step + 1;
    if (r->shape[dim] > 1 && mt_mul_size("unfold", t->stride[dim], step, &r->stride[dim])) {
      mt_tensor_release(r);
      return -1;
    }
  }
  r->shape[n] = size;
  r->stride[n] = n ? t->stride[dim] : 1;
  r->ndim = n + 1;
  return 0;
}

int mt_diagonal(mt_tensor *r, const mt_tensor *t, int64_t offset, int d0, int d1) {
  if (t->ndim < 2) return mt_fail("diagonal: needs at least 2 dims, got %d", t->ndim);
  if ((d0 = mt_wrap_dim("diagonal", d0, t->ndim)) < 0) return -1;
  if ((d1 = mt_wrap_dim("diagonal", d1, t->ndim)) < 0) return -1;
  if (d0 == d1) return mt_fail("diagonal: dims must differ (both %d)", d0 + 1);
  int64_t len;
  if (offset >= 0) len = t->shape[d1] - offset < t->shape[d0] ? t->shape[d1] - offset : t->shape[d0];
  else len = t->shape[d0] + offset < t->shape[d1] ? t->shape[d0] + offset : t->shape[d1];
  if (len < 0) len = 0;
  view_begin(r, t);
  int k = 0;
  for (int i = 0; i < t->ndim; i++) {
    if (i == d0 || i == d1) continue;
    r->shape[k] = t->shape[i]; r->stride[k] = t->stride[i]; k++;
  }
  r->shape[k] = len;
  r->stride[k] = t->stride[d0] + t->stride[d1];
  r->ndim = k + 1;
  if (len == 0) return 0;
  return offset >= 0 ? view_step("diagonal", r, offset, t->stride[d1]) : view_step("diagonal", r, -offset, t->stride[d0]);
}

int mt_broadcast_shapes(const char *op, int na, const int64_t *sa, int nb, const int64_t *sb,
                        int *nout, int64_t *out) {
  int n = na > nb ? na : nb;
  for (int i = 0; i < n; i++) {
    int ia = na - n + i, ib = nb - n + i;
    int64_t a = ia >= 0 ? sa[ia] : 1, b = ib >= 0 ? sb[ib] : 1;
    if (a == b || b == 1) out[i] = a;
    else if (a == 1) out[i] = b;
    else {
      char b1[256], b2[256];
      return mt_fail("%s: shapes %s and %s cannot broadcast (dim %d: %lld vs %lld)", op,
                     mt_dims_str(sa, na, b1, sizeof b1), mt_dims_str(sb, nb, b2, sizeof b2), i + 1,
                     (long long)a, (long long)b);
    }
  }
  *nout = n;
  return 0;
}

