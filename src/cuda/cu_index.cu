/* cu_index.cu: indexing with tensors on the GPU -- index_select/add/copy/
   fill, gather, scatter (and their value and add forms), masked_fill (in
   place and out of place) -- and argmax/argmin, the kernels of
   mt_device_extra (mt_ops.h) the losses and autograd's formulas call, with
   the semantics and errors of mt_index.c and mt_argmax (mt_reduce.c).

   Every op is one walk over a geometry of up to four operands, as the CPU's
   gather and scatter walks: the moved element's offsets come from its
   linear (row-major) index, and the indexed dim's offset is added from the
   index tensor's entry times the dim's byte step. Indices are int64 or
   int32, read as they are (never converted first), counting from base (1
   from Lua), negative ones from the end. They are all checked before
   anything is written: a kernel finds the first bad one (row-major), whose
   value the host reads back for the CPU's message.

   Repeated indices: index_copy_ and scatter_ keep the last (in row-major
   order of the index) through a claim pass -- each destination takes the
   largest position aiming at it by atomicMax -- before the copy; adds
   accumulate with atomics (float, double, int32, int64, half, bfloat16),
   or, for int8, uint8, int16 and bool, with a loop per destination element
   over the entries that can reach it (integer sums wrap, so their order
   does not matter). */
#include <stdint.h>
#include <string.h>
#include <limits.h>
#include <type_traits>
#include "cu_loop.cuh"

/* ---- the walk's geometry ----
   Up to four operands over one shape, collapsed where every operand is
   contiguous across two dims (row-major order kept, so the linear index is
   the element's row-major position); strides in bytes, or in units for the
   bookkeeping operands (a position along the indexed dim, a destination's
   slot in a claim buffer). Unused operands have stride 0. */
#define CU_IX_OPS 4

typedef struct {
  int ndim;                                  /* after collapsing, >= 1 */
  int64_t numel;
  int64_t shape[MT_MAX_DIMS];
  int64_t stride[CU_IX_OPS][MT_MAX_DIMS];
} cu_ix_geom;

typedef int64_t cu_ix_strides[CU_IX_OPS][MT_MAX_DIMS];

static void cu_ix_geom_init(cu_ix_geom *g, int nd, const int64_t *shape, const cu_ix_strides st) {
  memset(g, 0, sizeof *g);
  g->numel = 1;
  int n = 0;
  for (int d = 0; d < nd; d++) {
    g->numel *= shape[d];
    if (shape[d] == 1) continue;
    int merge = n > 0;
    for (int k = 0; k < CU_IX_OPS && merge; k++) merge = g->stride[k][n - 1] == shape[d] * st[k][d];
    if (merge) {
      g->shape[n - 1] *= shape[d];
      for (int k = 0; k < CU_IX_OPS; k++) g->stride[k][n - 1] = st[k][d];
    } else {
      g->shape[n] = shape[d];
      for (int k = 0; k < CU_IX_OPS; k++) g->stride[k][n] = st[k][d];
      n++;
    }
  }
  if (g->numel == 0) {                 /* nothing to walk */
    g->shape[0] = 0;
    n = 1;
  } else if (n == 0) {                 /* one element */
    g->shape[0] = 1;
    n = 1;
  }
  g->ndim = n;
}

/* operand k's offset at linear index i, on the host (for error messages) */
static int64_t cu_ix_offset(const cu_ix_geom *g, int k, int64_t i) {
  int64_t off = 0;
  for (int d = g->ndim - 1; d >= 0; d--) {
    off += (i % g->shape[d]) * g->stride[k][d];
    i /= g->shape[d];
  }
  return off;
}

/* The geometry in the kernel's index type: 32-bit math when the element
   count and every operand's extent fit, as cu_loop.cuh's. */
template <class IDX> struct cu_ix_k {
  typedef typename std::make_signed<IDX>::type off;
  int ndim;
  IDX numel;
  IDX shape[MT_MAX_DIMS];
  off stride[CU_IX_OPS][MT_MAX_DIMS];
};

static int cu_ix_fits32(const cu_ix_geom *g) {
  if (g->numel > INT32_MAX) return 0;
  for (int k = 0; k < CU_IX_OPS; k++) {
    int64_t extent = 0;
    for (int d = 0; d < g->ndim; d++) {
      const int64_t s = g->stride[k][d] < 0 ? -g->stride[k][d] : g->stride[k][d];
      if (g->shape[d] > 1) extent += (g->shape[d] - 1) * s;
      if (extent > INT32_MAX) return 0;
    }
  }
  return 1;
}

template <class IDX> static cu_ix_k<IDX> cu_ix_to(const cu_ix_geom *g) {
  cu_ix_k<IDX> k;
  memset(&k, 0, sizeof k);
  k.ndim = g->ndim;
  k.numel = (IDX)g->numel;
  for (int d = 0; d < g->ndim; d++) {
    k.shape[d] = (IDX)g->shape[d];
    for (int o = 0; o < CU_IX_OPS; o++)
      k.stride[o][d] = g->shape[d] > 1 ? (typename cu_ix_k<IDX>::off)g->stride[o][d] : 0;
  }
  return k;
}

/* Calls f(i, offsets of the first N operands) for every element i of g. */
template <class IDX, int N, class F>
__global__ void __launch_bounds__(CU_THREADS) cu_ix_walk(cu_ix_k<IDX> g, F f) {
  typedef typename cu_ix_k<IDX>::off off;
  const IDX step = (IDX)gridDim.x * blockDim.x;
  for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += step) {
    off o[N];
    IDX rem = i;
    for (int k = 0; k < N; k++) o[k] = 0;
    for (int d = g.ndim - 1; d > 0; d--) {
      const IDX q = rem / g.shape[d];
      const off at = (off)(rem - q * g.shape[d]);
      rem = q;
      for (int k = 0; k < N; k++) o[k] += at * g.stride[k][d];
    }
    int64_t o64[N];
    for (int k = 0; k < N; k++) o64[k] = (int64_t)(o[k] + (off)rem * g.stride[k][0]);
    f((int64_t)i, o64);
  }
}

template <int N, class F> static int cu_ix_launch(const char *op, const cu_ix_geom *g, const F &f, int dev) {
  if (g->numel == 0) return 0;
  int64_t blocks = (g->numel + CU_THREADS - 1) / CU_THREADS;
  if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
  cudaStream_t s = cu_stream(dev);
  if (cu_ix_fits32(g))
    cu_ix_walk<uint32_t, N, F><<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_ix_to<uint32_t>(g), f);
  else
    cu_ix_walk<uint64_t, N, F><<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_ix_to<uint64_t>(g), f);
  return CU_LAUNCHED(op);
}

/* ---- dispatch on the host: by element size, index dtype, dtype ---- */
template <class Fn> static int cu_ix_by_size(const char *op, int dtype, Fn &&fn) {
  switch (mt_dtypes[dtype].size) {
    case 1: return fn(uint8_t());
    case 2: return fn(uint16_t());
    case 4: return fn(uint32_t());
    case 8: return fn(uint64_t());
  }
  return mt_fail("%s: unknown dtype %d", op, dtype);
}

