/* cu_reduce.cu: the registry's reductions (sum, mean, var, norm, ...) and
   its ops along a dim (cumsum, cumprod, softmax, log_softmax) on the GPU,
   with the semantics of mt_reduce.c: the same result shapes and dtypes, the
   same errors (mt_reduce_prepare is shared), the same passes.

   A reduction sees x as kept dims around one reduced extent of R elements
   at stride rs (reduced dims that do not merge into one are copied last and
   contiguous first, as the CPU does). Each pass reduces every output's
   extent, cut into S splits when there are too few outputs to fill the GPU
   (the splits' states are then combined in order by a second kernel):
     - rows: a warp (R <= 1024) or a block of 256 threads per output and
       split, the threads striding along the extent (rs 1: coalesced);
     - columns: a thread per output, 8 threads splitting the extent between
       them, when the outputs are adjacent in memory (coalesced along the
       outputs) or the extent is short.
   Two-pass ops (var and std: the mean, then squared deviations; logsumexp:
   the max, then the sum of exp(x - max)) write the first pass's value per
   output to a buffer the second reads. Sums accumulate in float for
   float32/float16/bfloat16, double for float64, wrapping uint64 for
   integers and bool; max/min compare in the compute type, a NaN winning. */
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cub/block/block_scan.cuh>
#include <climits>
#include <cmath>
#include <type_traits>
#include "cu.h"

extern "C" {
#include "../tensor/mt_reduce.h"
#include "../tensor/mt_reduce_plan.h"
}

/* ---- dtypes: storage types and loads ---- */
/* half and bfloat16 are stored as bits; distinct types pick their loads */
struct half_t { uint16_t bits; };
struct bf16_t { uint16_t bits; };

/* ct: the compute type of a load; acc: what a float sum accumulates in */
template <typename T> struct DT {           /* integers and bool */
  typedef long long ct;
  typedef long long acc;
  static constexpr bool isf = false;
  __device__ static ct load(const T *p) { return (ct)*p; }
};
template <> struct DT<float> {
  typedef float ct;
  typedef float acc;
  static constexpr bool isf = true;
  __device__ static ct load(const float *p) { return *p; }
};
template <> struct DT<double> {
  typedef double ct;
  typedef double acc;
  static constexpr bool isf = true;
  __device__ static ct load(const double *p) { return *p; }
};
template <> struct DT<half_t> {
  typedef float ct;
  typedef float acc;
  static constexpr bool isf = true;
  __device__ static ct load(const half_t *p) { return __half2float(__ushort_as_half(p->bits)); }
};
template <> struct DT<bf16_t> {
  typedef float ct;
  typedef float acc;
  static constexpr bool isf = true;
  __device__ static ct load(const bf16_t *p) { return __bfloat162float(__ushort_as_bfloat16(p->bits)); }
};

/* Stores a float value (double: converted to float first for the half
   types, as mt_set_f64 does) or an integer one. */
template <typename T> __device__ inline void store_f(T *p, double v) { *p = (T)v; }
template <> __device__ inline void store_f<half_t>(half_t *p, double v) {
  p->bits = __half_as_ushort(__float2half_rn((float)v));
}
template <> __device__ inline void store_f<bf16_t>(bf16_t *p, double v) {
  p->bits = __bfloat16_as_ushort(__float2bfloat16_rn((float)v));
}
template <typename T> __device__ inline void store_i(T *p, long long v) { *p = (T)v; }
template <> __device__ inline void store_i<half_t>(half_t *p, long long v) { store_f(p, (double)v); }
template <> __device__ inline void store_i<bf16_t>(bf16_t *p, long long v) { store_f(p, (double)v); }

/* Calls F::template run<T>(args...) for the storage type of dtype. */
#define CU_DTYPE_CASES(X)                                                                     \
  X(MT_FLOAT32, float) X(MT_FLOAT64, double) X(MT_FLOAT16, half_t) X(MT_BFLOAT16, bf16_t)     \
  X(MT_INT8, int8_t) X(MT_UINT8, uint8_t) X(MT_INT16, int16_t) X(MT_INT32, int32_t)           \
  X(MT_INT64, int64_t) X(MT_BOOL, bool)

/* the result's element o: an integer value (is_int) or a float one */
__device__ inline void store_out(int dtype, void *out, long long o, bool is_int, double f, long long i) {
  switch (dtype) {
#define CU_STORE_CASE(E, T)                                                                   \
  case E:                                                                                     \
    if (is_int) store_i((T *)out + o, i);                                                     \
    else store_f((T *)out + o, f);                                                            \
    break;
    CU_DTYPE_CASES(CU_STORE_CASE)
#undef CU_STORE_CASE
  default: break;
  }
}

/* float math by the accumulator's type */
__device__ inline float d_exp(float v) { return expf(v); }
__device__ inline double d_exp(double v) { return exp(v); }
__device__ inline float d_log(float v) { return logf(v); }
__device__ inline double d_log(double v) { return log(v); }
__device__ inline float d_abs(float v) { return fabsf(v); }
__device__ inline double d_abs(double v) { return fabs(v); }
__device__ inline float d_pow(float v, float p) { return powf(v, p); }
__device__ inline double d_pow(double v, double p) { return pow(v, p); }

/* ---- the passes: mt_reduce_plan.h's kinds (the CPU's, plus |x| max/min
   for norm's +-inf), and the registry's entries from its one table ---- */

/* A pass K over dtype T: its state S (float passes of float dtypes in acc;
   integer sums and products in uint64, wrapping; counts in uint64; integer
   max/min in int64), the state of no elements, one element's state, and
   how two states combine. m is the first pass's value for this output,
   p the norm order. */
