/* mt_tensor.h: storage, the tensor view struct and the engine's public API.
   Functions return 0 on success and -1 on failure, with mt_error() set. */
#ifndef MT_TENSOR_H
#define MT_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include "mt_dtype.h"

/* Enough for every network we know; fixed so a tensor needs no extra malloc. */
#define MT_MAX_DIMS 16

/* Device types; a storage's device is (type, index): cuda:0 is (MT_CUDA, 0). */
enum { MT_CPU = 0, MT_CUDA = 1 };
#define MT_NUM_DEVICES 2
/* Device indices run 0 .. MT_MAX_DEVICE_INDEX - 1 (cuda:0 .. cuda:63). */
#define MT_MAX_DEVICE_INDEX 64

/* mt_storage.owns: how data is freed (DEVICE: by its device's backend) */
enum { MT_STORAGE_INLINE = 1, MT_STORAGE_SEPARATE = 2, MT_STORAGE_MAPPED = 3, MT_STORAGE_DEVICE = 4 };

typedef struct mt_storage {
  int64_t refcount;
  void *data;
  size_t nbytes;
  int device;               /* MT_CPU or MT_CUDA */
  int device_index;         /* which one of that type (0 on the CPU) */
  int owns;                 /* MT_STORAGE_*: how data is freed */
  int live_slot;            /* its slot in the registry of live storages (mt_live.h); -1: none */
  int64_t version;          /* bumped by in-place ops; shared by all views */
  int64_t ag_version;       /* bumped when an in-place op gives one of its tensors new
                               autograd history (src/autograd): the others go stale */
  int alloc_dtype;          /* the dtype of the tensor it was made for (-1 unknown), for
                               torch.memory_snapshot */
} mt_storage;

typedef struct mt_tensor {
  mt_storage *storage;      /* NULL only for a tensor not yet initialised */
  int64_t offset;           /* in elements */
  int dtype;
  int ndim;
  int64_t shape[MT_MAX_DIMS];
  int64_t stride[MT_MAX_DIMS];  /* in elements */
  void *grad_meta;          /* autograd metadata, owned by src/autograd */
} mt_tensor;

/* ---- errors ---- */
const char *mt_error(void);
int mt_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "2x3" into buf, for messages: a tensor's shape, or any list of sizes */
const char *mt_shape_str(const mt_tensor *t, char *buf, size_t n);
const char *mt_dims_str(const int64_t *dims, int ndim, char *buf, size_t n);

/* ---- checked size arithmetic ----
   Every size, stride and offset computed from a caller's numbers goes
   through these: a signed overflow would wrap past the bounds check that
   follows it (and is undefined in C). */
/* The most elements a tensor may have (its nonzero sizes multiplied): a byte
   count of any dtype, and every contiguous stride, then fits in int64. */
#define MT_MAX_NUMEL (INT64_MAX / 8)
/* *r = a * b or a + b; -1 with "op: size arithmetic overflows" set. */
int mt_mul_size(const char *op, int64_t a, int64_t b, int64_t *r);
int mt_add_size(const char *op, int64_t a, int64_t b, int64_t *r);
/* The element count of shape; -1 with an error naming op and the shape when
   a size is negative or the nonzero sizes multiply past MT_MAX_NUMEL (a zero
   size does not hide a huge one). */
int64_t mt_shape_numel(const char *op, int ndim, const int64_t *shape);
/* For formulas (the output size of a convolution or a pool): each step
   marks *overflow instead of wrapping, checked once at the end. */
static inline int64_t mt_size_mul(int64_t a, int64_t b, int *overflow) {
  int64_t r;
  *overflow |= __builtin_mul_overflow(a, b, &r);
  return r;
}
static inline int64_t mt_size_add(int64_t a, int64_t b, int *overflow) {
  int64_t r;
  *overflow |= __builtin_add_overflow(a, b, &r);
  return r;
}
static inline int64_t mt_size_sub(int64_t a, int64_t b, int *overflow) {
  int64_t r;
  *overflow |= __builtin_sub_overflow(a, b, &r);
  return r;
}
/* Whether [start, start + len) lies within [0, size), computed without overflow. */
static inline int mt_range_ok(int64_t start, int64_t len, int64_t size) {
  return start >= 0 && len >= 0 && start <= size && len <= size - start;
}
/* A view's geometry against its storage: its element count is valid, no
   stride passes MT_MAX_NUMEL, and every element it reaches lies inside the
   storage. -1 with an error naming op, shape, strides and offset otherwise.
   Every view constructor ends with it. */