template <class Fn> static int cu_ix_by_index(int dtype, Fn &&fn) {
  return dtype == MT_INT32 ? fn(int32_t()) : fn(int64_t());
}

template <int E> using cu_ix_dt = std::integral_constant<int, E>;
template <class Fn> static int cu_ix_by_dtype(const char *op, int dtype, Fn &&fn) {
  switch (dtype) {
    case MT_FLOAT32: return fn(cu_ix_dt<MT_FLOAT32>());
    case MT_FLOAT64: return fn(cu_ix_dt<MT_FLOAT64>());
    case MT_FLOAT16: return fn(cu_ix_dt<MT_FLOAT16>());
    case MT_BFLOAT16: return fn(cu_ix_dt<MT_BFLOAT16>());
    case MT_INT8: return fn(cu_ix_dt<MT_INT8>());
    case MT_UINT8: return fn(cu_ix_dt<MT_UINT8>());
    case MT_INT16: return fn(cu_ix_dt<MT_INT16>());
    case MT_INT32: return fn(cu_ix_dt<MT_INT32>());
    case MT_INT64: return fn(cu_ix_dt<MT_INT64>());
    case MT_BOOL: return fn(cu_ix_dt<MT_BOOL>());
  }
  return mt_fail("%s: unknown dtype %d", op, dtype);
}

/* ---- the walks' bodies ---- */
/* an index (checked already) as a 0-based position in a dim of size */
static __device__ __forceinline__ int64_t cu_ix_wrap(int64_t v, int64_t size, int64_t base) {
  return v < 0 ? v + size : v - base;
}

/* operand 0: the index. Notes the first position outside [-size, size)
   shifted by base. */
template <class IT> struct cu_ix_check_f {
  const char *ix;
  int64_t size, base;
  unsigned long long *first;
  __device__ void operator()(int64_t i, const int64_t *o) const {
    const int64_t v = (int64_t)*(const IT *)(ix + o[0]);
    if (v < -size || (v >= 0 && v < base) || v - base >= size) atomicMin(first, (unsigned long long)i);
  }
};

/* out[p] = x[p + index[p] * step]; operands: out, x (indexed dim at stride
   0), index */
template <class T, class IT> struct cu_ix_gather_f {
  char *out;
  const char *x, *ix;
  int64_t step, size, base;
  __device__ void operator()(int64_t, const int64_t *o) const {
    const int64_t k = cu_ix_wrap((int64_t)*(const IT *)(ix + o[2]), size, base);
    *(T *)(out + o[0]) = *(const T *)(x + o[1] + k * step);
  }
};

/* Claims: the destination slot + k * wstep (operand 1, units) takes the
   largest linear position i (plus 1; 0 is unclaimed) aiming at it.
   operands: index, slot. */
template <class IT> struct cu_ix_claim_f {
  const char *ix;
  int64_t size, base, wstep;
  unsigned long long *win;
  __device__ void operator()(int64_t i, const int64_t *o) const {
    const int64_t k = cu_ix_wrap((int64_t)*(const IT *)(ix + o[0]), size, base);
    atomicMax(win + o[1] + k * wstep, (unsigned long long)i + 1);
  }
};

/* which claims a put honours: none; index_copy_'s (win[k] holds the
   winning position j along the dim, operand 3); scatter_'s (win[slot + k *
   wstep] holds the winning linear position, the slot operand 3) */
enum { CU_WIN_NONE, CU_WIN_SLICE, CU_WIN_ELEM };

/* dst[p + index[p] * step] = src[p] (or value); operands: dst (indexed
   dim at stride 0), src, index, claim key or slot */
template <class T, class IT> struct cu_ix_put_f {
  char *dst;
  const char *src, *ix;
  int64_t step, size, base, wstep;
  const unsigned long long *win;
  T value;
  int fill, wmode;
  __device__ void operator()(int64_t i, const int64_t *o) const {
    const int64_t k = cu_ix_wrap((int64_t)*(const IT *)(ix + o[2]), size, base);
    if (wmode == CU_WIN_SLICE && win[k] != (unsigned long long)o[3] + 1) return;
    if (wmode == CU_WIN_ELEM && win[o[3] + k * wstep] != (unsigned long long)i + 1) return;
    *(T *)(dst + o[0] + k * step) = fill ? value : *(const T *)(src + o[1]);
  }
};

/* *p += alpha * b atomically, as the CPU's a + alpha * b in the compute
   type then stored. half and bfloat16 use the native atomic when the
   addend is exact in the dtype (then a + addend rounds once, as the CPU's
   float sum rounded to the dtype: float is wide enough that rounding twice
   never differs), else a compare-and-swap loop doing the CPU's float sum. */
template <int E>
__device__ __forceinline__ void cu_ix_atomic_add(char *p, typename cu_dt<E>::ct alpha, typename cu_dt<E>::ct b) {
  if constexpr (E == MT_FLOAT32) {
    atomicAdd((float *)p, alpha * b);
  } else if constexpr (E == MT_FLOAT64) {
    atomicAdd((double *)p, alpha * b);
  } else if constexpr (E == MT_INT32) {            /* wrapping, as the CPU's */
    atomicAdd((unsigned int *)p, (unsigned int)alpha * (unsigned int)b);
  } else if constexpr (E == MT_INT64) {
    atomicAdd((unsigned long long *)p, (unsigned long long)alpha * (unsigned long long)b);
  } else {
    static_assert(E == MT_FLOAT16 || E == MT_BFLOAT16, "no atomic add for this dtype");
    const float f = alpha * b;
    if constexpr (E == MT_FLOAT16) {
      const __half h = __float2half_rn(f);
      if (__half2float(h) == f) {
        atomicAdd((__half *)p, h);
        return;
      }
    } else {
      const __nv_bfloat16 h = __float2bfloat16_rn(f);
      if (__bfloat162float(h) == f) {
        atomicAdd((__nv_bfloat16 *)p, h);
        return;
      }
    }
    unsigned short *w = (unsigned short *)p;
    unsigned short old = *w, assumed, next;
    do {
      assumed = old;
      cu_dt<E>::store((char *)&next, cu_dt<E>::load((const char *)&assumed) + f);
      old = atomicCAS(w, assumed, next);
    } while (old != assumed);
  }
}

template <int E> constexpr bool cu_ix_has_atomic() {
  return E == MT_FLOAT32 || E == MT_FLOAT64 || E == MT_INT32 || E == MT_INT64 || E == MT_FLOAT16 ||
         E == MT_BFLOAT16;
}

/* dst[p + index[p] * step] += alpha * src[p] (or value), atomically;
   operands: dst (indexed dim at stride 0), src, index */