template <typename T, int K> struct Pass {
  typedef DT<T> D;
  typedef typename D::ct ct;
  static constexpr bool isf = D::isf;
  static constexpr bool ext = K == K_MAX || K == K_MIN || K == K_MAXABS || K == K_MINABS;
  static constexpr bool is_int = K == K_NONZERO || (!isf && K <= K_MIN);
  typedef typename std::conditional<
      K == K_NONZERO || (!isf && !ext), unsigned long long,
      typename std::conditional<isf, typename D::acc, long long>::type>::type S;

  __device__ static S ident() {
    if constexpr (K == K_PROD) return (S)1;
    else if constexpr (K == K_MAX || K == K_MAXABS) {
      if constexpr (isf) return (S)-INFINITY;
      else return LLONG_MIN;
    } else if constexpr (K == K_MIN || K == K_MINABS) {
      if constexpr (isf) return (S)INFINITY;
      else return LLONG_MAX;
    } else return (S)0;
  }
  __device__ static S map(ct v, S m, S p) {
    if constexpr (K == K_NONZERO) return v != 0 ? 1ull : 0ull;
    else if constexpr (!isf) return (S)v;               /* integers: sums, products, max/min */
    else if constexpr (K == K_NANSUM) return v != v ? (S)0 : (S)v;
    else if constexpr (K == K_SQDEV) { S d = (S)v - m; return d * d; }
    else if constexpr (K == K_ABSSUM || K == K_MAXABS || K == K_MINABS) return d_abs((S)v);
    else if constexpr (K == K_POWSUM) return d_pow(d_abs((S)v), p);
    else if constexpr (K == K_EXPSUM) return d_exp((S)v - m);
    else return (S)v;
  }
  __device__ static S comb(S a, S b) {
    if constexpr (K == K_PROD) return a * b;
    else if constexpr (K == K_MAX || K == K_MAXABS) {
      if constexpr (isf) { if (a != a) return a; if (b != b) return b; }
      return b > a ? b : a;
    } else if constexpr (K == K_MIN || K == K_MINABS) {
      if constexpr (isf) { if (a != a) return a; if (b != b) return b; }
      return b < a ? b : a;
    } else return a + b;
  }
  __device__ static double to_f(S s) { return (double)s; }
  __device__ static long long to_i(S s) { return (long long)s; }
};

/* What a state becomes (mt_reduce.c's finalize), on the host for an empty
   reduction as on the device. */
__host__ __device__ inline void finish_value(int fin, double f, long long i, long long n, double p, double m,
                                             double *vf, long long *vi) {
  double dn = (double)n;
  switch (fin) {
  case FIN_MEAN: f = f / dn; break;
  case FIN_VAR: f = f / fmax(0.0, dn - p); break;
  case FIN_STD: f = sqrt(f / fmax(0.0, dn - p)); break;
  case FIN_SQRT: f = sqrt(f); break;
  case FIN_ROOT: f = pow(f, 1 / p); break;
  case FIN_LSE: f = log(f) + m; break;
  case FIN_ANY: i = i > 0; break;
  case FIN_ALL: i = i == n; break;
  default: break;
  }
  *vf = f;
  *vi = i;
}

/* ---- geometry ---- */
typedef struct {
  int nk;                                   /* kept dims, outermost first */
  long long O, R, rs;                       /* outputs, reduced extent and its stride (elements) */
  long long ksize[MT_MAX_DIMS], kstride[MT_MAX_DIMS];
} red_geom;

/* x's offset of output o (row-major over the kept dims, as the result) */
__device__ inline long long kept_base(const red_geom &g, long long o) {
  long long off = 0;
  for (int k = g.nk - 1; k >= 0; k--) {
    long long c = o % g.ksize[k];
    o /= g.ksize[k];
    off += c * g.kstride[k];
  }
  return off;
}

/* One pass's launch: the geometry, the splits, and where its states go:
   part (S > 1: by output and split, combined by red_combine), else mout
   (an intermediate pass: the value the second pass reads), else out (the
   result, finished by fin). */
typedef struct {
  red_geom g;
  const void *x;
  int S;
  long long chunk;                          /* extent per split */
  void *part;
  double *mout;
  int param;                                /* PARAM_*: what mout gets */
  const double *min;                        /* this pass's m by output (NULL: 0) */
  double p;
  int fin, out_dtype;
  void *out;
  int vec;                                  /* rows of float or double: 16-byte loads (rs 1, aligned runs) */
} red_args;

template <typename T, int K>
__device__ inline void emit(const red_args &a, long long o, typename Pass<T, K>::S st) {
  typedef Pass<T, K> P;
  if (a.mout) {
    double f = P::to_f(st);
    a.mout[o] = a.param == PARAM_MEAN ? f / (double)a.g.R : isinf(f) ? 0 : f;   /* as PyTorch's logsumexp */
    return;
  }
  double m = a.min ? a.min[o] : 0, f;
  long long i;
  finish_value(a.fin, P::to_f(st), P::to_i(st), a.g.R, a.p, m, &f, &i);
  store_out(a.out_dtype, a.out, o, P::is_int, f, i);
}

/* A reduction over the threads of a group: a warp (blockDim.x 32) or the
   whole block (blockDim.x > 32, blockDim.y 1: sm holds a value per warp).
   The result is in the group's thread 0. */
template <typename S, typename F> __device__ inline S group_reduce(S v, F f, S ident, S *sm) {
  for (int off = 16; off > 0; off >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, off));
  if (blockDim.x > 32) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) sm[warp] = v;
    __syncthreads();
    if (warp == 0) {
      v = lane < (int)(blockDim.x >> 5) ? sm[lane] : ident;
      for (int off = 16; off > 0; off >>= 1) v = f(v, __shfl_down_sync(0xffffffffu, v, off));
    }
    __syncthreads();
  }
  return v;
}

