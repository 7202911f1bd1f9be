/* cu_sort.cu: the selections (sort, topk, kthvalue, median, mode) and
   nonzero on the GPU, on CUB. mt_reduce.c and mt_index.c check the calls
   and hand over (mt_device_extra's select_along and nonzero); the results
   are the CPU's: slices sorted ascending with NaN last (descending: NaN
   first), ties in index order, the same picks. */
#include <stdint.h>
#include <string.h>
#include <math.h>
#include <cub/device/device_segmented_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include "cu_loop.cuh"

/* A scratch tensor of n bytes on the device (the caching allocator's). */
static int cu_scratch(mt_tensor *t, const char *op, int64_t n, int index) {
  if (n < 1) n = 1;
  return mt_tensor_init_on(op, t, MT_UINT8, 1, &n, MT_CUDA, index);
}

static inline unsigned cu_blocks(int64_t n) {
  int64_t b = (n + CU_THREADS - 1) / CU_THREADS;
  return (unsigned)(b < 1 ? 1 : b > CU_MAX_BLOCKS ? CU_MAX_BLOCKS : b);
}

/* ---- keys that order as the CPU's comparisons do ----
   An unsigned 64-bit key per element: a float as its double's bits turned
   so that unsigned order is numeric order, -0.0 as +0.0 (they tie) and
   every NaN as the largest key (last ascending, first descending, ties in
   index order among them); an integer with its sign bit flipped. */
#define CU_NAN_KEY UINT64_MAX
template <int E> __device__ __forceinline__ uint64_t cu_sort_key(const char *p) {
  typedef typename cu_dt<E>::ct ct;
  const ct v = cu_dt<E>::load(p);
  if constexpr (std::is_floating_point<ct>::value) {
    double d = (double)v;
    if (d != d) return CU_NAN_KEY;
    if (d == 0) d = 0;
    const uint64_t bits = (uint64_t)__double_as_longlong(d);
    return (bits >> 63) ? ~bits : bits | (1ull << 63);
  } else {
    return (uint64_t)(int64_t)v ^ (1ull << 63);
  }
}

/* keys of a contiguous run, and each element's index in its slice of n */
template <int E> __global__ void cu_sort_keys(const char *x, int64_t total, int64_t n, uint64_t *keys, int64_t *idx) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    keys[i] = cu_sort_key<E>(x + i * (int64_t)sizeof(typename cu_dt<E>::st));
    idx[i] = i % n;
  }
}

__global__ void cu_segment_offsets(int *off, int64_t segments, int64_t n) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i <= segments; i += step) off[i] = (int)(i * n);
}

/* Per slice s of n sorted keys: the position that op picks (mt_reduce.c's
   sel_pick): k; the median (n - 1) / 2, or the first NaN when there is one;
   the mode, the last element of the first longest run (a NaN never equals
   another), then M results copied from the slice's elements (x: the slice
   contiguous, es bytes each). */
__global__ void cu_select_pick(const uint64_t *keys, const int64_t *idx, const char *x, int64_t slices, int64_t n,
                               int64_t M, int op, int64_t k, int is_float, int es, char *values, int64_t *indices) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; s < slices; s += step) {
    const uint64_t *ks = keys + s * n;
    int64_t first = 0;
    if (op == MT_SEL_KTH) {
      first = k;
    } else if (op == MT_SEL_MEDIAN) {
      first = (n - 1) / 2;
      if (is_float && ks[n - 1] == CU_NAN_KEY) {
        first = n - 1;
        while (first > 0 && ks[first - 1] == CU_NAN_KEY) first--;
      }
    } else if (op == MT_SEL_MODE) {
      int64_t best_count = 0;
      for (int64_t i = 0; i < n;) {
        int64_t j = i + 1;
        if (!(is_float && ks[i] == CU_NAN_KEY))
          while (j < n && ks[j] == ks[i]) j++;
        if (j - i > best_count) { best_count = j - i; first = j - 1; }
        i = j;
      }
    }
    for (int64_t m = 0; m < M; m++) {
      const int64_t src = idx[s * n + first + m], o = s * M + m;
      memcpy(values + o * es, x + (s * n + src) * es, (size_t)es);
      indices[o] = src;
    }
  }
}

template <int E> static void cu_sort_keys_launch(const char *x, int64_t total, int64_t n, uint64_t *keys, int64_t *idx,
                                                 cudaStream_t s) {
  cu_sort_keys<E><<<cu_blocks(total), CU_THREADS, 0, s>>>(x, total, n, keys, idx);
}