template <int E, class IT> struct cu_ix_add_f {
  typedef typename cu_dt<E>::ct ct;
  char *dst;
  const char *src, *ix;
  int64_t step, size, base;
  ct alpha, value;
  int fill;
  __device__ void operator()(int64_t, const int64_t *o) const {
    const int64_t k = cu_ix_wrap((int64_t)*(const IT *)(ix + o[2]), size, base);
    cu_ix_atomic_add<E>(dst + o[0] + k * step, alpha, fill ? value : cu_dt<E>::load(src + o[1]));
  }
};

/* The add for dtypes without atomics: one thread per destination element
   (at position k of the indexed dim, operand 3) adds the J entries j whose
   index is k, in order, storing after each add as the CPU does. operands:
   dst (every dim), src and index at entry 0 of the indexed dim, k; sj and
   ij step them along it. */
template <int E, class IT> struct cu_ix_add_loop_f {
  typedef typename cu_dt<E>::ct ct;
  char *dst;
  const char *src, *ix;
  int64_t J, sj, ij, size, base;
  ct alpha, value;
  int fill;
  __device__ void operator()(int64_t, const int64_t *o) const {
    char *p = dst + o[0];
    ct acc = cu_dt<E>::load(p);
    bool hit = false;
    for (int64_t j = 0; j < J; j++) {
      if (cu_ix_wrap((int64_t)*(const IT *)(ix + o[2] + j * ij), size, base) != o[3]) continue;
      const ct b = fill ? value : cu_dt<E>::load(src + o[1] + j * sj);
      char t[8];
      cu_dt<E>::store(t, acc + alpha * b);
      acc = cu_dt<E>::load(t);
      hit = true;
    }
    if (hit) cu_dt<E>::store(p, acc);
  }
};

/* x = value where the mask's byte is nonzero; operands: x, mask */
template <class T> struct cu_ix_mask_fill_f {
  char *x;
  const char *mask;
  T value;
  __device__ void operator()(int64_t, const int64_t *o) const {
    if (*(const uint8_t *)(mask + o[1])) *(T *)(x + o[0]) = value;
  }
};

/* r = mask ? value : x; operands: r, x, mask */
template <class T> struct cu_ix_mask_out_f {
  char *r;
  const char *x, *mask;
  T value;
  __device__ void operator()(int64_t, const int64_t *o) const {
    *(T *)(r + o[0]) = *(const uint8_t *)(mask + o[2]) ? value : *(const T *)(x + o[1]);
  }
};

/* ---- host helpers ---- */
/* t itself, or a 1-element 1-D frame of a 0-dim t (as the CPU's frame());
   strides in elements */