/* The same, the result in every thread of the group. */
template <typename S, typename F> __device__ inline S group_all_reduce(S v, F f, S ident, S *sm) {
  v = group_reduce(v, f, ident, sm);
  if (blockDim.x > 32) {
    if (threadIdx.x == 0) sm[0] = v;
    __syncthreads();
    v = sm[0];
    __syncthreads();
  }
  return __shfl_sync(0xffffffffu, v, 0);
}

template <typename T, int K> struct Comb {
  __device__ typename Pass<T, K>::S operator()(typename Pass<T, K>::S a, typename Pass<T, K>::S b) const {
    return Pass<T, K>::comb(a, b);
  }
};

/* Rows: group (blockIdx.x * blockDim.y + threadIdx.y) takes (output, split)
   pairs, its threads striding along the split's part of the extent. */
template <typename T, int K> __global__ void red_rows(red_args a) {
  typedef Pass<T, K> P;
  typedef typename P::S S;
  __shared__ S sm[32];
  const T *x = (const T *)a.x;
  const long long groups = a.g.O * a.S, step = (long long)gridDim.x * blockDim.y;
  const S p = (S)a.p;
  for (long long grp = (long long)blockIdx.x * blockDim.y + threadIdx.y; grp < groups; grp += step) {
    long long o = grp / a.S, s = grp % a.S;
    const T *xo = x + kept_base(a.g, o);
    long long j0 = s * a.chunk, j1 = j0 + a.chunk < a.g.R ? j0 + a.chunk : a.g.R;
    S m = a.min ? (S)a.min[o] : (S)0, st = P::ident();
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      if (a.vec) {                          /* the run starts 16-byte aligned (the host checked): vectors, */
        constexpr int V = 16 / sizeof(T);   /* then the tail one by one */
        constexpr int U = 4;                /* loads in flight per thread, each into a state of its own */
        typedef typename std::conditional<std::is_same<T, float>::value, float4, double2>::type vec_t;
        const vec_t *xv = (const vec_t *)(xo + j0);
        const long long nv = (j1 - j0) / V, bd = blockDim.x;
        long long v = threadIdx.x;
        S acc[U];
#pragma unroll
        for (int u = 0; u < U; u++) acc[u] = P::ident();
        for (; v + (U - 1) * bd < nv; v += U * bd) {
          vec_t q[U];
#pragma unroll
          for (int u = 0; u < U; u++) q[u] = xv[v + u * bd];
#pragma unroll
          for (int u = 0; u < U; u++) {
            const T *e = (const T *)&q[u];
#pragma unroll
            for (int k = 0; k < V; k++) acc[u] = P::comb(acc[u], P::map(e[k], m, p));
          }
        }
        for (; v < nv; v += bd) {
          const vec_t q = xv[v];
          const T *e = (const T *)&q;
#pragma unroll
          for (int k = 0; k < V; k++) acc[0] = P::comb(acc[0], P::map(e[k], m, p));
        }
        st = P::comb(P::comb(acc[0], acc[1]), P::comb(acc[2], acc[3]));
        j0 += nv * V;
      }
    }
#pragma unroll 4
    for (long long j = j0 + threadIdx.x; j < j1; j += blockDim.x) st = P::comb(st, P::map(DT<T>::load(xo + j * a.g.rs), m, p));
    st = group_reduce(st, Comb<T, K>(), P::ident(), sm);
    if (threadIdx.x == 0) {
      if (a.S > 1) ((S *)a.part)[grp] = st;
      else emit<T, K>(a, o, st);
    }
  }
}

/* Columns: blocks of 32 x 8 threads; threadIdx.x picks the output of a tile
   of 32, threadIdx.y a row of every 8 within split blockIdx.y. */
template <typename T, int K> __global__ void red_cols(red_args a) {
  typedef Pass<T, K> P;
  typedef typename P::S S;
  __shared__ S sm[8][33];
  const T *x = (const T *)a.x;
  const long long tiles = (a.g.O + 31) / 32, s = blockIdx.y;
  const S p = (S)a.p;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    long long o = tile * 32 + tx;
    S st = P::ident();
    if (o < a.g.O) {
      const T *xo = x + kept_base(a.g, o);
      long long j0 = s * a.chunk, j1 = j0 + a.chunk < a.g.R ? j0 + a.chunk : a.g.R;
      S m = a.min ? (S)a.min[o] : (S)0;
      for (long long j = j0 + ty; j < j1; j += 8) st = P::comb(st, P::map(DT<T>::load(xo + j * a.g.rs), m, p));
    }
    sm[ty][tx] = st;
    __syncthreads();
    if (ty == 0 && o < a.g.O) {
      for (int y = 1; y < 8; y++) st = P::comb(st, sm[y][tx]);
      if (a.S > 1) ((S *)a.part)[o * a.S + s] = st;
      else emit<T, K>(a, o, st);
    }
    __syncthreads();
  }
}

/* The splits of each output, combined in order. */
template <typename T, int K> __global__ void red_combine(red_args a) {
  typedef Pass<T, K> P;
  typedef typename P::S S;
  const S *part = (const S *)a.part;
  for (long long o = (long long)blockIdx.x * blockDim.x + threadIdx.x; o < a.g.O;
       o += (long long)gridDim.x * blockDim.x) {
    S st = part[o * a.S];
    for (int s = 1; s < a.S; s++) st = P::comb(st, part[o * a.S + s]);
    emit<T, K>(a, o, st);
  }
}

