/* cu_loop.cuh: the elementwise launcher of the CUDA kernels (cu_pointwise.cu,
   cu_copy.cu): per-dtype loads and stores, and one templated kernel that
   walks an output and up to two inputs of a cu_geom (cu.h), TensorIterator
   style. C++ only: included by .cu files. */
#ifndef MT_CU_LOOP_CUH
#define MT_CU_LOOP_CUH

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <limits.h>
#include <type_traits>
#include "cu.h"

/* Threads per block, and the most blocks a launch takes: a larger tensor is
   walked by a grid-stride loop (65536 blocks of 256 fill any GPU many times). */
#define CU_THREADS 256
#define CU_MAX_BLOCKS 65536

/* ---- conversions with the CPU's results ----
   The CPU build converts a float to an integer with x86's cvtt instructions:
   through int32 for the narrow types (the low bits kept), and the most
   negative value ("integer indefinite") for NaN and whatever is out of
   range, where a GPU would saturate. The same here, so that a copy gives the
   same bits on both devices. */
template <class T, class V> __device__ __forceinline__ T cu_to_int(V v) {
  if constexpr (std::is_floating_point<V>::value) {
    const double d = (double)v;
    if constexpr (sizeof(T) == 8)
      return d >= -9223372036854775808.0 && d < 9223372036854775808.0 ? (int64_t)d : INT64_MIN;
    else
      return (T)(d > -2147483649.0 && d < 2147483648.0 ? (int32_t)d : INT32_MIN);
  } else {
    return (T)v;
  }
}
template <class V> __device__ __forceinline__ bool cu_to_bool(V v) { return v != 0; }

/* ---- dtypes: storage type, compute type (MT_CT_* of mt_kernel.h: half and
   bfloat16 compute in float), load and store ---- */
template <int E> struct cu_dt;
#define CU_DT(E, ST, CT, LOAD, STORE)                                                          \
  template <> struct cu_dt<MT_##E> {                                                           \
    typedef ST st;                                                                             \
    typedef CT ct;                                                                             \
    static __device__ __forceinline__ ct load(const char *p) { return LOAD; }                  \
    template <class V> static __device__ __forceinline__ void store(char *p, V v) { STORE; }   \
  };
CU_DT(FLOAT32, float, float, *(const float *)p, *(float *)p = (float)v)
CU_DT(FLOAT64, double, double, *(const double *)p, *(double *)p = (double)v)
CU_DT(FLOAT16, uint16_t, float, __half2float(__ushort_as_half(*(const unsigned short *)p)),
      *(unsigned short *)p = __half_as_ushort(__float2half_rn((float)v)))
CU_DT(BFLOAT16, uint16_t, float, __bfloat162float(__ushort_as_bfloat16(*(const unsigned short *)p)),
      *(unsigned short *)p = __bfloat16_as_ushort(__float2bfloat16_rn((float)v)))
CU_DT(INT8, int8_t, int8_t, *(const int8_t *)p, *(int8_t *)p = cu_to_int<int8_t>(v))
CU_DT(UINT8, uint8_t, uint8_t, *(const uint8_t *)p, *(uint8_t *)p = cu_to_int<uint8_t>(v))
CU_DT(INT16, int16_t, int16_t, *(const int16_t *)p, *(int16_t *)p = cu_to_int<int16_t>(v))
CU_DT(INT32, int32_t, int32_t, *(const int32_t *)p, *(int32_t *)p = cu_to_int<int32_t>(v))
CU_DT(INT64, int64_t, int64_t, *(const int64_t *)p, *(int64_t *)p = cu_to_int<int64_t>(v))
CU_DT(BOOL, bool, bool, *(const bool *)p, *(bool *)p = cu_to_bool(v))
#undef CU_DT

/* The value of a scalar stored in dtype E (mt_set_f64 / mt_set_i64 wrote it,
   as the CPU's kernels read it), in E's compute type. */
template <int E> static inline typename cu_dt<E>::ct cu_scalar_value(const char *bits) {
  typedef typename cu_dt<E>::ct ct;
  return mt_dtype_is_float((mt_dtype)E) ? (ct)mt_get_f64(E, bits) : (ct)mt_get_i64(E, bits);
}

/* ---- geometry in the kernel's index type ----
   32-bit index math (a third of the 64-bit division's cost) when the
   element count and every byte offset fit in int32. */
template <class IDX> struct cu_geom_k {
  typedef typename std::make_signed<IDX>::type off;
  int ndim;
  IDX numel;
  IDX shape[MT_MAX_DIMS];
  off stride[3][MT_MAX_DIMS];
};

static inline int cu_geom_fits32(const cu_geom *g) {
  if (g->numel > INT32_MAX) return 0;
  for (int k = 0; k < g->nops; k++) {
    int64_t extent = 0;
    for (int d = 0; d < g->ndim; d++) {
      int64_t s = g->stride[k][d] < 0 ? -g->stride[k][d] : g->stride[k][d];
      if (g->shape[d] > 1) extent += (g->shape[d] - 1) * s;
      if (extent > INT32_MAX) return 0;
    }
  }
  return 1;
}