static int cu_ix_frame(const mt_tensor *t, int64_t *shape, int64_t *stride) {
  if (t->ndim == 0) {
    shape[0] = 1;
    stride[0] = 1;
    return 1;
  }
  memcpy(shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
  memcpy(stride, t->stride, sizeof(int64_t) * (size_t)t->ndim);
  return t->ndim;
}

static int cu_ix_index_dtype(const char *op, const mt_tensor *index) {
  if (index->dtype != MT_INT64 && index->dtype != MT_INT32)
    return mt_fail("%s: index must be an int64 or int32 tensor, got %s", op, mt_dtypes[index->dtype].name);
  return 0;
}

static int cu_ix_check_value(const char *op, const mt_tensor *value) {
  char b[128];
  if (value->ndim != 0)
    return mt_fail("%s: value must be a number or a 0-dim tensor, got a tensor of shape %s", op,
                   mt_shape_str(value, b, sizeof b));
  return 0;
}

static int cu_ix_check_mask(const char *op, const mt_tensor *mask) {
  if (mask->dtype != MT_BOOL && mask->dtype != MT_UINT8)
    return mt_fail("%s: mask must be a bool (or uint8) tensor, got %s", op, mt_dtypes[mask->dtype].name);
  return 0;
}

/* The op's device: x's, where the other tensors (NULL: none) must be too;
   made current. */
static int cu_ix_device(const char *op, const mt_tensor *x, const mt_tensor *a, const mt_tensor *b, int *dev) {
  if (mt_device_of(x) != MT_CUDA) return mt_fail("%s: expected a CUDA tensor", op);
  if (a && mt_check_same_device(op, x, a)) return -1;
  if (b && mt_check_same_device(op, x, b)) return -1;
  *dev = mt_device_index_of(x);
  return cu_set_device(op, *dev);
}

/* A one-element value (any dtype, on the CPU or a GPU) as dtype's bits,
   integers kept exact, as the CPU's store_scalar. */
static int cu_ix_value_bits(const char *op, const mt_tensor *value, int dtype, char *bits) {
  char raw[8] = {0};
  const size_t vs = (size_t)mt_dtypes[value->dtype].size;
  if (mt_device_of(value) == MT_CPU) {
    memcpy(raw, mt_data(value), vs);
  } else {
    cudaStream_t s = cu_stream(mt_device_index_of(value));
    CU_TRY(op, cudaMemcpyAsync(raw, mt_data(value), vs, cudaMemcpyDeviceToHost, s));
    CU_TRY(op, cudaStreamSynchronize(s));
  }
  memset(bits, 0, 8);
  if (mt_dtype_is_float((mt_dtype)value->dtype)) mt_set_f64(dtype, bits, mt_get_f64(value->dtype, raw));
  else mt_set_i64(dtype, bits, mt_get_i64(value->dtype, raw));
  return 0;
}

/* A scratch block on device dev, zeroed on its stream when zero is set. */
static void *cu_ix_scratch(const char *op, size_t nbytes, int dev, int zero) {
  void *p = cu_alloc(nbytes, dev);
  if (!p) return NULL;
  if (zero) {
    const cudaError_t e = cudaMemsetAsync(p, 0, nbytes, cu_stream(dev));
    if (e != cudaSuccess) {
      cu_free(p, nbytes, dev);
      cu_fail(op, e);
      return NULL;
    }
  }
  return p;
}

/* Fails, as the CPU's check_range, on the first (row-major) entry of index
   outside [-size, size) shifted by base; waits for the check, so nothing
   has been written when it fails. dim is 0-based. */
static int cu_ix_check_range(const char *op, const mt_tensor *index, int dim, int64_t size, int64_t base, int dev) {
  int64_t shape[MT_MAX_DIMS], stride[MT_MAX_DIMS];
  const int nd = cu_ix_frame(index, shape, stride);
  const int64_t isz = mt_dtypes[index->dtype].size;
  cu_ix_strides st = {};
  for (int d = 0; d < nd; d++) st[0][d] = stride[d] * isz;
  cu_ix_geom g;
  cu_ix_geom_init(&g, nd, shape, st);
  if (g.numel == 0) return 0;
  unsigned long long *first = (unsigned long long *)cu_alloc(sizeof *first, dev);
  if (!first) return -1;
  cudaStream_t s = cu_stream(dev);
  unsigned long long found = ULLONG_MAX;
  const char *ix = mt_data(index);
  int rc = cu_fail(op, cudaMemsetAsync(first, 0xff, sizeof *first, s));
  if (rc == 0)
    rc = cu_ix_by_index(index->dtype, [&](auto it) {
      typedef decltype(it) IT;
      cu_ix_check_f<IT> f = {ix, size, base, first};
      return cu_ix_launch<1>(op, &g, f, dev);
    });
  if (rc == 0) rc = cu_fail(op, cudaMemcpyAsync(&found, first, sizeof found, cudaMemcpyDeviceToHost, s));
  if (rc == 0) rc = cu_fail(op, cudaStreamSynchronize(s));
  cu_free(first, sizeof *first, dev);
  if (rc || found == ULLONG_MAX) return rc;
  /* the bad entry's value, as given */
  char raw[8] = {0};
  rc = cu_fail(op, cudaMemcpyAsync(raw, ix + cu_ix_offset(&g, 0, (int64_t)found), (size_t)isz,
                                   cudaMemcpyDeviceToHost, s));
  if (rc == 0) rc = cu_fail(op, cudaStreamSynchronize(s));
  if (rc) return rc;
  const int64_t bad = mt_get_i64(index->dtype, raw);
  return mt_fail("%s: index %lld out of range for dim %d of size %lld%s", op, (long long)bad, dim + 1,
                 (long long)size, bad == 0 && base == 1 ? " (indices are 1-based)" : "");
}

/* ---- index_select ---- */
CU_EXTERN int cu_index_select(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base) {
  const char *op = "index_select";
  char b[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  if (index->ndim > 1)
    return mt_fail("%s: index must be 0-D or 1-D, got shape %s", op, mt_shape_str(index, b, sizeof b));
  const int64_t m = mt_numel(index);
  if (x->ndim == 0 && m != 1)
    return mt_fail("%s: a 0-dim tensor takes exactly one index, got %lld", op, (long long)m);
  if (cu_ix_index_dtype(op, index)) return -1;
  int dev = 0;
  if (cu_ix_device(op, x, index, NULL, &dev)) return -1;
  int64_t shape[MT_MAX_DIMS], xs[MT_MAX_DIMS];
  const int nd = cu_ix_frame(x, shape, xs);
  const int64_t size = shape[dim];
  if (cu_ix_check_range(op, index, dim, size, base, dev)) return -1;
  shape[dim] = m;
  if (mt_tensor_init_on(op, r, x->dtype, nd, shape, MT_CUDA, dev)) return -1;
  const int64_t es = mt_dtypes[x->dtype].size, isz = mt_dtypes[index->dtype].size;
  /* operands: r, x (dim at stride 0), index (varying along dim only) */
  cu_ix_strides st = {};
  for (int d = 0; d < nd; d++) {
    st[0][d] = r->stride[d] * es;
    st[1][d] = d == dim ? 0 : xs[d] * es;
  }
  st[2][dim] = index->ndim ? index->stride[0] * isz : 0;
  cu_ix_geom g;
  cu_ix_geom_init(&g, nd, shape, st);
  char *out = mt_data(r);
  const char *px = mt_data(x), *ix = mt_data(index);
  const int64_t step = xs[dim] * es;
  int rc = cu_ix_by_size(op, x->dtype, [&](auto tag) {
    typedef decltype(tag) T;
    return cu_ix_by_index(index->dtype, [&](auto it) {
      typedef decltype(it) IT;
      cu_ix_gather_f<T, IT> f = {out, px, ix, step, size, base};
      return cu_ix_launch<3>(op, &g, f, dev);
    });
  });
  if (rc) {
    mt_tensor_release(r);
    return -1;
  }
  r->ndim = x->ndim;                   /* a 0-dim x gives a 0-dim result */
  return 0;
}

/* ---- index_add_, index_copy_, index_fill_ ----
   x's slices index[j] along dim take src's slice j (or value); add: +=
   alpha * src. As the CPU's index_put_impl, checks in its order. */
static int cu_index_put(const char *op, mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src,
                        const mt_tensor *value, int add, double alpha, int64_t base) {
  char b1[128], b2[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  if (index->ndim > 1)
    return mt_fail("%s: index must be 0-D or 1-D, got shape %s", op, mt_shape_str(index, b1, sizeof b1));
  if (value && cu_ix_check_value(op, value)) return -1;
  int64_t shape[MT_MAX_DIMS], xs[MT_MAX_DIMS], xshape[MT_MAX_DIMS];
  const int nd = cu_ix_frame(x, xshape, xs);
  memcpy(shape, xshape, sizeof(int64_t) * (size_t)nd);
  const int64_t m = mt_numel(index);
  shape[dim] = m;
  int64_t ss[MT_MAX_DIMS] = {0};
  if (src) {
    if (src->dtype != x->dtype)
      return mt_fail("%s: self (%s) and source (%s) must have the same dtype", op, mt_dtypes[x->dtype].name,
                     mt_dtypes[src->dtype].name);
    int64_t sshape[MT_MAX_DIMS];
    const int snd = cu_ix_frame(src, sshape, ss);
    int same = snd == nd;
    for (int d = 0; same && d < nd; d++) same = sshape[d] == shape[d];
    if (!same)
      return mt_fail("%s: source must have shape %s (self's with the index's length in dim %d), got %s", op,
                     mt_dims_str(shape, nd, b1, sizeof b1), dim + 1, mt_shape_str(src, b2, sizeof b2));
  }
  if (cu_ix_index_dtype(op, index)) return -1;
  int dev = 0;
  if (cu_ix_device(op, x, index, src, &dev)) return -1;
  const int64_t size = xshape[dim];
  if (cu_ix_check_range(op, index, dim, size, base, dev)) return -1;
  char bits[8] = {0};
  if (value && cu_ix_value_bits(op, value, x->dtype, bits)) return -1;

  const int64_t es = mt_dtypes[x->dtype].size, isz = mt_dtypes[index->dtype].size;
  const int64_t istep = index->ndim ? index->stride[0] * isz : 0, step = xs[dim] * es;
  char *px = mt_data(x);
  const char *ps = src ? mt_data(src) : NULL, *ix = mt_data(index);
  /* the walk over src's shape: operands x (dim at stride 0), src, index
     (along dim only), j (the position along dim, units) */
  cu_ix_strides st = {};
  for (int d = 0; d < nd; d++) {
    st[0][d] = d == dim ? 0 : xs[d] * es;
    st[1][d] = src ? ss[d] * es : 0;
  }
  st[2][dim] = istep;
  st[3][dim] = 1;
  cu_ix_geom g;
  cu_ix_geom_init(&g, nd, shape, st);
  int rc = 0;
  if (add) {
    rc = cu_ix_by_dtype(op, x->dtype, [&](auto e) {
      constexpr int E = decltype(e)::value;
      typedef typename cu_dt<E>::ct ct;
      const ct ca = (ct)alpha, cv = cu_scalar_value<E>(bits);
      return cu_ix_by_index(index->dtype, [&](auto it) {
        typedef decltype(it) IT;
        if constexpr (cu_ix_has_atomic<E>()) {
          cu_ix_add_f<E, IT> f = {px, ps, ix, step, size, base, ca, cv, value != NULL};
          return cu_ix_launch<3>(op, &g, f, dev);
        } else {
          /* a thread per element of x, over the m entries */
          cu_ix_strides lt = {};
          for (int d = 0; d < nd; d++) {
            lt[0][d] = xs[d] * es;
            lt[1][d] = src && d != dim ? ss[d] * es : 0;
          }
          lt[3][dim] = 1;
          cu_ix_geom lg;
          cu_ix_geom_init(&lg, nd, xshape, lt);
          cu_ix_add_loop_f<E, IT> f = {px, ps, ix, m, src ? ss[dim] * es : 0, istep, size, base, ca, cv,
                                       value != NULL};
          return cu_ix_launch<4>(op, &lg, f, dev);
        }
      });
    });
  } else {
    /* index_copy_ with repeated indices keeps the last: each slice k first
       claims its largest j */
    unsigned long long *win = NULL;
    const size_t wbytes = (size_t)size * sizeof *win;
    const int claims = src && m > 1 && g.numel > 0;
    if (claims && !(win = (unsigned long long *)cu_ix_scratch(op, wbytes, dev, 1))) return -1;
    if (claims) {
      cu_ix_strides cs = {};
      cs[0][0] = istep;
      cu_ix_geom cg;
      cu_ix_geom_init(&cg, 1, &m, cs);
      rc = cu_ix_by_index(index->dtype, [&](auto it) {
        typedef decltype(it) IT;
        cu_ix_claim_f<IT> f = {ix, size, base, 1, win};
        return cu_ix_launch<2>(op, &cg, f, dev);
      });
    }
    if (rc == 0)
      rc = cu_ix_by_size(op, x->dtype, [&](auto tag) {
        typedef decltype(tag) T;
        T v;
        memcpy(&v, bits, sizeof v);
        return cu_ix_by_index(index->dtype, [&](auto it) {
          typedef decltype(it) IT;
          cu_ix_put_f<T, IT> f = {px, ps, ix, step, size, base, 1, win, v, value != NULL,
                                  claims ? CU_WIN_SLICE : CU_WIN_NONE};
          return cu_ix_launch<4>(op, &g, f, dev);
        });
      });
    if (win) cu_free(win, wbytes, dev);
  }
  if (rc) return -1;
  x->storage->version++;
  return 0;
}

CU_EXTERN int cu_index_add(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, double alpha,
                           int64_t base) {
  return cu_index_put("index_add_", x, dim, index, src, NULL, 1, alpha, base);
}

CU_EXTERN int cu_index_copy(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int64_t base) {
  return cu_index_put("index_copy_", x, dim, index, src, NULL, 0, 1, base);
}

CU_EXTERN int cu_index_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int64_t base) {
  return cu_index_put("index_fill_", x, dim, index, NULL, value, 0, 1, base);
}

/* ---- gather ---- */
CU_EXTERN int cu_gather(mt_tensor *r, const mt_tensor *x, int dim, const mt_tensor *index, int64_t base) {
  const char *op = "gather";
  char b1[128], b2[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  int64_t xshape[MT_MAX_DIMS], xs[MT_MAX_DIMS], ishape[MT_MAX_DIMS], is[MT_MAX_DIMS];
  const int nd = cu_ix_frame(x, xshape, xs);
  const int ind = cu_ix_frame(index, ishape, is);
  if (x->ndim == 0 ? index->ndim > 1 : index->ndim != x->ndim)
    return mt_fail("%s: index must have as many dims as self (%d), got %d", op, x->ndim, index->ndim);
  for (int d = 0; d < nd; d++)
    if (d != dim && ishape[d] > xshape[d])
      return mt_fail("%s: index %s is larger than self %s in dim %d (only dim %d may be larger)", op,
                     mt_shape_str(index, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2), d + 1, dim + 1);
  if (cu_ix_index_dtype(op, index)) return -1;
  int dev = 0;
  if (cu_ix_device(op, x, index, NULL, &dev)) return -1;
  const int64_t size = xshape[dim];
  if (cu_ix_check_range(op, index, dim, size, base, dev)) return -1;
  if (mt_tensor_init_on(op, r, x->dtype, index->ndim, index->shape, MT_CUDA, dev)) return -1;
  const int64_t es = mt_dtypes[x->dtype].size, isz = mt_dtypes[index->dtype].size;
  /* operands over index's shape: r (contiguous), x (dim at stride 0), index */
  int64_t rs[MT_MAX_DIMS];
  mt_contiguous_strides(ind, ishape, rs);
  cu_ix_strides st = {};
  for (int d = 0; d < ind; d++) {
    st[0][d] = rs[d] * es;
    st[1][d] = d == dim ? 0 : xs[d] * es;
    st[2][d] = is[d] * isz;
  }
  cu_ix_geom g;
  cu_ix_geom_init(&g, ind, ishape, st);
  char *out = mt_data(r);
  const char *px = mt_data(x), *ix = mt_data(index);
  const int64_t step = xs[dim] * es;
  int rc = cu_ix_by_size(op, x->dtype, [&](auto tag) {
    typedef decltype(tag) T;
    return cu_ix_by_index(index->dtype, [&](auto it) {
      typedef decltype(it) IT;
      cu_ix_gather_f<T, IT> f = {out, px, ix, step, size, base};
      return cu_ix_launch<3>(op, &g, f, dev);
    });
  });
  if (rc) mt_tensor_release(r);
  return rc ? -1 : 0;
}

/* ---- scatter_, scatter_add_ and their value forms (src NULL) ----
   As the CPU's scatter_impl, checks in its order. */
static int cu_scatter_impl(const char *op, mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src,
                           const mt_tensor *value, int add, int64_t base) {
  char b1[128], b2[128];
  if ((dim = mt_wrap_dim(op, dim, x->ndim)) < 0) return -1;
  int64_t xshape[MT_MAX_DIMS], xs[MT_MAX_DIMS], ishape[MT_MAX_DIMS], is[MT_MAX_DIMS];
  int64_t sshape[MT_MAX_DIMS] = {0}, ss[MT_MAX_DIMS] = {0};
  const int nd = cu_ix_frame(x, xshape, xs);
  const int ind = cu_ix_frame(index, ishape, is);
  if (x->ndim == 0 ? index->ndim > 1 : index->ndim != x->ndim)
    return mt_fail("%s: index must have as many dims as self (%d), got %d", op, x->ndim, index->ndim);
  if (value && cu_ix_check_value(op, value)) return -1;
  if (src) {
    if (src->dtype != x->dtype)
      return mt_fail("%s: self (%s) and src (%s) must have the same dtype", op, mt_dtypes[x->dtype].name,
                     mt_dtypes[src->dtype].name);
    const int snd = cu_ix_frame(src, sshape, ss);
    if (snd != ind)
      return mt_fail("%s: src must have as many dims as index (%d), got %d", op, index->ndim, src->ndim);
  }
  for (int d = 0; d < nd; d++) {
    if (d != dim && ishape[d] > xshape[d])
      return mt_fail("%s: index %s is larger than self %s in dim %d (only dim %d may be larger)", op,
                     mt_shape_str(index, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2), d + 1, dim + 1);
    if (src && ishape[d] > sshape[d])
      return mt_fail("%s: index %s is larger than src %s in dim %d", op, mt_shape_str(index, b1, sizeof b1),
                     mt_shape_str(src, b2, sizeof b2), d + 1);
  }
  if (cu_ix_index_dtype(op, index)) return -1;
  int dev = 0;
  if (cu_ix_device(op, x, index, src, &dev)) return -1;
  const int64_t size = xshape[dim];
  if (cu_ix_check_range(op, index, dim, size, base, dev)) return -1;
  char bits[8] = {0};
  if (value && cu_ix_value_bits(op, value, x->dtype, bits)) return -1;

  const int64_t es = mt_dtypes[x->dtype].size, isz = mt_dtypes[index->dtype].size;
  char *px = mt_data(x);
  const char *ps = src ? mt_data(src) : NULL, *ix = mt_data(index);
  const int64_t step = xs[dim] * es;
  /* The destinations index can reach: index's shape with dim as x's; a
     claim buffer slot per one, contiguous (region strides, units). */
  int64_t region[MT_MAX_DIMS], rstride[MT_MAX_DIMS];
  memcpy(region, ishape, sizeof(int64_t) * (size_t)ind);
  region[dim] = size;
  mt_contiguous_strides(ind, region, rstride);
  /* the walk over index's shape: operands x (dim at stride 0), src, index,
     the destination's claim slot at k = 0 */
  cu_ix_strides st = {};
  for (int d = 0; d < ind; d++) {
    st[0][d] = d == dim ? 0 : xs[d] * es;
    st[1][d] = src ? ss[d] * es : 0;
    st[2][d] = is[d] * isz;
    st[3][d] = d == dim ? 0 : rstride[d];
  }
  cu_ix_geom g;
  cu_ix_geom_init(&g, ind, ishape, st);
  int rc = 0;
  if (add) {
    rc = cu_ix_by_dtype(op, x->dtype, [&](auto e) {
      constexpr int E = decltype(e)::value;
      typedef typename cu_dt<E>::ct ct;
      const ct ca = (ct)1.0, cv = cu_scalar_value<E>(bits);
      return cu_ix_by_index(index->dtype, [&](auto it) {
        typedef decltype(it) IT;
        if constexpr (cu_ix_has_atomic<E>()) {
          cu_ix_add_f<E, IT> f = {px, ps, ix, step, size, base, ca, cv, value != NULL};
          return cu_ix_launch<3>(op, &g, f, dev);
        } else {
          /* a thread per reachable destination, over index's entries along dim */
          cu_ix_strides lt = {};
          for (int d = 0; d < ind; d++) {
            lt[0][d] = xs[d] * es;
            lt[1][d] = src && d != dim ? ss[d] * es : 0;
            lt[2][d] = d != dim ? is[d] * isz : 0;
          }
          lt[3][dim] = 1;
          cu_ix_geom lg;
          cu_ix_geom_init(&lg, ind, region, lt);
          cu_ix_add_loop_f<E, IT> f = {px, ps, ix, ishape[dim], src ? ss[dim] * es : 0, is[dim] * isz, size, base,
                                       ca, cv, value != NULL};
          return cu_ix_launch<4>(op, &lg, f, dev);
        }
      });
    });
  } else {
    /* Repeated destinations keep the last entry in row-major order; they
       can only repeat along dim, so with one entry there no claims. */
    unsigned long long *win = NULL;
    int64_t nregion = 1;
    for (int d = 0; d < ind; d++) nregion *= region[d];
    const size_t wbytes = (size_t)nregion * sizeof *win;
    const int claims = src && ishape[dim] > 1 && g.numel > 0;
    if (claims && !(win = (unsigned long long *)cu_ix_scratch(op, wbytes, dev, 1))) return -1;
    if (claims) {
      cu_ix_strides cs = {};
      for (int d = 0; d < ind; d++) {
        cs[0][d] = is[d] * isz;
        cs[1][d] = st[3][d];
      }
      cu_ix_geom cg;
      cu_ix_geom_init(&cg, ind, ishape, cs);
      rc = cu_ix_by_index(index->dtype, [&](auto it) {
        typedef decltype(it) IT;
        cu_ix_claim_f<IT> f = {ix, size, base, rstride[dim], win};
        return cu_ix_launch<2>(op, &cg, f, dev);
      });
    }
    if (rc == 0)
      rc = cu_ix_by_size(op, x->dtype, [&](auto tag) {
        typedef decltype(tag) T;
        T v;
        memcpy(&v, bits, sizeof v);
        return cu_ix_by_index(index->dtype, [&](auto it) {
          typedef decltype(it) IT;
          cu_ix_put_f<T, IT> f = {px, ps, ix, step, size, base, rstride[dim], win, v, value != NULL,
                                  claims ? CU_WIN_ELEM : CU_WIN_NONE};
          return cu_ix_launch<4>(op, &g, f, dev);
        });
      });
    if (win) cu_free(win, wbytes, dev);
  }
  if (rc) return -1;
  x->storage->version++;
  return 0;
}

CU_EXTERN int cu_scatter(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *src, int add, int64_t base) {
  return cu_scatter_impl(add ? "scatter_add_" : "scatter_", x, dim, index, src, NULL, add, base);
}

/* named scatter_ with add too, as the CPU's */
CU_EXTERN int cu_scatter_fill(mt_tensor *x, int dim, const mt_tensor *index, const mt_tensor *value, int add,
                              int64_t base) {
  return cu_scatter_impl("scatter_", x, dim, index, NULL, value, add, base);
}

/* ---- masked_fill_, masked_fill ---- */
CU_EXTERN int cu_masked_fill(mt_tensor *x, const mt_tensor *mask, const mt_tensor *value) {
  const char *op = "masked_fill_";
  char b1[128], b2[128];
  if (cu_ix_check_mask(op, mask) || cu_ix_check_value(op, value)) return -1;
  mt_tensor mv = {};
  if (mt_expand(&mv, mask, x->ndim, x->shape))
    return mt_fail("%s: mask of shape %s cannot broadcast to self's shape %s", op,
                   mt_shape_str(mask, b1, sizeof b1), mt_shape_str(x, b2, sizeof b2));
  int dev = 0;
  char bits[8];
  int rc = cu_ix_device(op, x, mask, NULL, &dev);
  if (rc == 0) rc = cu_ix_value_bits(op, value, x->dtype, bits);
  if (rc == 0) {
    const int64_t es = mt_dtypes[x->dtype].size;
    cu_ix_strides st = {};
    for (int d = 0; d < x->ndim; d++) {
      st[0][d] = x->stride[d] * es;
      st[1][d] = mv.stride[d];                 /* one byte per mask element */
    }
    cu_ix_geom g;
    cu_ix_geom_init(&g, x->ndim, x->shape, st);
    char *px = mt_data(x);
    const char *pm = mt_data(&mv);
    rc = cu_ix_by_size(op, x->dtype, [&](auto tag) {
      typedef decltype(tag) T;
      cu_ix_mask_fill_f<T> f = {px, pm, T()};
      memcpy(&f.value, bits, sizeof(T));
      return cu_ix_launch<2>(op, &g, f, dev);
    });
  }
  mt_tensor_release(&mv);
  if (rc) return -1;
  x->storage->version++;
  return 0;
}

/* r = x with value where mask is set, x and mask broadcast together: one
   pass, where the CPU clones x then fills */
CU_EXTERN int cu_masked_fill_out(mt_tensor *r, const mt_tensor *x, const mt_tensor *mask, const mt_tensor *value) {
  const char *op = "masked_fill";
  if (cu_ix_check_value(op, value) || cu_ix_check_mask(op, mask)) return -1;
  int nd;
  int64_t shape[MT_MAX_DIMS];
  if (mt_broadcast_shapes(op, x->ndim, x->shape, mask->ndim, mask->shape, &nd, shape)) return -1;
  mt_tensor xe = {}, me = {};
  if (mt_expand(&xe, x, nd, shape)) return -1;
  if (mt_expand(&me, mask, nd, shape)) {
    mt_tensor_release(&xe);
    return -1;
  }
  int dev = 0;
  char bits[8];
  int rc = cu_ix_device(op, x, mask, NULL, &dev);
  if (rc == 0) rc = cu_ix_value_bits(op, value, x->dtype, bits);
  if (rc == 0) rc = mt_tensor_init_on(op, r, x->dtype, nd, shape, MT_CUDA, dev);
  if (rc == 0) {
    const int64_t es = mt_dtypes[x->dtype].size;
    cu_ix_strides st = {};
    for (int d = 0; d < nd; d++) {
      st[0][d] = r->stride[d] * es;
      st[1][d] = xe.stride[d] * es;
      st[2][d] = me.stride[d];
    }
    cu_ix_geom g;
    cu_ix_geom_init(&g, nd, shape, st);
    char *pr = mt_data(r);
    const char *px = mt_data(&xe), *pm = mt_data(&me);
    rc = cu_ix_by_size(op, x->dtype, [&](auto tag) {
      typedef decltype(tag) T;
      cu_ix_mask_out_f<T> f = {pr, px, pm, T()};
      memcpy(&f.value, bits, sizeof(T));
      return cu_ix_launch<3>(op, &g, f, dev);
    });
    if (rc) mt_tensor_release(r);
  }
  mt_tensor_release(&xe);
  mt_tensor_release(&me);
  return rc ? -1 : 0;
}

/* ---- argmax, argmin ----
   x seen as kept dims (the outputs, row-major: r's order) around reduced
   dims (dim; or every dim, row-major, for the flattened form), both
   collapsed where contiguous, strides in bytes. The first extreme wins; a
   NaN beats every number (the first NaN then), compared in the compute
   type as the CPU's. Each output's extent is walked by a thread (short
   extents, or outputs adjacent in memory) or by a warp, cut into splits
   combined by a second kernel when there are too few outputs to fill the
   GPU. */
typedef struct {
  int nk, nr;
  int64_t O, R;
  int64_t kshape[MT_MAX_DIMS], kstride[MT_MAX_DIMS];
  int64_t rshape[MT_MAX_DIMS], rstride[MT_MAX_DIMS];
} cu_am_geom;

/* appends dims (shape, byte stride) to a list, merging into the last where
   contiguous and skipping size-1 dims; returns the new length */
static int cu_am_push(int n, int64_t *shape, int64_t *stride, int64_t size, int64_t st) {
  if (size == 1) return n;
  if (n > 0 && stride[n - 1] == size * st) {
    shape[n - 1] *= size;
    stride[n - 1] = st;
    return n;
  }
  shape[n] = size;
  stride[n] = st;
  return n + 1;
}

static __device__ __forceinline__ int64_t cu_am_off(int n, const int64_t *shape, const int64_t *stride, int64_t i) {
  int64_t off = 0;
  for (int d = n - 1; d > 0; d--) {
    const int64_t q = i / shape[d];
    off += (i - q * shape[d]) * stride[d];
    i = q;
  }
  return n > 0 ? off + i * stride[0] : 0;
}

template <class T> __device__ __forceinline__ bool cu_am_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) return v != v;
  else return false;
}

/* whether v at position iv beats w at iw */
template <class T> __device__ __forceinline__ bool cu_am_beats(T v, int64_t iv, T w, int64_t iw, int is_min) {
  const bool vn = cu_am_nan(v), wn = cu_am_nan(w);
  if (vn || wn) return vn && (!wn || iv < iw);
  if (is_min ? v < w : v > w) return true;
  return v == w && iv < iw;
}

template <class T> __device__ __forceinline__ T cu_am_shfl(T v, int delta) {
  if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value)
    return __shfl_down_sync(0xffffffffu, v, delta);
  else if constexpr (sizeof(T) == 8)
    return (T)__shfl_down_sync(0xffffffffu, (long long)v, delta);
  else
    return (T)__shfl_down_sync(0xffffffffu, (int)v, delta);
}