/* Few outputs of many splits: a block per output, its threads striding
   over the splits (one thread walking thousands of them in a row was a
   fifth of a 64M-element sum's time). */
template <typename T, int K> __global__ void red_combine_wide(red_args a) {
  typedef Pass<T, K> P;
  typedef typename P::S S;
  __shared__ S sm[32];
  const S *part = (const S *)a.part;
  for (long long o = blockIdx.x; o < a.g.O; o += gridDim.x) {
    S st = P::ident();
    for (int s = threadIdx.x; s < a.S; s += blockDim.x) st = P::comb(st, part[o * a.S + s]);
    st = group_reduce(st, Comb<T, K>(), P::ident(), sm);
    if (threadIdx.x == 0) emit<T, K>(a, o, st);
  }
}

/* How a pass runs: the kernel kind and its grid. */
typedef struct {
  int cols, wide;
  dim3 grid, block, cgrid;
} red_launch;

template <typename T, int K> static void launch_pass(const red_args &a, const red_launch &l, cudaStream_t st) {
  if (l.cols) red_cols<T, K><<<l.grid, l.block, 0, st>>>(a);
  else red_rows<T, K><<<l.grid, l.block, 0, st>>>(a);
  if (a.S > 1 && l.wide) red_combine_wide<T, K><<<l.cgrid, 256, 0, st>>>(a);
  else if (a.S > 1) red_combine<T, K><<<l.cgrid, 256, 0, st>>>(a);
}

/* pass kind over dtype; the float passes exist for float dtypes only */
template <typename T> static int launch_kind(int kind, const red_args &a, const red_launch &l, cudaStream_t st) {
  switch (kind) {
  case K_SUM: launch_pass<T, K_SUM>(a, l, st); return 0;
  case K_NANSUM: launch_pass<T, K_NANSUM>(a, l, st); return 0;
  case K_PROD: launch_pass<T, K_PROD>(a, l, st); return 0;
  case K_NONZERO: launch_pass<T, K_NONZERO>(a, l, st); return 0;
  case K_MAX: launch_pass<T, K_MAX>(a, l, st); return 0;
  case K_MIN: launch_pass<T, K_MIN>(a, l, st); return 0;
  default: break;
  }
  if constexpr (DT<T>::isf) {
    switch (kind) {
    case K_SQDEV: launch_pass<T, K_SQDEV>(a, l, st); return 0;
    case K_ABSSUM: launch_pass<T, K_ABSSUM>(a, l, st); return 0;
    case K_POWSUM: launch_pass<T, K_POWSUM>(a, l, st); return 0;
    case K_EXPSUM: launch_pass<T, K_EXPSUM>(a, l, st); return 0;
    case K_MAXABS: launch_pass<T, K_MAXABS>(a, l, st); return 0;
    case K_MINABS: launch_pass<T, K_MINABS>(a, l, st); return 0;
    default: break;
    }
  }
  return -1;
}

static int run_pass(const char *op, int dtype, int kind, const red_args &a, const red_launch &l, cudaStream_t st) {
  int rc = -1;
  switch (dtype) {
#define CU_PASS_CASE(E, T) case E: rc = launch_kind<T>(kind, a, l, st); break;
    CU_DTYPE_CASES(CU_PASS_CASE)
#undef CU_PASS_CASE
  default: break;
  }
  if (rc) return mt_fail("%s: no GPU kernel for pass %d over %s", op, kind, mt_dtypes[dtype].name);
  return CU_LAUNCHED(op);
}

/* ---- host side ---- */
/* Multiprocessors of device index, read once. */
static int sm_count(int index) {
  static int counts[64];
  if (index < 0 || index >= 64) return 16;
  if (!counts[index]) {
    int n = 0;
    if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, index) != cudaSuccess || n < 1) {
      cudaGetLastError();
      n = 16;
    }
    counts[index] = n;
  }
  return counts[index];
}

static long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }
static long long min_ll(long long a, long long b) { return a < b ? a : b; }

/* The kept dims (merged where x steps across them as one) and the reduced
   extent of x over mask. Returns 1 when the reduced dims do not merge into
   one extent: the caller then copies x with them last. */
static int build_geom(red_geom *g, const mt_tensor *x, uint32_t mask) {
  int nred = 0;
  g->nk = 0;
  g->O = 1;
  g->R = 1;
  g->rs = 1;
  for (int d = 0; d < x->ndim; d++) {
    int64_t n = x->shape[d], s = x->stride[d];
    if ((mask >> d) & 1) {
      g->R *= n;
      if (n == 1) continue;
      if (nred && g->rs == n * s) g->rs = s;
      else if (nred++) return 1;
      else g->rs = s;
    } else {
      g->O *= n;
      if (n == 1) continue;
      if (g->nk && g->kstride[g->nk - 1] == n * s) {
        g->ksize[g->nk - 1] *= n;
        g->kstride[g->nk - 1] = s;
      } else {
        g->ksize[g->nk] = n;
        g->kstride[g->nk] = s;
        g->nk++;
      }
    }
  }
  return 0;
}

/* Drops the reduced dims of a keepdim-shaped contiguous result. */
static void squeeze_reduced(mt_tensor *r, int ndim, uint32_t mask) {
  int k = 0;
  for (int d = 0; d < ndim; d++)
    if (!((mask >> d) & 1)) r->shape[k++] = r->shape[d];
  r->ndim = k;
  mt_contiguous_strides(k, r->shape, r->stride);
}

/* Runs passes k0 (and k1 when >= 0, reading k0's value through pk) of x
   over g into out. */