int mt_check_view(const char *op, const mt_tensor *t);
/* Ends a view constructor whose sizes, strides or offset came from the
   caller's numbers: r is released (and -1 returned) when it fails mt_check_view. */
int mt_view_end(const char *op, mt_tensor *r);

/* ---- storage ---- */
mt_storage *mt_storage_new(size_t nbytes);
/* The same for elements of dtype (what torch.memory_snapshot shows; -1 unknown). */
mt_storage *mt_storage_new_for(size_t nbytes, int dtype);
void mt_storage_retain(mt_storage *s);
/* A storage over nbytes of memory mapped with mmap (a file, shared memory);
   released with mt_mapguard_unmap. NULL when out of memory (the mapping is
   then the caller's). */
mt_storage *mt_storage_mapped(void *data, size_t nbytes);
void mt_storage_release(mt_storage *s);

/* ---- devices ----
   The engine computes on the CPU; a backend (src/cuda) registers how memory
   of its device type is allocated, freed, copied and filled, and its kernels
   (src/ops/dispatch.h). A storage off the CPU holds device memory that no
   CPU kernel may read: the bindings refuse such tensors to every op that
   has no kernel for their device. */
typedef struct {
  const char *name;                              /* "cuda" */
  /* device memory on device index; NULL with mt_error() set when out of memory */
  void *(*alloc)(size_t nbytes, int index);
  void (*free)(void *p, size_t nbytes, int index);
  /* dst = src, dtype converted; same shapes (mt_copy broadcasts first);
     either is on this device type, the other on it or on the CPU */
  int (*copy)(mt_tensor *dst, const mt_tensor *src);
  int (*fill)(mt_tensor *t, double v);
} mt_device_backend;
void mt_register_device(int device, const mt_device_backend *b);
/* NULL when no backend of that type is loaded */
const mt_device_backend *mt_device_backend_of(int device);
static inline int mt_device_of(const mt_tensor *t) { return t->storage ? t->storage->device : MT_CPU; }
static inline int mt_device_index_of(const mt_tensor *t) { return t->storage ? t->storage->device_index : 0; }
static inline int mt_same_device(const mt_tensor *a, const mt_tensor *b) {
  return mt_device_of(a) == mt_device_of(b) && mt_device_index_of(a) == mt_device_index_of(b);
}
/* "cpu", "cuda:0" */
const char *mt_device_str(int device, int index, char *buf, size_t n);
const char *mt_tensor_device_str(const mt_tensor *t, char *buf, size_t n);
/* -1 with "op: expected all tensors on the same device, but found ... and ..."
   when b is on another device than a (NULL tensors pass) */
int mt_check_same_device(const char *op, const mt_tensor *a, const mt_tensor *b);
/* a new storage of nbytes on (device, index) */
mt_storage *mt_storage_new_on(size_t nbytes, int device, int index);

/* ---- lifetime ---- */
/* t must be zeroed or released; allocates contiguous uninitialised memory. */
int mt_tensor_init(mt_tensor *t, int dtype, int ndim, const int64_t *shape);
/* The same for a creation op: its errors (negative size, too large, out of
   memory) name op rather than "tensor". */
int mt_tensor_init_op(const char *op, mt_tensor *t, int dtype, int ndim, const int64_t *shape);
/* The same on a device (mt_tensor_init is on the CPU), or on like's device. */
int mt_tensor_init_on(const char *op, mt_tensor *t, int dtype, int ndim, const int64_t *shape, int device,
                      int index);
int mt_tensor_init_like(mt_tensor *t, int dtype, int ndim, const int64_t *shape, const mt_tensor *like);
/* Torch7's resize_: t takes shape with contiguous strides from its offset;
   it keeps its storage when that is large enough, else gets a larger one of
   its own that starts with the old one's bytes (the rest uninitialised). */
int mt_resize(mt_tensor *t, int ndim, const int64_t *shape);
/* t becomes a view of src with the same geometry (shares storage). */
void mt_tensor_alias(mt_tensor *t, const mt_tensor *src);
void mt_tensor_release(mt_tensor *t);
/* v: a stride-0 view of shape over the one value in buf (8 bytes), through
   the caller's storage s; releasing v never frees s or buf. */