/* a thread per output, its extent in order */
template <int E>
__global__ void __launch_bounds__(CU_THREADS) cu_am_columns(cu_am_geom g, const char *x, int64_t *out, int is_min) {
  typedef typename cu_dt<E>::ct ct;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < g.O; o += step) {
    const char *p = x + cu_am_off(g.nk, g.kshape, g.kstride, o);
    ct best = cu_dt<E>::load(p);
    int64_t at = 0;
    for (int64_t r = 1; r < g.R; r++) {
      const ct v = cu_dt<E>::load(p + cu_am_off(g.nr, g.rshape, g.rstride, r));
      if (cu_am_beats(v, r, best, at, is_min)) {
        best = v;
        at = r;
      }
    }
    out[o] = at;
  }
}

/* a warp per output and split (chunk elements each): the final index to
   out when S is 1, else the split's best to pv, pi */
template <int E>
__global__ void __launch_bounds__(CU_THREADS)
    cu_am_rows(cu_am_geom g, const char *x, int64_t *out, typename cu_dt<E>::ct *pv, int64_t *pi, int64_t S,
               int64_t chunk, int is_min) {
  typedef typename cu_dt<E>::ct ct;
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t)gridDim.x * blockDim.x / 32;
  for (int64_t t = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; t < g.O * S; t += warps) {
    const int64_t o = t / S, s = t - o * S;
    const char *p = x + cu_am_off(g.nk, g.kshape, g.kstride, o);
    const int64_t r1 = (s + 1) * chunk < g.R ? (s + 1) * chunk : g.R;
    ct best = ct();
    int64_t at = -1;                   /* -1: nothing seen */
    for (int64_t r = s * chunk + lane; r < r1; r += 32) {
      const ct v = cu_dt<E>::load(p + cu_am_off(g.nr, g.rshape, g.rstride, r));
      if (at < 0 || cu_am_beats(v, r, best, at, is_min)) {
        best = v;
        at = r;
      }
    }
    for (int d = 16; d > 0; d >>= 1) {
      const ct v = cu_am_shfl(best, d);
      const int64_t iv = __shfl_down_sync(0xffffffffu, (long long)at, d);
      if (iv >= 0 && (at < 0 || cu_am_beats(v, iv, best, at, is_min))) {
        best = v;
        at = iv;
      }
    }
    if (lane == 0) {
      if (S == 1) {
        out[o] = at;
      } else {
        pv[t] = best;
        pi[t] = at;
      }
    }
  }
}