static int reduce_passes(const char *op, const red_geom *g, const mt_tensor *x, int k0, int k1, int pk, int fin,
                         double p, mt_tensor *out, int index) {
  cudaStream_t st = cu_stream(index);
  /* blocks that fill the GPU with loads in flight: a 256-thread block per
     eighth of a multiprocessor's threads (4 per SM left a 64M-element sum
     at a third of the memory's bandwidth on an H200) */
  long long target = 16LL * sm_count(index);
  red_launch l;
  int S = 1;
  /* columns when the outputs are adjacent in x (coalesced along them) or
     the extent is too short for a warp */
  l.cols = (g->nk > 0 && g->rs != 1 && g->kstride[g->nk - 1] == 1) || g->R <= 16;
  if (l.cols) {
    long long tiles = ceil_div(g->O, 32);
    if (tiles < target) S = (int)min_ll(min_ll(ceil_div(target, tiles), ceil_div(g->R, 128)), 65535);
    l.block = dim3(32, 8);
  } else {
    int gx = g->R <= 1024 ? 32 : 256;
    if (gx == 256 && g->O < target) S = (int)min_ll(ceil_div(target, g->O), ceil_div(g->R, 256 * 16));
    l.block = dim3(gx, 256 / gx);
  }
  if (S < 1) S = 1;
  long long chunk = ceil_div(g->R, S);
  /* 16-byte loads along contiguous rows of float or double: every split starts aligned */
  const int es = mt_dtypes[x->dtype].size;
  int vec = !l.cols && g->rs == 1 && (x->dtype == MT_FLOAT32 || x->dtype == MT_FLOAT64) &&
            ((uintptr_t)mt_data(x) & 15) == 0;
  for (int k = 0; vec && k < g->nk; k++) vec = (g->kstride[k] * es) % 16 == 0;
  if (vec) chunk = ceil_div(chunk, 16 / es) * (16 / es);
  S = (int)ceil_div(g->R, chunk);             /* no empty split */
  if (l.cols) l.grid = dim3((unsigned)min_ll(ceil_div(g->O, 32), 1LL << 30), (unsigned)S);
  else l.grid = dim3((unsigned)min_ll(ceil_div(g->O * S, l.block.y), 1LL << 30));
  l.wide = S >= 64 && g->O < 4096;
  l.cgrid = dim3((unsigned)(l.wide ? min_ll(g->O, 65535) : min_ll(ceil_div(g->O, 256), 1LL << 30)));

  mt_tensor part = {}, mbuf = {};
  int rc = 0;
  if (S > 1) {
    const int64_t n = g->O * S;
    rc = mt_tensor_init_on(op, &part, MT_INT64, 1, &n, MT_CUDA, index);   /* 8 bytes a state */
  }
  if (rc == 0 && k1 >= 0) {
    const int64_t n = g->O;
    rc = mt_tensor_init_on(op, &mbuf, MT_FLOAT64, 1, &n, MT_CUDA, index);
  }
  if (rc == 0) {
    red_args a;
    a.g = *g;
    a.x = mt_data(x);
    a.S = S;
    a.chunk = chunk;
    a.part = S > 1 ? mt_data(&part) : NULL;
    a.mout = k1 >= 0 ? (double *)mt_data(&mbuf) : NULL;
    a.param = pk;
    a.min = NULL;
    a.p = p;
    a.fin = fin;
    a.out_dtype = out->dtype;
    a.out = mt_data(out);
    a.vec = vec;
    rc = run_pass(op, x->dtype, k0, a, l, st);
    if (rc == 0 && k1 >= 0) {
      a.min = a.mout;
      a.mout = NULL;
      rc = run_pass(op, x->dtype, k1, a, l, st);
    }
  }
  /* released after the launches: the allocator reuses them in stream order */
  mt_tensor_release(&part);
  mt_tensor_release(&mbuf);
  return rc;
}