template <class IDX> static inline cu_geom_k<IDX> cu_geom_to(const cu_geom *g) {
  cu_geom_k<IDX> k;
  memset(&k, 0, sizeof k);
  k.ndim = g->ndim;
  k.numel = (IDX)g->numel;
  for (int d = 0; d < g->ndim; d++) {
    k.shape[d] = (IDX)g->shape[d];
    for (int o = 0; o < g->nops && o < 3; o++)
      k.stride[o][d] = g->shape[d] > 1 ? (typename cu_geom_k<IDX>::off)g->stride[o][d] : 0;
  }
  return k;
}

/* The geometry of up to four operands (out and three inputs: where's
   condition and its two sides, the ternary ops with parameters), and each
   operand's byte offset at element i. */
template <class IDX> struct cu_geom_k4 {
  typedef typename std::make_signed<IDX>::type off;
  int ndim;
  IDX numel;
  IDX shape[MT_MAX_DIMS];
  off stride[4][MT_MAX_DIMS];
};

template <class IDX> static inline cu_geom_k4<IDX> cu_geom4_to(const cu_geom *g) {
  cu_geom_k4<IDX> k;
  memset(&k, 0, sizeof k);
  k.ndim = g->ndim;
  k.numel = (IDX)g->numel;
  for (int d = 0; d < g->ndim; d++) {
    k.shape[d] = (IDX)g->shape[d];
    for (int o = 0; o < g->nops && o < 4; o++)
      k.stride[o][d] = g->shape[d] > 1 ? (typename cu_geom_k4<IDX>::off)g->stride[o][d] : 0;
  }
  return k;
}

template <class IDX>
__device__ __forceinline__ void cu_offsets4(const cu_geom_k4<IDX> &g, IDX i, typename cu_geom_k4<IDX>::off *o) {
  typedef typename cu_geom_k4<IDX>::off off;
  if (g.ndim == 1) {
    for (int k = 0; k < 4; k++) o[k] = (off)i * g.stride[k][0];
    return;
  }
  IDX rem = i;
  for (int k = 0; k < 4; k++) o[k] = 0;
  for (int d = g.ndim - 1; d > 0; d--) {
    const IDX q = rem / g.shape[d];
    const off at = (off)(rem - q * g.shape[d]);
    rem = q;
    for (int k = 0; k < 4; k++) o[k] += at * g.stride[k][d];
  }
  for (int k = 0; k < 4; k++) o[k] += (off)rem * g.stride[k][0];
}

/* The inputs that are numbers rather than tensors: bit k of mask for input
   k, whose value (in the compute type) is value[k]; its pointer is unused. */
template <class ct> struct cu_scalars {
  ct value[2];
  int mask;
};

/* out = F(in0[, in1, p1]) over g: inputs load as dtype E's compute type, the
   result stores as dtype OE. A collapsed geometry of one dim (every operand
   contiguous, or a stride-0 one) takes the plain multiply. */
template <class F, int E, int OE, int NIN, class IDX>
__global__ void __launch_bounds__(CU_THREADS)
    cu_elementwise(cu_geom_k<IDX> g, char *out, const char *in0, const char *in1,
                   cu_scalars<typename cu_dt<E>::ct> sc, typename cu_dt<E>::ct p1) {
  typedef typename cu_dt<E>::ct ct;
  typedef typename cu_geom_k<IDX>::off off;
  const IDX step = (IDX)gridDim.x * blockDim.x;
  for (IDX i = (IDX)blockIdx.x * blockDim.x + threadIdx.x; i < g.numel; i += step) {
    off o0, o1, o2;
    if (g.ndim == 1) {
      o0 = (off)i * g.stride[0][0];
      o1 = (off)i * g.stride[1][0];
      o2 = NIN > 1 ? (off)i * g.stride[2][0] : 0;
    } else {
      IDX rem = i;
      o0 = o1 = o2 = 0;
      for (int d = g.ndim - 1; d > 0; d--) {
        const IDX q = rem / g.shape[d];
        const off at = (off)(rem - q * g.shape[d]);
        rem = q;
        o0 += at * g.stride[0][d];
        o1 += at * g.stride[1][d];
        if (NIN > 1) o2 += at * g.stride[2][d];
      }
      o0 += (off)rem * g.stride[0][0];
      o1 += (off)rem * g.stride[1][0];
      if (NIN > 1) o2 += (off)rem * g.stride[2][0];
    }
    const ct a = (sc.mask & 1) ? sc.value[0] : cu_dt<E>::load(in0 + o1);
    if constexpr (NIN == 1) {
      cu_dt<OE>::store(out + o0, F()(a));
    } else {
      const ct b = (sc.mask & 2) ? sc.value[1] : cu_dt<E>::load(in1 + o2);
      cu_dt<OE>::store(out + o0, F()(a, b, p1));
    }
  }
}