/* the splits of each output combined (every split holds an element) */
template <int E>
__global__ void __launch_bounds__(CU_THREADS)
    cu_am_combine(int64_t O, int64_t S, const typename cu_dt<E>::ct *pv, const int64_t *pi, int64_t *out,
                  int is_min) {
  typedef typename cu_dt<E>::ct ct;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t o = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; o < O; o += step) {
    ct best = pv[o * S];
    int64_t at = pi[o * S];
    for (int64_t s = 1; s < S; s++)
      if (cu_am_beats(pv[o * S + s], pi[o * S + s], best, at, is_min)) {
        best = pv[o * S + s];
        at = pi[o * S + s];
      }
    out[o] = at;
  }
}

static unsigned cu_am_blocks(int64_t threads) {
  int64_t b = (threads + CU_THREADS - 1) / CU_THREADS;
  return (unsigned)(b < 1 ? 1 : b > CU_MAX_BLOCKS ? CU_MAX_BLOCKS : b);
}

template <int E> static int cu_am_run(const char *op, const cu_am_geom *g, const char *x, int64_t *out, int is_min,
                                      int dev) {
  typedef typename cu_dt<E>::ct ct;
  cudaStream_t s = cu_stream(dev);
  const int64_t es = (int64_t)sizeof(typename cu_dt<E>::st);
  const int inner = g->nr == 1 && g->rstride[0] == es;
  /* a thread per output: short extents, or many outputs whose extents are
     not contiguous (neighbouring outputs then read neighbouring memory) */
  if (g->R <= 16 || (g->O >= 2048 && !inner)) {
    cu_am_columns<E><<<cu_am_blocks(g->O), CU_THREADS, 0, s>>>(*g, x, out, is_min);
    return CU_LAUNCHED(op);
  }
  /* a warp per output and split: splits of at least 1024 elements until
     about 8192 warps are busy */
  int64_t S = 1;
  if (g->O < 8192) {
    const int64_t want = (8192 + g->O - 1) / g->O, most = (g->R + 1023) / 1024;
    S = want < most ? want : most;
    if (S < 1) S = 1;
  }
  const int64_t chunk = (g->R + S - 1) / S;
  S = (g->R + chunk - 1) / chunk;
  if (S == 1) {
    cu_am_rows<E><<<cu_am_blocks(g->O * 32), CU_THREADS, 0, s>>>(*g, x, out, NULL, NULL, 1, chunk, is_min);
    return CU_LAUNCHED(op);
  }
  const size_t nv = (size_t)(g->O * S) * sizeof(ct), ni = (size_t)(g->O * S) * sizeof(int64_t);
  ct *pv = (ct *)cu_alloc(nv, dev);
  if (!pv) return -1;
  int64_t *pi = (int64_t *)cu_alloc(ni, dev);
  if (!pi) {
    cu_free(pv, nv, dev);
    return -1;
  }
  cu_am_rows<E><<<cu_am_blocks(g->O * S * 32), CU_THREADS, 0, s>>>(*g, x, out, pv, pi, S, chunk, is_min);
  int rc = CU_LAUNCHED(op);
  if (rc == 0) {
    cu_am_combine<E><<<cu_am_blocks(g->O), CU_THREADS, 0, s>>>(g->O, S, pv, pi, out, is_min);
    rc = CU_LAUNCHED(op);
  }
  cu_free(pv, nv, dev);
  cu_free(pi, ni, dev);
  return rc;
}