CU_EXTERN int cu_reduce(mt_tensor *r, const mt_tensor *x, mt_op op, uint32_t mask, int keepdim, int dtype,
                        double param, int default_float) {
  int in_dtype, out_dtype;
  if (mt_reduce_prepare(x, op, mask, dtype, param, default_float, &in_dtype, &out_dtype)) return -1;
  const char *name = mt_op_names[op];
  const mt_red_entry *e = mt_red_entry_of(op);
  const int index = mt_device_index_of(x);
  if (cu_set_device(name, index)) return -1;

  /* the passes: norm's by its order p, as mt_reduce.c's run_norm */
  int k0 = e->first, k1 = e->second, fin = e->fin;
  /* the median of every element is a selection: the CPU's entry point hands it to cu_select_along */
  if (k0 == K_MEDIAN) return mt_reduce(r, x, op, mask, keepdim, dtype, param, default_float);
  int pk = k1 == K_SQDEV ? PARAM_MEAN : k1 == K_EXPSUM ? PARAM_SHIFT : PARAM_NONE;
  if (k0 == K_NORM) {
    k1 = -1;
    pk = PARAM_NONE;
    fin = FIN_SAME;
    if (std::isinf(param)) k0 = param > 0 ? K_MAXABS : K_MINABS;
    else if (param == 0) k0 = K_NONZERO;
    else if (param == 1) k0 = K_ABSSUM;
    else if (param == 2) { k0 = K_SQDEV; fin = FIN_SQRT; }
    else { k0 = K_POWSUM; fin = FIN_ROOT; }
  }

  mt_tensor in = {};
  if (mt_to_dtype(&in, x, in_dtype)) return -1;
  const int ndim = in.ndim;
  mask = ndim ? mask & (ndim >= 32 ? ~0u : (1u << ndim) - 1) : 0;
  int64_t shape[MT_MAX_DIMS], R = 1, O = 1;
  for (int d = 0; d < ndim; d++) {
    int red = (mask >> d) & 1;
    shape[d] = red ? 1 : in.shape[d];
    if (red) R *= in.shape[d];
    else O *= in.shape[d];
  }
  int rc = mt_tensor_init_on(name, r, out_dtype, ndim, shape, MT_CUDA, index);
  if (rc) { mt_tensor_release(&in); return -1; }
  if (O > 0 && R == 0) {
    /* no elements: the passes' identities, finished (prod 1, mean NaN, ...) */
    double f = k0 == K_PROD ? 1 : 0, m = 0, n = 0;
    if (k1 >= 0) {
      m = pk == PARAM_MEAN ? f / n : std::isinf(f) ? 0 : f;   /* the mean of nothing is NaN */
      f = 0;
    }
    int kind = k1 >= 0 ? k1 : k0;
    int is_int = kind == K_NONZERO || (!mt_dtype_is_float((mt_dtype)in.dtype) && kind <= K_MIN);
    double vf;
    long long vi;
    finish_value(fin, f, (long long)f, 0, param, m, &vf, &vi);
    rc = mt_fill(r, is_int ? (double)vi : vf);
  } else if (O > 0) {
    red_geom g;
    mt_tensor copy = {};
    const mt_tensor *src = &in;
    if (build_geom(&g, &in, mask)) {
      /* reduced dims that do not merge: a copy with them last, contiguous */
      int perm[MT_MAX_DIMS], k = 0;
      uint32_t pmask = 0;
      for (int d = 0; d < ndim; d++) if (!((mask >> d) & 1)) perm[k++] = d;
      for (int d = 0; d < ndim; d++) if ((mask >> d) & 1) { pmask |= 1u << k; perm[k++] = d; }
      mt_tensor view = {};
      rc = mt_permute(&view, &in, perm);
      if (rc == 0) rc = mt_clone(&copy, &view);
      mt_tensor_release(&view);
      if (rc == 0) {
        build_geom(&g, &copy, pmask);
        src = &copy;
      }
    }
    if (rc == 0) rc = reduce_passes(name, &g, src, k0, k1, pk, fin, param, r, index);
    mt_tensor_release(&copy);
  }
  mt_tensor_release(&in);
  if (rc) { mt_tensor_release(r); return -1; }
  if (!keepdim) squeeze_reduced(r, ndim, mask);
  return 0;
}

/* ---- along a dim: x contiguous, seen as [A, N, B] around dim ---- */
static void split_dims(const mt_tensor *x, int dim, int64_t *A, int64_t *N, int64_t *B) {
  *A = *N = *B = 1;
  for (int d = 0; d < x->ndim; d++) {
    if (d < dim) *A *= x->shape[d];
    else if (d == dim) *N = x->shape[d];
    else *B *= x->shape[d];
  }
}

/* The running sum's type: double for float dtypes (as the CPU's scans),
   wrapping uint64 for integers and bool. */
template <typename T> struct ScanAcc { typedef unsigned long long type; };
template <> struct ScanAcc<float> { typedef double type; };
template <> struct ScanAcc<double> { typedef double type; };
template <> struct ScanAcc<half_t> { typedef double type; };
template <> struct ScanAcc<bf16_t> { typedef double type; };

template <typename T> __device__ inline typename ScanAcc<T>::type scan_load(const T *p) {
  return (typename ScanAcc<T>::type)DT<T>::load(p);
}
template <typename T> __device__ inline void scan_store(T *p, typename ScanAcc<T>::type v) {
  if constexpr (DT<T>::isf) store_f(p, (double)v);
  else store_i(p, (long long)v);
}

/* softmax's max: a NaN never wins (v > u is false), as the CPU's */
struct MaxOp {
  template <typename V> __device__ V operator()(const V &u, const V &v) const { return v > u ? v : u; }
};
struct AddOp {
  template <typename V> __device__ V operator()(const V &a, const V &b) const { return a + b; }
};
struct MulOp {
  template <typename V> __device__ V operator()(const V &a, const V &b) const { return a * b; }
};

/* a thread per (a, b) column, walking its N elements */
template <typename T, bool PROD> __global__ void scan_cols(const T *x, T *y, long long A, long long N, long long B) {
  typedef typename ScanAcc<T>::type V;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < A * B;
       c += (long long)gridDim.x * blockDim.x) {
    long long base = (c / B) * N * B + c % B;
    V acc = PROD ? (V)1 : (V)0;
    for (long long j = 0; j < N; j++) {
      V v = scan_load(x + base + j * B);
      acc = PROD ? acc * v : acc + v;
      scan_store(y + base + j * B, acc);
    }
  }
}

/* B == 1: a block per row, SCAN_ITEMS elements a thread per tile, the
   tiles' totals carried in order */
#define SCAN_THREADS 256
#define SCAN_ITEMS 4
template <typename T, bool PROD> __global__ void scan_rows(const T *x, T *y, long long A, long long N) {
  typedef typename ScanAcc<T>::type V;
  typedef cub::BlockScan<V, SCAN_THREADS> BS;
  __shared__ typename BS::TempStorage tmp;
  const V one = PROD ? (V)1 : (V)0;
  for (long long a = blockIdx.x; a < A; a += gridDim.x) {
    const T *xr = x + a * N;
    T *yr = y + a * N;
    V carry = one;
    for (long long t0 = 0; t0 < N; t0 += SCAN_THREADS * SCAN_ITEMS) {
      V v[SCAN_ITEMS], total;
      long long j0 = t0 + (long long)threadIdx.x * SCAN_ITEMS;
      for (int i = 0; i < SCAN_ITEMS; i++) v[i] = j0 + i < N ? scan_load(xr + j0 + i) : one;
      if (PROD) BS(tmp).InclusiveScan(v, v, MulOp(), total);
      else BS(tmp).InclusiveScan(v, v, AddOp(), total);
      for (int i = 0; i < SCAN_ITEMS; i++)
        if (j0 + i < N) scan_store(yr + j0 + i, PROD ? carry * v[i] : carry + v[i]);
      carry = PROD ? carry * total : carry + total;
      __syncthreads();                        /* tmp is reused by the next tile */
    }
  }
}