CU_EXTERN int cu_select_along(mt_tensor *values, mt_tensor *indices, const mt_tensor *x, int dim, mt_sel_op op,
                              int64_t M, int64_t k, int descending, int keepdim) {
  const char *name = op == MT_SEL_SORTED ? "sort" : op == MT_SEL_KTH ? "kthvalue" : op == MT_SEL_MEDIAN ? "median"
                                                                                                       : "mode";
  const int index = mt_device_index_of(x);
  if (cu_set_device(name, index)) return -1;
  const int nd = x->ndim, last = nd ? nd - 1 : 0;
  const int64_t n = nd ? x->shape[dim] : 1, total = mt_numel(x), slices = n ? total / n : 0;
  /* the result's shape with dim last, as the slices are laid out */
  int64_t shape[MT_MAX_DIMS];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)nd);
  if (nd) { shape[dim] = shape[last]; shape[last] = M; }
  if (total > INT32_MAX)
    return mt_fail("%s: %lld elements; the GPU's sort takes at most 2^31 - 1 at once", name, (long long)total);
  mt_tensor xt = {}, xc = {}, vt = {}, it = {}, keys = {}, keys2 = {}, idx = {}, idx2 = {}, off = {}, temp = {};
  int rc = mt_tensor_init_on(name, &vt, x->dtype, nd, shape, MT_CUDA, index) ||
           mt_tensor_init_on(name, &it, MT_INT64, nd, shape, MT_CUDA, index);
  if (!rc && total > 0 && M > 0) {
    rc = (nd ? mt_transpose(&xt, x, dim, last) : mt_contiguous(&xt, x)) || mt_contiguous(&xc, &xt);
    const int64_t ts[1] = {total}, os[1] = {slices + 1};
    rc = rc || mt_tensor_init_on(name, &keys, MT_INT64, 1, ts, MT_CUDA, index) ||
         mt_tensor_init_on(name, &keys2, MT_INT64, 1, ts, MT_CUDA, index) ||
         mt_tensor_init_on(name, &idx, MT_INT64, 1, ts, MT_CUDA, index) ||
         mt_tensor_init_on(name, &idx2, MT_INT64, 1, ts, MT_CUDA, index) ||
         mt_tensor_init_on(name, &off, MT_INT32, 1, os, MT_CUDA, index);
    cudaStream_t s = cu_stream(index);
    if (!rc) {
      switch (x->dtype) {
#define CU_KEYS_CASE(E, T, N, TN, K) \
  case MT_##E: cu_sort_keys_launch<MT_##E>(mt_data(&xc), total, n, (uint64_t *)mt_data(&keys), (int64_t *)mt_data(&idx), s); break;
        MT_DTYPES(CU_KEYS_CASE)
#undef CU_KEYS_CASE
      }
      cu_segment_offsets<<<cu_blocks(slices + 1), CU_THREADS, 0, s>>>((int *)mt_data(&off), slices, n);
      rc = CU_LAUNCHED(name);
    }
    const uint64_t *kin = (const uint64_t *)mt_data(&keys);
    uint64_t *kout = (uint64_t *)mt_data(&keys2);
    const int64_t *iin = (const int64_t *)mt_data(&idx);
    int64_t *iout = (int64_t *)mt_data(&idx2);
    const int *ob = (const int *)mt_data(&off);
    size_t bytes = 0;
    if (!rc)
      rc = cu_fail(name, descending ? cub::DeviceSegmentedRadixSort::SortPairsDescending(
                                          nullptr, bytes, kin, kout, iin, iout, (int)total, (int)slices, ob, ob + 1, 0,
                                          64, s)
                                    : cub::DeviceSegmentedRadixSort::SortPairs(nullptr, bytes, kin, kout, iin, iout,
                                                                               (int)total, (int)slices, ob, ob + 1, 0,
                                                                               64, s));
    rc = rc || cu_scratch(&temp, name, (int64_t)bytes, index);
    if (!rc)
      rc = cu_fail(name, descending ? cub::DeviceSegmentedRadixSort::SortPairsDescending(
                                          mt_data(&temp), bytes, kin, kout, iin, iout, (int)total, (int)slices, ob,
                                          ob + 1, 0, 64, s)
                                    : cub::DeviceSegmentedRadixSort::SortPairs(mt_data(&temp), bytes, kin, kout, iin,
                                                                               iout, (int)total, (int)slices, ob,
                                                                               ob + 1, 0, 64, s));
    if (!rc) {
      cu_select_pick<<<cu_blocks(slices), CU_THREADS, 0, s>>>(
          kout, iout, mt_data(&xc), slices, n, M, (int)op, k, mt_dtype_is_float((mt_dtype)x->dtype),
          mt_dtypes[x->dtype].size, mt_data(&vt), (int64_t *)mt_data(&it));
      rc = CU_LAUNCHED(name);
    }
  }
  /* dim back in its place, contiguous as the CPU's results */
  mt_tensor vb = {}, ib = {};
  rc = rc || (nd ? mt_transpose(&vb, &vt, dim, last) || mt_transpose(&ib, &it, dim, last)
              : mt_contiguous(&vb, &vt) || mt_contiguous(&ib, &it)) || mt_contiguous(values, &vb) ||
       mt_contiguous(indices, &ib);
  if (!rc && !keepdim && M == 1 && nd) {
    mt_tensor a = *values, b = *indices;
    mt_tensor sv = {}, si = {};
    rc = mt_squeeze(&sv, &a, dim) || mt_squeeze(&si, &b, dim);
    mt_tensor_release(values);
    mt_tensor_release(indices);
    *values = sv;
    *indices = si;
  }
  mt_tensor *all[] = {&xt, &xc, &vt, &it, &keys, &keys2, &idx, &idx2, &off, &temp, &vb, &ib};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_tensor_release(all[i]);
  return rc ? -1 : 0;
}