CU_EXTERN int cu_argmax(mt_tensor *r, const mt_tensor *x, int dim, int flatten, int keepdim, int is_min) {
  const char *name = is_min ? "argmin" : "argmax";
  char b[128];
  const int nd = x->ndim;
  const int64_t es = mt_dtypes[x->dtype].size;
  int64_t shape[MT_MAX_DIMS];
  int rnd = 0;
  cu_am_geom g;
  memset(&g, 0, sizeof g);
  if (!flatten) {
    if ((dim = mt_wrap_dim(name, dim, nd)) < 0) return -1;
    if (nd > 0 && x->shape[dim] == 0)
      return mt_fail("%s: reduction dim %d of a %s tensor is empty, and %s has no identity", name, dim + 1,
                     mt_shape_str(x, b, sizeof b), name);
    for (int d = 0; d < nd; d++) {
      if (d == dim) {
        g.nr = cu_am_push(g.nr, g.rshape, g.rstride, x->shape[d], x->stride[d] * es);
        if (keepdim) shape[rnd++] = 1;
      } else {
        g.nk = cu_am_push(g.nk, g.kshape, g.kstride, x->shape[d], x->stride[d] * es);
        shape[rnd++] = x->shape[d];
      }
    }
  } else {
    if (mt_numel(x) == 0)
      return mt_fail("%s: cannot take the %s of an empty tensor; specify a non-empty dim", name, name);
    for (int d = 0; d < nd; d++) {
      g.nr = cu_am_push(g.nr, g.rshape, g.rstride, x->shape[d], x->stride[d] * es);
      if (keepdim) shape[rnd++] = 1;
    }
  }
  g.O = g.R = 1;
  for (int d = 0; d < g.nk; d++) g.O *= g.kshape[d];
  for (int d = 0; d < g.nr; d++) g.R *= g.rshape[d];
  int dev = 0;
  if (cu_ix_device(name, x, NULL, NULL, &dev)) return -1;
  if (mt_tensor_init_on(name, r, MT_INT64, rnd, shape, MT_CUDA, dev)) return -1;
  if (g.O == 0) return 0;
  const char *px = mt_data(x);
  int64_t *out = (int64_t *)mt_data(r);
  int rc = cu_ix_by_dtype(name, x->dtype, [&](auto e) {
    return cu_am_run<decltype(e)::value>(name, &g, px, out, is_min, dev);
  });
  if (rc) mt_tensor_release(r);
  return rc ? -1 : 0;
}