/* softmax's max and sum in one walk (online): the running max m and the sum s
   of exp(v - m), rescaled when the max grows. A NaN never wins the max and
   makes the sum NaN, as the CPU's two walks do; -inf against a -inf max adds
   nothing (exp(-inf - -inf) would be NaN). */
template <typename ct> __device__ inline void ms_add(ct &m, ct &s, ct v) {
  if (v > m) {
    s = s * d_exp(m - v) + (ct)1;
    m = v;
  } else if (!(v == m && m == (ct)-INFINITY)) {
    s += d_exp(v - m);
  }
}
/* two (max, sum) pairs as one; a -inf max's sum (0, or NaN) scaled by 0 */
template <typename ct> __device__ inline void ms_comb(ct &m, ct &s, ct m2, ct s2) {
  ct mx = m2 > m ? m2 : m;
  ct a = s * (m == (ct)-INFINITY ? (ct)0 : d_exp(m - mx));
  ct b = s2 * (m2 == (ct)-INFINITY ? (ct)0 : d_exp(m2 - mx));
  m = mx;
  s = a + b;
}
/* the pairs of a group (warp, or block with a pair per warp in msm/ssm) combined,
   the result in every thread of the group */
template <typename ct> __device__ inline void ms_group(ct &m, ct &s, ct *msm, ct *ssm) {
  for (int off = 16; off > 0; off >>= 1)
    ms_comb(m, s, __shfl_down_sync(0xffffffffu, m, off), __shfl_down_sync(0xffffffffu, s, off));
  if (blockDim.x > 32) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { msm[warp] = m; ssm[warp] = s; }
    __syncthreads();
    if (warp == 0) {
      bool in = lane < (int)(blockDim.x >> 5);
      m = in ? msm[lane] : (ct)-INFINITY;
      s = in ? ssm[lane] : (ct)0;
      for (int off = 16; off > 0; off >>= 1)
        ms_comb(m, s, __shfl_down_sync(0xffffffffu, m, off), __shfl_down_sync(0xffffffffu, s, off));
      if (lane == 0) { msm[0] = m; ssm[0] = s; }
    }
    __syncthreads();
    m = msm[0];
    s = ssm[0];
    __syncthreads();
    return;
  }
  m = __shfl_sync(0xffffffffu, m, 0);
  s = __shfl_sync(0xffffffffu, s, 0);
}

/* softmax in the compute type, max-shifted, as mt_softmax: a group (warp or
   block) per row when B == 1; one walk for the max and the sum, one that
   writes; float rows on 16-byte boundaries are read and written four at a time */
template <typename T> __global__ void softmax_rows(const T *x, T *y, long long A, long long N, int take_log) {
  typedef typename DT<T>::ct ct;
  __shared__ ct msm[32], ssm[32];
  const long long step = (long long)gridDim.x * blockDim.y;
  for (long long a = (long long)blockIdx.x * blockDim.y + threadIdx.y; a < A; a += step) {
    const T *xr = x + a * N;
    T *yr = y + a * N;
    ct mx = -INFINITY, s = 0;
    bool vec = false;
    if constexpr (sizeof(T) == 4 && DT<T>::isf)
      vec = (N & 3) == 0 && ((unsigned long long)xr & 15) == 0 && ((unsigned long long)yr & 15) == 0;
    if constexpr (sizeof(T) == 4 && DT<T>::isf) {
      if (vec) {
        const float4 *x4 = (const float4 *)xr;
        for (long long j = threadIdx.x; j < N / 4; j += blockDim.x) {
          float4 v = x4[j];
          ms_add(mx, s, (ct)v.x); ms_add(mx, s, (ct)v.y); ms_add(mx, s, (ct)v.z); ms_add(mx, s, (ct)v.w);
        }
      }
    }
    if (!vec)
      for (long long j = threadIdx.x; j < N; j += blockDim.x) ms_add(mx, s, (ct)DT<T>::load(xr + j));
    ms_group(mx, s, msm, ssm);
    ct ls = take_log ? d_log(s) : (ct)0, inv = (ct)1 / s;
    if constexpr (sizeof(T) == 4 && DT<T>::isf) {
      if (vec) {
        const float4 *x4 = (const float4 *)xr;
        float4 *y4 = (float4 *)yr;
        for (long long j = threadIdx.x; j < N / 4; j += blockDim.x) {
          float4 v = x4[j], o;
          if (take_log) {
            o.x = (float)(v.x - mx - ls); o.y = (float)(v.y - mx - ls);
            o.z = (float)(v.z - mx - ls); o.w = (float)(v.w - mx - ls);
          } else {
            o.x = (float)(d_exp((ct)v.x - mx) * inv); o.y = (float)(d_exp((ct)v.y - mx) * inv);
            o.z = (float)(d_exp((ct)v.z - mx) * inv); o.w = (float)(d_exp((ct)v.w - mx) * inv);
          }
          y4[j] = o;
        }
        continue;
      }
    }
    if (take_log) {
      for (long long j = threadIdx.x; j < N; j += blockDim.x) store_f(yr + j, (double)(DT<T>::load(xr + j) - mx - ls));
    } else {
      for (long long j = threadIdx.x; j < N; j += blockDim.x)
        store_f(yr + j, (double)(d_exp(DT<T>::load(xr + j) - mx) * inv));
    }
  }
}