/* ---- nonzero ---- */
/* flags[i] = x[i] != 0 over a contiguous run (a NaN is nonzero, -0.0 zero), idx[i] = i */
template <int E> __global__ void cu_nonzero_flags(const char *x, int64_t total, uint8_t *flags, int64_t *idx) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < total; i += step) {
    flags[i] = cu_dt<E>::load(x + i * (int64_t)sizeof(typename cu_dt<E>::st)) != 0;
    idx[i] = i;
  }
}

/* the flat positions (row-major) as coordinates, base added */
struct cu_unravel_shape {
  int ndim;
  int64_t shape[MT_MAX_DIMS];
};
__global__ void cu_unravel(const int64_t *pos, int64_t count, cu_unravel_shape sh, int64_t base, int64_t *out) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step) {
    int64_t rem = pos[i];
    for (int d = sh.ndim - 1; d >= 0; d--) {
      out[i * sh.ndim + d] = rem % sh.shape[d] + base;
      rem /= sh.shape[d];
    }
  }
}

template <int E> static void cu_flags_launch(const char *x, int64_t total, uint8_t *flags, int64_t *idx,
                                             cudaStream_t s) {
  cu_nonzero_flags<E><<<cu_blocks(total), CU_THREADS, 0, s>>>(x, total, flags, idx);
}

CU_EXTERN int cu_nonzero(mt_tensor *r, const mt_tensor *x, int64_t base) {
  const char *name = "nonzero";
  const int index = mt_device_index_of(x);
  if (cu_set_device(name, index)) return -1;
  const int64_t total = mt_numel(x);
  mt_tensor xc = {}, flags = {}, idx = {}, pos = {}, count = {}, temp = {};
  int64_t found = 0;
  int rc = 0;
  if (total > 0) {
    const int64_t ts[1] = {total}, one[1] = {1};
    rc = mt_contiguous(&xc, x) || mt_tensor_init_on(name, &flags, MT_UINT8, 1, ts, MT_CUDA, index) ||
         mt_tensor_init_on(name, &idx, MT_INT64, 1, ts, MT_CUDA, index) ||
         mt_tensor_init_on(name, &pos, MT_INT64, 1, ts, MT_CUDA, index) ||
         mt_tensor_init_on(name, &count, MT_INT64, 1, one, MT_CUDA, index);
    cudaStream_t s = cu_stream(index);
    if (!rc) {
      switch (x->dtype) {
#define CU_FLAGS_CASE(E, T, N, TN, K) \
  case MT_##E: cu_flags_launch<MT_##E>(mt_data(&xc), total, (uint8_t *)mt_data(&flags), (int64_t *)mt_data(&idx), s); break;
        MT_DTYPES(CU_FLAGS_CASE)
#undef CU_FLAGS_CASE
      }
      rc = CU_LAUNCHED(name);
    }
    size_t bytes = 0;
    const int64_t *in = (const int64_t *)mt_data(&idx);
    const uint8_t *fl = (const uint8_t *)mt_data(&flags);
    int64_t *out = (int64_t *)mt_data(&pos), *num = (int64_t *)mt_data(&count);
    if (!rc) rc = cu_fail(name, cub::DeviceSelect::Flagged(nullptr, bytes, in, fl, out, num, total, s));
    rc = rc || cu_scratch(&temp, name, (int64_t)bytes, index);
    if (!rc) rc = cu_fail(name, cub::DeviceSelect::Flagged(mt_data(&temp), bytes, in, fl, out, num, total, s));
    if (!rc) rc = cu_fail(name, cudaMemcpyAsync(&found, num, sizeof found, cudaMemcpyDeviceToHost, s));
    if (!rc) rc = cu_fail(name, cudaStreamSynchronize(s));
  }
  const int64_t shape[2] = {found, x->ndim};
  rc = rc || mt_tensor_init_on(name, r, MT_INT64, 2, shape, MT_CUDA, index);
  if (!rc && found > 0 && x->ndim > 0) {
    cu_unravel_shape sh;
    sh.ndim = x->ndim;
    memcpy(sh.shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
    cu_unravel<<<cu_blocks(found), CU_THREADS, 0, cu_stream(index)>>>((const int64_t *)mt_data(&pos), found, sh, base,
                                                                     (int64_t *)mt_data(r));
    rc = CU_LAUNCHED(name);
  }
  mt_tensor *all[] = {&xc, &flags, &idx, &pos, &count, &temp};
  for (size_t i = 0; i < sizeof all / sizeof *all; i++) mt_tensor_release(all[i]);
  return rc ? -1 : 0;
}