void mt_scalar_view(mt_tensor *v, mt_storage *s, char *buf, int dtype, int ndim, const int64_t *shape);
/* Moves src's view into t (t released first). */
void mt_tensor_move(mt_tensor *t, mt_tensor *src);

/* Never overflows: every tensor passed mt_shape_numel or mt_check_view. */
static inline int64_t mt_numel(const mt_tensor *t) {
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++) n *= t->shape[i];
  return n;
}
static inline char *mt_data(const mt_tensor *t) {
  return (char *)t->storage->data + t->offset * mt_dtypes[t->dtype].size;
}
int mt_is_contiguous(const mt_tensor *t);
void mt_contiguous_strides(int ndim, const int64_t *shape, int64_t *stride);
int mt_same_shape(const mt_tensor *a, const mt_tensor *b);
/* In-place writes: out must not be an expanded view (stride 0 over a dim of
   size > 1); mt_check_inplace also refuses a result dtype of a higher kind
   than out's (float into int), as PyTorch. */
int mt_check_writable(const char *op, const mt_tensor *out);
int mt_check_inplace(const char *op, int result_dtype, const mt_tensor *out);
/* Wraps a negative (from the end) 0-based dim; -1 and an error when out of range. */
int mt_wrap_dim(const char *op, int dim, int ndim);

/* ---- copies and conversion ---- */
/* dst = src elementwise (src broadcast to dst's shape, dtype converted),
   between devices too (through the device's backend). */
int mt_copy(mt_tensor *dst, const mt_tensor *src);
/* The rest allocate on src's device; mt_fill runs on t's. */
int mt_contiguous(mt_tensor *r, const mt_tensor *src);   /* alias if already */
int mt_clone(mt_tensor *r, const mt_tensor *src);
/* src as a contiguous tensor of dtype: an alias when it already is one. */
int mt_contiguous_as(mt_tensor *r, const mt_tensor *src, int dtype);
/* r = a copy of x in dtype on (device, index): the registry's `to`; errors name op */
int mt_to_copy(mt_tensor *r, const mt_tensor *x, int dtype, int device, int index, const char *op);
int mt_to_dtype(mt_tensor *r, const mt_tensor *src, int dtype); /* alias if same */
int mt_fill(mt_tensor *t, double v);

/* The value of a one-element tensor on any device (a GPU's is copied to the
   host); -1 with an error when t does not hold exactly one element. */
int mt_item(const mt_tensor *t, double *v);

/* ---- element access as double / int64 (for printing, item, indexing) ---- */
double mt_get_f64(int dtype, const void *p);
int64_t mt_get_i64(int dtype, const void *p);
void mt_set_f64(int dtype, void *p, double v);
void mt_set_i64(int dtype, void *p, int64_t v);
/* pointer to element at a 0-based multi-index */
char *mt_elem_ptr(const mt_tensor *t, const int64_t *index);

/* ---- views (never copy) ---- */
int mt_view(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape);
int mt_reshape(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape);
int mt_transpose(mt_tensor *r, const mt_tensor *t, int d0, int d1);
int mt_permute(mt_tensor *r, const mt_tensor *t, const int *dims);
int mt_narrow(mt_tensor *r, const mt_tensor *t, int dim, int64_t start, int64_t len);
int mt_select(mt_tensor *r, const mt_tensor *t, int dim, int64_t index);
int mt_squeeze(mt_tensor *r, const mt_tensor *t, int dim);  /* dim -1: all */
int mt_unsqueeze(mt_tensor *r, const mt_tensor *t, int dim);
int mt_expand(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape);
int mt_unfold(mt_tensor *r, const mt_tensor *t, int dim, int64_t size, int64_t step);
int mt_diagonal(mt_tensor *r, const mt_tensor *t, int64_t offset, int d0, int d1);
int mt_as_strided(mt_tensor *r, const mt_tensor *t, int ndim, const int64_t *shape,
                  const int64_t *stride, int64_t offset);
int mt_slice(mt_tensor *r, const mt_tensor *t, int dim, int64_t start, int64_t stop,
             int64_t step);

/* Broadcast two shapes (PyTorch rules) into out; -1 with an error naming op. */
int mt_broadcast_shapes(const char *op, int na, const int64_t *sa, int nb,
                        const int64_t *sb, int *nout, int64_t *out);

/* ---- threads ---- */
void mt_set_num_threads(int n);
int mt_get_num_threads(void);

#endif