/* B > 1: a thread per (a, b) column, its three walks coalesced along b */
template <typename T> __global__ void softmax_cols(const T *x, T *y, long long A, long long N, long long B,
                                                   int take_log) {
  typedef typename DT<T>::ct ct;
  for (long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x; c < A * B;
       c += (long long)gridDim.x * blockDim.x) {
    long long base = (c / B) * N * B + c % B;
    ct mx = -INFINITY, s = 0;
    for (long long j = 0; j < N; j++) {
      ct v = DT<T>::load(x + base + j * B);
      mx = v > mx ? v : mx;
    }
    for (long long j = 0; j < N; j++) s += d_exp(DT<T>::load(x + base + j * B) - mx);
    if (take_log) {
      ct ls = d_log(s);
      for (long long j = 0; j < N; j++)
        store_f(y + base + j * B, (double)(DT<T>::load(x + base + j * B) - mx - ls));
    } else {
      ct inv = (ct)1 / s;
      for (long long j = 0; j < N; j++)
        store_f(y + base + j * B, (double)(d_exp(DT<T>::load(x + base + j * B) - mx) * inv));
    }
  }
}

template <typename T> static void launch_scan(const void *x, void *y, long long A, long long N, long long B,
                                              int is_prod, int sms, cudaStream_t st) {
  if (B == 1 && N > 64) {
    unsigned grid = (unsigned)min_ll(A, 32LL * sms);
    if (is_prod) scan_rows<T, true><<<grid, SCAN_THREADS, 0, st>>>((const T *)x, (T *)y, A, N);
    else scan_rows<T, false><<<grid, SCAN_THREADS, 0, st>>>((const T *)x, (T *)y, A, N);
  } else {
    unsigned grid = (unsigned)min_ll(ceil_div(A * B, 256), 32LL * sms);
    if (is_prod) scan_cols<T, true><<<grid, 256, 0, st>>>((const T *)x, (T *)y, A, N, B);
    else scan_cols<T, false><<<grid, 256, 0, st>>>((const T *)x, (T *)y, A, N, B);
  }
}

/* float dtypes only (the caller has checked): nothing for the others */
template <typename T> static void launch_softmax(const void *x, void *y, long long A, long long N, long long B,
                                                 int take_log, int sms, cudaStream_t st) {
  if constexpr (!DT<T>::isf) return;
  else if (B == 1) {
    int gx = N <= 1024 ? 32 : 256;
    dim3 block(gx, 256 / gx);
    unsigned grid = (unsigned)min_ll(ceil_div(A, block.y), 32LL * sms);
    softmax_rows<T><<<grid, block, 0, st>>>((const T *)x, (T *)y, A, N, take_log);
  } else {
    unsigned grid = (unsigned)min_ll(ceil_div(A * B, 256), 32LL * sms);
    softmax_cols<T><<<grid, 256, 0, st>>>((const T *)x, (T *)y, A, N, B, take_log);
  }
}

CU_EXTERN int cu_along(mt_tensor *r, const mt_tensor *x, mt_op op, int dim, int dtype) {
  int is_softmax, flag;
  switch (op) {
  case MT_OP_cumsum: is_softmax = 0; flag = 0; break;
  case MT_OP_cumprod: is_softmax = 0; flag = 1; break;
  case MT_OP_softmax: is_softmax = 1; flag = 0; break;
  case MT_OP_log_softmax: is_softmax = 1; flag = 1; break;
  default: return mt_fail("along: op %d is not an op along a dim", (int)op);
  }
  const char *name = mt_op_names[op];
  if ((dim = mt_wrap_dim(name, dim, x->ndim)) < 0) return -1;
  if (is_softmax) {
    if (dtype < 0) dtype = x->dtype;
    if (!mt_dtype_is_float((mt_dtype)dtype))
      return mt_fail("%s: expected a floating point tensor, got %s (convert it, or pass "
                     "{dtype='float32'})", name, mt_dtypes[dtype].name);
  } else if (dtype < 0) {
    dtype = mt_dtype_is_float((mt_dtype)x->dtype) ? x->dtype : MT_INT64;
  }
  const int index = mt_device_index_of(x);
  if (cu_set_device(name, index)) return -1;
  mt_tensor in = {};
  if (mt_contiguous_as(&in, x, dtype)) return -1;
  if (mt_tensor_init_on(name, r, dtype, x->ndim, x->shape, MT_CUDA, index)) { mt_tensor_release(&in); return -1; }
  int64_t A, N, B;
  split_dims(&in, dim, &A, &N, &B);
  int rc = 0;
  if (A * N * B > 0) {
    cudaStream_t st = cu_stream(index);
    int sms = sm_count(index);
    const void *xp = mt_data(&in);
    void *yp = mt_data(r);
    switch (dtype) {
#define CU_ALONG_CASE(E, T)                                                                   \
  case E:                                                                                     \
    if (is_softmax) launch_softmax<T>(xp, yp, A, N, B, flag, sms, st);                       \
    else launch_scan<T>(xp, yp, A, N, B, flag, sms, st);                                     \
    break;
      CU_DTYPE_CASES(CU_ALONG_CASE)
#undef CU_ALONG_CASE
    default: break;
    }
    rc = CU_LAUNCHED(name);
  }
  mt_tensor_release(&in);
  if (rc) mt_tensor_release(r);
  return rc;
}