/* The contiguous case with vector loads: every tensor operand a dense run
   aligned to 16 bytes, each thread taking VEC neighbours at once (one 16-byte
   load or store per operand where the dtype allows: 4 floats, 8 halves);
   the last numel % VEC elements go to the first threads of block 0. */
template <class T, int N> struct alignas(sizeof(T) * N <= 16 ? sizeof(T) * N : 16) cu_vec { T v[N]; };

template <class F, int E, int OE, int NIN, int VEC>
__global__ void __launch_bounds__(CU_THREADS)
    cu_elementwise_vec(int64_t numel, char *out, const char *in0, const char *in1,
                       cu_scalars<typename cu_dt<E>::ct> sc, typename cu_dt<E>::ct p1) {
  typedef typename cu_dt<E>::ct ct;
  typedef typename cu_dt<E>::st ist;
  typedef typename cu_dt<OE>::st ost;
  typedef cu_vec<ist, VEC> ivec;
  typedef cu_vec<ost, VEC> ovec;
  const int64_t nvec = numel / VEC, step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; v < nvec; v += step) {
    ivec A, B;
    ovec O;
    if (!(sc.mask & 1)) A = ((const ivec *)in0)[v];
    if (NIN > 1 && !(sc.mask & 2)) B = ((const ivec *)in1)[v];
#pragma unroll
    for (int k = 0; k < VEC; k++) {
      const ct a = (sc.mask & 1) ? sc.value[0] : cu_dt<E>::load((const char *)&A.v[k]);
      if constexpr (NIN == 1) {
        cu_dt<OE>::store((char *)&O.v[k], F()(a));
      } else {
        const ct b = (sc.mask & 2) ? sc.value[1] : cu_dt<E>::load((const char *)&B.v[k]);
        cu_dt<OE>::store((char *)&O.v[k], F()(a, b, p1));
      }
    }
    ((ovec *)out)[v] = O;
  }
  const int64_t i = nvec * VEC + threadIdx.x;
  if (blockIdx.x == 0 && i < numel) {
    const ct a = (sc.mask & 1) ? sc.value[0] : cu_dt<E>::load(in0 + i * (int64_t)sizeof(ist));
    if constexpr (NIN == 1) {
      cu_dt<OE>::store(out + i * (int64_t)sizeof(ost), F()(a));
    } else {
      const ct b = (sc.mask & 2) ? sc.value[1] : cu_dt<E>::load(in1 + i * (int64_t)sizeof(ist));
      cu_dt<OE>::store(out + i * (int64_t)sizeof(ost), F()(a, b, p1));
    }
  }
}

/* Launches cu_elementwise over g (operands: out, in0[, in1]) on device
   index's stream; 0, or -1 with the launch's error named by op. */
template <class F, int E, int OE, int NIN>
static int cu_launch(const char *op, const cu_geom *g, char *out, const char *in0, const char *in1,
                     cu_scalars<typename cu_dt<E>::ct> sc, typename cu_dt<E>::ct p1, int index) {
  if (g->numel == 0) return 0;
  cudaStream_t s = cu_stream(index);
  typedef typename cu_dt<E>::st ist;
  typedef typename cu_dt<OE>::st ost;
  constexpr int W = sizeof(ist) > sizeof(ost) ? (int)sizeof(ist) : (int)sizeof(ost);
  constexpr int VEC = 16 / W;
  auto dense = [&](int k, const char *p) {          /* operand k a 16-byte-aligned dense run */
    const int64_t es = k == 0 ? (int64_t)sizeof(ost) : (int64_t)sizeof(ist);
    return g->stride[k][0] == es && ((uintptr_t)p & 15) == 0;
  };
  if (VEC > 1 && g->ndim == 1 && g->numel >= VEC && dense(0, out) && ((sc.mask & 1) || dense(1, in0)) &&
      (NIN < 2 || (sc.mask & 2) || dense(2, in1))) {
    int64_t blocks = (g->numel / VEC + CU_THREADS - 1) / CU_THREADS;
    if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
    cu_elementwise_vec<F, E, OE, NIN, VEC><<<(unsigned)blocks, CU_THREADS, 0, s>>>(g->numel, out, in0, in1, sc, p1);
    return CU_LAUNCHED(op);
  }
  int64_t blocks = (g->numel + CU_THREADS - 1) / CU_THREADS;
  if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
  if (cu_geom_fits32(g))
    cu_elementwise<F, E, OE, NIN, uint32_t>
        <<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_geom_to<uint32_t>(g), out, in0, in1, sc, p1);
  else
    cu_elementwise<F, E, OE, NIN, uint64_t>
        <<<(unsigned)blocks, CU_THREADS, 0, s>>>(cu_geom_to<uint64_t>(g), out, in0, in1, sc, p1);
  return CU_LAUNCHED(op);
}

/* The identity: a converting copy is cu_elementwise of it from one dtype to another. */
struct cu_identity {
  template <class ct> __device__ __forceinline__ ct operator()(ct v) const { return v; }
};

#endif
