/* cu_norm.cu: max pooling's positions and average pooling over volumes
   (mt_pool.h), and the normalisation
   kernels, batch norm and group norm (mt_norm.h), on the GPU, with the
   semantics of mt_pool.c and mt_norm.c: the same result shapes and dtypes,
   the same checks and messages, statistics accumulated in double.

   Max pooling is a thread per output position, each walking its window
   (fixed or adaptive, computed in the kernel as the CPU lists them);
   avg_pool3d the same, its adjoint a thread per input element. The
   normalisation passes see x as (n, c, s), contiguous (non-contiguous
   operands are copied first):
     - a statistic's reductions are a block per statistic, its threads
       striding over the statistic's elements (batch norm: the (n, s) pairs
       of channel c; group norm: a sample's group of channels times s) and
       combining their double sums in a fixed order;
     - the elementwise passes (y, and the input gradient from per-statistic
       coefficients the reduction wrote) are a block per (sample, channel)
       row when rows are long, else a thread per element;
     - group norm's weight and bias gradients are a block per channel over
       every sample, each element with its own statistic. */
#include <cmath>
#include "cu.h"
#include "cu_loop.cuh"

extern "C" {
#include "../tensor/mt_pool.h"
#include "../tensor/mt_resample.h"
#include "../tensor/mt_norm.h"
}

#define NM_THREADS 256
#define NM_MAX_BLOCKS 65536

/* blocks for work items, per_block each: at least 1, at most NM_MAX_BLOCKS
   (the kernels loop over the rest) */
static unsigned nm_blocks(int64_t work, int64_t per_block) {
  int64_t b = (work + per_block - 1) / per_block;
  if (b < 1) b = 1;
  if (b > NM_MAX_BLOCKS) b = NM_MAX_BLOCKS;
  return (unsigned)b;
}

/* The op's device: x's, where every other tensor given (NULL: none) must be
   too, so that no CPU pointer reaches a kernel; made current. */
static int nm_device(const char *op, const mt_tensor *x, const mt_tensor *const *others, int n, int *dev) {
  if (!x || mt_device_of(x) != MT_CUDA) return mt_fail("%s: expected a CUDA tensor", op);
  for (int i = 0; i < n; i++)
    if (others[i] && mt_check_same_device(op, x, others[i])) return -1;
  *dev = mt_device_index_of(x);
  return cu_set_device(op, *dev);
}

/* ---- max pooling ----
   Over volumes (t, h, w); a plane is a volume of one frame (t = 1 with a
   window of one tap), so max_pool2d, adaptive_max_pool2d and max_pool3d
   share the kernel. */

typedef struct {
  int64_t total;                  /* outputs: n * c * ot * oh * ow */
  int64_t in[3], out[3], base;
  int64_t k[3], s[3], p[3], d[3]; /* fixed windows: kernel, stride, padding, dilation per {t, h, w} */
  int adaptive;
} pool_args;

/* The window of output o along dim (0: t, 1: h, 2: w): its first tap,
   number of taps and step; mt_pool.c's fixed_window (taps in the padding
   left out) or mt_adaptive_window. In I: 32-bit where every size fits
   (64-bit division is many times slower on the GPU). */
template <class I>
__host__ __device__ inline void pool_window(const pool_args &a, int dim, I o, I *first, I *count, I *step) {
  const I in = (I)a.in[dim], out = (I)a.out[dim];
  if (a.adaptive) {
    const I lo = o * in / out, hi = ((o + 1) * in + out - 1) / out;
    *first = lo;
    *count = hi - lo;
    *step = 1;
    return;
  }
  const I k = (I)a.k[dim], s = (I)a.s[dim], p = (I)a.p[dim], d = (I)a.d[dim];
  const I start = o * s - p;
  const I a0 = start < 0 ? (-start + d - 1) / d : 0;     /* the first tap at or after 0 */
  const I last = in - 1 - start;                         /* taps up to here lie before in */
  const I a1 = last < 0 ? 0 : (last / d + 1 < k ? last / d + 1 : k);
  *first = start + a0 * d;
  *count = a1 > a0 ? a1 - a0 : 0;
  *step = d;
}

/* out[id] = base + the position in its volume of the first maximum of
   window id in (t, h, w) order; a NaN beats a number, the first NaN stays */
template <class T, class I>
__global__ void __launch_bounds__(NM_THREADS) pool_kernel(pool_args a, const T *x, int64_t *out) {
  const I H = (I)a.in[1], W = (I)a.in[2], OT = (I)a.out[0], OH = (I)a.out[1], OW = (I)a.out[2];
  const I vol_size = (I)a.in[0] * H * W;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < a.total; id += step) {
    I r = (I)id;
    const I j = r % OW;
    r /= OW;
    const I i = r % OH;
    r /= OH;
    const I l = r % OT, q = r / OT;
    I ft, ct, st, fh, ch, sh, fw, cw, sw;
    pool_window<I>(a, 0, l, &ft, &ct, &st);
    pool_window<I>(a, 1, i, &fh, &ch, &sh);
    pool_window<I>(a, 2, j, &fw, &cw, &sw);
    const T *vol = x + (int64_t)q * vol_size;
    I at = (ft * H + fh) * W + fw;
    T best = vol[at];
    for (I z = 0; z < ct; z++)
      for (I u = 0; u < ch; u++) {
        const I row = ((ft + z * st) * H + fh + u * sh) * W;
        for (I v = 0; v < cw; v++) {
          const I pos = row + fw + v * sw;
          const T val = vol[pos];
          if (val > best || (val != val && best == best)) {
            best = val;
            at = pos;
          }
        }
      }
    out[id] = (int64_t)at + a.base;
  }
}

template <class T>
static void pool_launch(const pool_args &a, const T *x, int64_t *out, unsigned blocks, cudaStream_t st) {
  /* 32-bit indices when the outputs and a volume (and every window's
     arithmetic, bounded by them) fit */
  const int64_t vol = a.in[0] * a.in[1] * a.in[2];
  int64_t reach = 0;
  for (int d = 0; d < 3; d++) {
    const int64_t r = a.adaptive ? (a.out[d] + 1) * (a.in[d] + 1) : a.out[d] * a.s[d] + a.k[d] * a.d[d] + a.in[d];
    reach = r > reach ? r : reach;
  }
  if (a.total < INT32_MAX && vol < INT32_MAX && reach < INT32_MAX)
    pool_kernel<T, int32_t><<<blocks, NM_THREADS, 0, st>>>(a, x, out);
  else
    pool_kernel<T, int64_t><<<blocks, NM_THREADS, 0, st>>>(a, x, out);
}

/* idx (n, c, out...) over the last nd dims of x by a's windows (dims
   before them of one tap), on device dev (mt_pool.c's pool_indices) */
static int pool_run(mt_tensor *idx, const mt_tensor *x, int nd, pool_args *a, const char *op, int dev) {
  char bx[128];
  for (int dim = 0; dim < 3; dim++)
    for (int64_t o = 0; o < a->out[dim]; o++) {
      int64_t first, count, step;
      pool_window<int64_t>(*a, dim, o, &first, &count, &step);
      if (count < 1)
        return mt_fail("%s: a window of the input %s lies in the padding alone", op, mt_shape_str(x, bx, sizeof bx));
    }
  int64_t shape[5] = {x->shape[0], x->shape[1]};
  for (int i = 0; i < nd; i++) shape[2 + i] = a->out[3 - nd + i];
  mt_tensor xc = {};
  if (mt_contiguous(&xc, x)) return -1;
  if (mt_tensor_init_on(op, idx, MT_INT64, 2 + nd, shape, MT_CUDA, dev)) {
    mt_tensor_release(&xc);
    return -1;
  }
  a->total = mt_numel(idx);
  int rc = 0;
  if (a->total > 0) {
    const unsigned blocks = nm_blocks(a->total, NM_THREADS);
    cudaStream_t st = cu_stream(dev);
    if (x->dtype == MT_FLOAT32)
      pool_launch<float>(*a, (const float *)mt_data(&xc), (int64_t *)mt_data(idx), blocks, st);
    else
      pool_launch<double>(*a, (const double *)mt_data(&xc), (int64_t *)mt_data(idx), blocks, st);
    rc = CU_LAUNCHED(op);
  }
  mt_tensor_release(&xc);
  if (rc) mt_tensor_release(idx);
  return rc ? -1 : 0;
}

/* fixed windows over the last nd dims (2 or 3), mt_max_pool_plan's checks */
static int fixed_pool(mt_tensor *idx, const mt_tensor *x, int nd, const int64_t *k, const int64_t *s,
                      const int64_t *p, const int64_t *d, int ceil_mode, int64_t base, const char *op) {
  int dev = 0;
  int64_t out[3];
  if (nm_device(op, x, NULL, 0, &dev) || mt_max_pool_plan(x, nd, k, s, p, d, ceil_mode, op, out)) return -1;
  pool_args a;
  memset(&a, 0, sizeof a);
  a.base = base;
  for (int j = 0; j < 3; j++) {
    const int i = j - (3 - nd);   /* x's spatial dim, or none for a plane's t */
    a.in[j] = i < 0 ? 1 : x->shape[2 + i];
    a.out[j] = i < 0 ? 1 : out[i];
    a.k[j] = i < 0 ? 1 : k[i];
    a.s[j] = i < 0 ? 1 : s[i];
    a.p[j] = i < 0 ? 0 : p[i];
    a.d[j] = i < 0 ? 1 : d[i];
  }
  return pool_run(idx, x, nd, &a, op, dev);
}

CU_EXTERN int cu_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s,
                                    const int64_t *p, const int64_t *d, int ceil_mode, int64_t base) {
  return fixed_pool(idx, x, 2, k, s, p, d, ceil_mode, base, "max_pool2d");
}

CU_EXTERN int cu_max_pool3d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s,
                                    const int64_t *p, const int64_t *d, int ceil_mode, int64_t base) {
  return fixed_pool(idx, x, 3, k, s, p, d, ceil_mode, base, "max_pool3d");
}

CU_EXTERN int cu_adaptive_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *out, int64_t base) {
  char bx[128];
  const char *op = "adaptive_max_pool2d";
  int dev = 0;
  if (nm_device(op, x, NULL, 0, &dev) || mt_pool_check_input(x, 2, op)) return -1;
  const int64_t in[2] = {x->shape[2], x->shape[3]};
  if (out[0] < 1 || out[1] < 1 || in[0] < 1 || in[1] < 1)
    return mt_fail("%s: cannot pool an input of size %s to %lldx%lld", op, mt_shape_str(x, bx, sizeof bx),
                   (long long)out[0], (long long)out[1]);
  for (int i = 0; i < 2; i++) {                  /* a window's bounds stay below out * (in + 1) */
    int64_t reach;
    if (__builtin_mul_overflow(out[i], in[i] + 1, &reach))
      return mt_fail("%s: an output of %lldx%lld is too large for the input %s", op, (long long)out[0],
                     (long long)out[1], mt_shape_str(x, bx, sizeof bx));
  }
  pool_args a;
  memset(&a, 0, sizeof a);
  a.in[0] = a.out[0] = 1;
  for (int i = 0; i < 2; i++) {
    a.in[1 + i] = in[i];
    a.out[1 + i] = out[i];
  }
  a.base = base;
  a.adaptive = 1;
  return pool_run(idx, x, 2, &a, op, dev);
}

/* ---- average pooling over volumes (avg_pool3d) and its adjoint ----
   A window's divisor is a product of one share per dim (its taps inside
   the input, or with count_pad the taps up to the padding's end; 1 with
   SUM), as mt_pool.c's separable passes weight them. The forward is a
   thread per output summing its window; the adjoint a thread per input
   element summing the outputs whose windows hold it (no atomics: the same
   sums in the same order every run). */
typedef struct {
  int64_t total;                  /* elements of the result */
  int64_t in[3], out[3], k[3], s[3], p[3];
  int count_pad, sum;
} avg_args;

/* the weight of output o's window along dim: 1 / its share of the divisor */
__device__ inline double avg_weight(const avg_args &a, int dim, int64_t o) {
  if (a.sum) return 1.0;
  const int64_t in = a.in[dim], start = o * a.s[dim] - a.p[dim];
  const int64_t lo = start < 0 ? 0 : start, hi = start + a.k[dim] < in ? start + a.k[dim] : in;
  const int64_t end = start + a.k[dim] < in + a.p[dim] ? start + a.k[dim] : in + a.p[dim];
  const int64_t share = a.count_pad ? end - start : hi - lo;
  return share < 1 ? 1.0 : 1.0 / (double)share;
}

template <class T>
__global__ void __launch_bounds__(NM_THREADS) avg_pool_kernel(avg_args a, const T *x, T *y) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  const int64_t H = a.in[1], W = a.in[2];
  for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < a.total; id += step) {
    int64_t r = id, o[3];
    for (int dim = 2; dim >= 0; dim--) {
      o[dim] = r % a.out[dim];
      r /= a.out[dim];
    }
    int64_t lo[3], hi[3];
    for (int dim = 0; dim < 3; dim++) {
      const int64_t start = o[dim] * a.s[dim] - a.p[dim], end = start + a.k[dim];
      lo[dim] = start < 0 ? 0 : start;
      hi[dim] = end < a.in[dim] ? end : a.in[dim];
    }
    const T *vol = x + r * a.in[0] * H * W;
    double acc = 0;
    for (int64_t t = lo[0]; t < hi[0]; t++)
      for (int64_t h = lo[1]; h < hi[1]; h++) {
        const T *row = vol + (t * H + h) * W;
        for (int64_t w = lo[2]; w < hi[2]; w++) acc += (double)row[w];
      }
    y[id] = (T)(acc * avg_weight(a, 0, o[0]) * avg_weight(a, 1, o[1]) * avg_weight(a, 2, o[2]));
  }
}

/* the outputs [*olo, *ohi] along dim whose windows hold input position i */
__device__ inline void avg_covering(const avg_args &a, int dim, int64_t i, int64_t *olo, int64_t *ohi) {
  const int64_t num = i + a.p[dim] - a.k[dim] + 1, top = (i + a.p[dim]) / a.s[dim];
  *olo = num <= 0 ? 0 : (num + a.s[dim] - 1) / a.s[dim];
  *ohi = top < a.out[dim] - 1 ? top : a.out[dim] - 1;
}

template <class T>
__global__ void __launch_bounds__(NM_THREADS) avg_pool_adjoint_kernel(avg_args a, const T *g, T *gx) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  const int64_t OH = a.out[1], OW = a.out[2];
  for (int64_t id = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; id < a.total; id += step) {
    int64_t r = id, i[3];
    for (int dim = 2; dim >= 0; dim--) {
      i[dim] = r % a.in[dim];
      r /= a.in[dim];
    }
    int64_t lo[3], hi[3];
    for (int dim = 0; dim < 3; dim++) avg_covering(a, dim, i[dim], &lo[dim], &hi[dim]);
    const T *vol = g + r * a.out[0] * OH * OW;
    double acc = 0;
    for (int64_t t = lo[0]; t <= hi[0]; t++) {
      const double wt = avg_weight(a, 0, t);
      for (int64_t h = lo[1]; h <= hi[1]; h++) {
        const double wth = wt * avg_weight(a, 1, h);
        const T *row = vol + (t * OH + h) * OW;
        for (int64_t w = lo[2]; w <= hi[2]; w++) acc += (double)row[w] * wth * avg_weight(a, 2, w);
      }
    }
    gx[id] = (T)acc;
  }
}

CU_EXTERN int cu_avg_pool3d(mt_tensor *r, const mt_tensor *x, const int64_t *pool, int flags,
                            const int64_t *in_volume) {
  const char *op = "avg_pool3d";
  int dev = 0;
  avg_args a;
  memset(&a, 0, sizeof a);
  if (nm_device(op, x, NULL, 0, &dev) || mt_avg_pool3d_plan(x, pool, flags, in_volume, op, a.in, a.out)) return -1;
  for (int i = 0; i < 3; i++) {
    a.k[i] = pool[i];
    a.s[i] = pool[3 + i];
    a.p[i] = pool[6 + i];
  }
  a.count_pad = (flags & MT_RS_COUNT_PAD) != 0;
  a.sum = (flags & MT_RS_SUM) != 0;
  const int64_t *vol = in_volume ? a.in : a.out;
  const int64_t shape[5] = {x->shape[0], x->shape[1], vol[0], vol[1], vol[2]};
  mt_tensor xc = {};
  if (mt_contiguous(&xc, x)) return -1;
  if (mt_tensor_init_on(op, r, x->dtype, 5, shape, MT_CUDA, dev)) {
    mt_tensor_release(&xc);
    return -1;
  }
  a.total = mt_numel(r);
  int rc = 0;
  if (a.total > 0) {
    const unsigned blocks = nm_blocks(a.total, NM_THREADS);
    cudaStream_t st = cu_stream(dev);
    if (mt_numel(&xc) == 0) {
      rc = mt_fill(r, 0);
    } else if (x->dtype == MT_FLOAT32) {
      if (in_volume) avg_pool_adjoint_kernel<float><<<blocks, NM_THREADS, 0, st>>>(a, (const float *)mt_data(&xc), (float *)mt_data(r));
      else avg_pool_kernel<float><<<blocks, NM_THREADS, 0, st>>>(a, (const float *)mt_data(&xc), (float *)mt_data(r));
      rc = CU_LAUNCHED(op);
    } else {
      if (in_volume) avg_pool_adjoint_kernel<double><<<blocks, NM_THREADS, 0, st>>>(a, (const double *)mt_data(&xc), (double *)mt_data(r));
      else avg_pool_kernel<double><<<blocks, NM_THREADS, 0, st>>>(a, (const double *)mt_data(&xc), (double *)mt_data(r));
      rc = CU_LAUNCHED(op);
    }
  }
  mt_tensor_release(&xc);
  if (rc) mt_tensor_release(r);
  return rc ? -1 : 0;
}

/* ---- normalisation ---- */

/* mt_norm_geom with what the kernels derive from it */
typedef struct {
  int64_t n, c, s, groups;
  int64_t per;                    /* channels per group (1 for batch norm) */
  int64_t count;                  /* statistics: mt_norm_count */
  int64_t size;                   /* elements behind one statistic */
} nm_geom;

static nm_geom nm_geom_of(const mt_norm_geom *g) {
  nm_geom k;
  k.n = g->n;
  k.c = g->c;
  k.s = g->s;
  k.groups = g->groups;
  k.per = g->groups ? g->c / g->groups : 1;
  k.count = mt_norm_count(g);
  k.size = (g->groups ? g->c / g->groups : g->n) * g->s;
  return k;
}

/* Elements as runs: run i is len elements from first + i * step. */
typedef struct {
  int64_t first, count, step, len;
} nm_run;

/* Statistic k's elements (mt_norm.c's stat_runs): batch norm, channel k of
   every sample; group norm, the group's channels of sample k / groups, a
   run per channel, or one run when merge (they are adjacent). */
__device__ inline nm_run nm_stat_run(const nm_geom &g, int64_t k, bool merge) {
  if (!g.groups) return nm_run{k * g.s, g.n, g.c * g.s, g.s};
  const int64_t first = (k / g.groups * g.c + k % g.groups * g.per) * g.s;
  if (merge) return nm_run{first, 1, 0, g.per * g.s};
  return nm_run{first, g.per, g.s, g.s};
}

/* Channel ch's elements: a run per sample. */
__device__ inline nm_run nm_channel_run(const nm_geom &g, int64_t ch) { return nm_run{ch * g.s, g.n, g.c * g.s, g.s}; }

/* Calls f(offset, run index) for this thread's share of r's elements: the
   runs one after another with the block's threads along each when they are
   long (coalesced, no division), else the elements flat (neighbouring
   threads on neighbouring elements of short runs). */
template <class F> __device__ inline void nm_visit(const nm_run &r, F f) {
  if (r.count == 1 || r.len >= (int64_t)blockDim.x) {
    for (int64_t i = 0; i < r.count; i++) {
      const int64_t o = r.first + i * r.step;
      for (int64_t j = threadIdx.x; j < r.len; j += blockDim.x) f(o + j, i);
    }
  } else {
    const int64_t total = r.count * r.len;
    for (int64_t e = threadIdx.x; e < total; e += blockDim.x) {
      const int64_t i = e / r.len;
      f(r.first + i * r.step + (e - i * r.len), i);
    }
  }
}

/* v[0..N) summed over the block (blockDim.x a multiple of 32), the sums in
   every thread; a fixed order, so the same inputs give the same bits. */
template <int N> __device__ inline void nm_block_sum(double (&v)[N]) {
  __shared__ double sm[N][32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = (int)(blockDim.x >> 5);
#pragma unroll
  for (int m = 0; m < N; m++)
    for (int off = 16; off > 0; off >>= 1) v[m] += __shfl_down_sync(0xffffffffu, v[m], off);
  if (lane == 0)
#pragma unroll
    for (int m = 0; m < N; m++) sm[m][warp] = v[m];
  __syncthreads();
  if (warp == 0) {
#pragma unroll
    for (int m = 0; m < N; m++) {
      v[m] = lane < warps ? sm[m][lane] : 0.0;
      for (int off = 16; off > 0; off >>= 1) v[m] += __shfl_down_sync(0xffffffffu, v[m], off);
    }
    if (lane == 0)
#pragma unroll
      for (int m = 0; m < N; m++) sm[m][0] = v[m];
  }
  __syncthreads();
#pragma unroll
  for (int m = 0; m < N; m++) v[m] = sm[m][0];
  __syncthreads();
}

/* threads for a block reducing size elements: a multiple of 32, up to NM_THREADS */
static int nm_reduce_threads(int64_t size) {
  if (size >= NM_THREADS) return NM_THREADS;
  const int64_t t = (size + 31) / 32 * 32;
  return t < 32 ? 32 : (int)t;
}

/* The statistics pass (mt_norm.c's moments and stats): per statistic the
   mean and the biased variance in two passes, in double; stats (2, count)
   gets the mean and 1 / sqrt(var + eps). Batch norm's running statistics
   (rm, rv: NULL or c elements at strides rms, rvs) move towards the stored
   mean and the unbiased variance. */
template <class T>
__global__ void __launch_bounds__(NM_THREADS)
    nm_stats_kernel(nm_geom g, const T *x, T *stats, T *rm, int64_t rms, T *rv, int64_t rvs, double eps,
                    double momentum) {
  for (int64_t k = blockIdx.x; k < g.count; k += gridDim.x) {
    const nm_run r = nm_stat_run(g, k, true);
    double sum[1] = {0};
    nm_visit(r, [&](int64_t o, int64_t) { sum[0] += (double)x[o]; });
    nm_block_sum(sum);
    const double m = sum[0] / (double)g.size;
    double sq[1] = {0};
    nm_visit(r, [&](int64_t o, int64_t) {
      const double dv = (double)x[o] - m;
      sq[0] += dv * dv;
    });
    nm_block_sum(sq);
    if (threadIdx.x == 0) {
      const double var = sq[0] / (double)g.size;
      const T mean = (T)m;
      stats[k] = mean;
      stats[g.count + k] = (T)(1 / sqrt(var + eps));
      /* as the CPU: the mean as stored, the variance unbiased from the double */
      if (rm) rm[k * rms] = (T)((1 - momentum) * (double)rm[k * rms] + momentum * (double)mean);
      if (rv)
        rv[k * rvs] = (T)((1 - momentum) * (double)rv[k * rvs] +
                          momentum * var * (double)g.size / (double)(g.size - 1));
    }
  }
}

/* Eval mode's statistics of channel ch from the running ones (E: their dtype). */
template <int E>
__global__ void __launch_bounds__(NM_THREADS)
    nm_running_kernel(int64_t c, const char *rm, int64_t rms, const char *rv, int64_t rvs, char *stats, double eps) {
  typedef typename cu_dt<E>::st st;
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t ch = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; ch < c; ch += step) {
    const double mean = (double)cu_dt<E>::load(rm + ch * rms * (int64_t)sizeof(st));
    const double var = (double)cu_dt<E>::load(rv + ch * rvs * (int64_t)sizeof(st));
    cu_dt<E>::store(stats + ch * (int64_t)sizeof(st), mean);
    cu_dt<E>::store(stats + (c + ch) * (int64_t)sizeof(st), 1 / sqrt(var + eps));
  }
}

/* The elementwise passes over (n, c, s): each (sample, channel) row's
   coefficients, then its elements.
     apply (GX false): y = x * scale + shift, scale = invstd * w,
       shift = b - mean * scale (coef: the statistics);
     the input gradient (GX true): gx = ti * w * gy + tx * x + t0, with
       coef (3, count) holding tx, t0, ti per statistic (nm_backward_kernel). */
template <class T> struct nm_point_args {
  T *out;
  const T *x, *gy, *coef, *w, *b;
};

template <class T, bool GX> struct nm_row_coef { T a, b, c; };

template <class T, bool GX>
__device__ inline nm_row_coef<T, GX> nm_coef_of(const nm_geom &g, const nm_point_args<T> &p, int64_t k, int64_t ch) {
  nm_row_coef<T, GX> r;
  if constexpr (GX) {
    r.a = p.coef[2 * g.count + k] * (p.w ? p.w[ch] : (T)1);
    r.b = p.coef[k];
    r.c = p.coef[g.count + k];
  } else {
    const T mean = p.coef[k], inv = p.coef[g.count + k];
    r.a = inv * (p.w ? p.w[ch] : (T)1);
    r.b = (p.b ? p.b[ch] : (T)0) - mean * r.a;
    r.c = 0;
  }
  return r;
}

template <class T, bool GX>
__device__ inline T nm_value(const nm_point_args<T> &p, const nm_row_coef<T, GX> &r, int64_t e) {
  if constexpr (GX) return r.a * p.gy[e] + r.b * p.x[e] + r.c;
  else return p.x[e] * r.a + r.b;
}

/* long rows: a block per row, its threads along s */
template <class T, bool GX>
__global__ void __launch_bounds__(NM_THREADS) nm_rows_kernel(nm_geom g, nm_point_args<T> p) {
  const int64_t rows = g.n * g.c;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const int64_t ch = row % g.c, k = g.groups ? row / g.c * g.groups + ch / g.per : ch;
    const nm_row_coef<T, GX> r = nm_coef_of<T, GX>(g, p, k, ch);
    for (int64_t j = threadIdx.x; j < g.s; j += blockDim.x) {
      const int64_t e = row * g.s + j;
      p.out[e] = nm_value<T, GX>(p, r, e);
    }
  }
}

/* short rows: a thread per element, in 32-bit index math where it fits */
template <class T, bool GX, class IDX>
__global__ void __launch_bounds__(NM_THREADS) nm_flat_kernel(nm_geom g, nm_point_args<T> p) {
  const IDX numel = (IDX)(g.n * g.c * g.s), s = (IDX)g.s, c = (IDX)g.c, per = (IDX)g.per, groups = (IDX)g.groups;
  const IDX step = (IDX)gridDim.x * blockDim.x;
  for (IDX e = (IDX)blockIdx.x * blockDim.x + threadIdx.x; e < numel; e += step) {
    const IDX row = e / s, ch = row % c, k = groups ? row / c * groups + ch / per : ch;
    const nm_row_coef<T, GX> r = nm_coef_of<T, GX>(g, p, (int64_t)k, (int64_t)ch);
    p.out[e] = nm_value<T, GX>(p, r, (int64_t)e);
  }
}

template <class T, bool GX> static int nm_pointwise(const char *op, const nm_geom &g, const nm_point_args<T> &p, int dev) {
  const int64_t numel = g.n * g.c * g.s;
  if (numel == 0) return 0;
  cudaStream_t st = cu_stream(dev);
  if (g.s >= 512)
    nm_rows_kernel<T, GX><<<nm_blocks(g.n * g.c, 1), NM_THREADS, 0, st>>>(g, p);
  else if (numel <= INT32_MAX / 2)
    nm_flat_kernel<T, GX, uint32_t><<<nm_blocks(numel, NM_THREADS), NM_THREADS, 0, st>>>(g, p);
  else
    nm_flat_kernel<T, GX, uint64_t><<<nm_blocks(numel, NM_THREADS), NM_THREADS, 0, st>>>(g, p);
  return CU_LAUNCHED(op);
}

/* The backward's reductions per statistic (mt_norm.c's backward_stat): with
   weights wj (batch norm: 1, the channel's weight applied after; group norm:
   each channel's), the sums of wj * gy and wj * gy * (x - mean). Batch norm
   writes gw and gb from the unweighted sums; coef (NULL: no input gradient)
   gets the input gradient's tx, t0 and ti per statistic. */
template <class T>
__global__ void __launch_bounds__(NM_THREADS)
    nm_backward_kernel(nm_geom g, const T *gy, const T *x, const T *stats, const T *w, T *coef, T *gw, T *gb,
                       int fixed_stats) {
  const double size = (double)g.size;
  const bool per_channel = g.groups && w;
  for (int64_t k = blockIdx.x; k < g.count; k += gridDim.x) {
    const nm_run r = nm_stat_run(g, k, !per_channel);
    const int64_t chan = g.groups ? k % g.groups * g.per : k;
    const double mean = (double)stats[k], inv = (double)stats[g.count + k];
    double acc[2] = {0, 0};
    nm_visit(r, [&](int64_t o, int64_t i) {
      const double wj = per_channel ? (double)w[chan + i] : 1.0, gj = (double)gy[o];
      acc[0] += wj * gj;
      acc[1] += wj * (gj * ((double)x[o] - mean));
    });
    nm_block_sum(acc);
    if (threadIdx.x != 0) continue;
    double a = acc[0], b = acc[1];
    if (!g.groups) {
      if (gw) gw[k] = (T)(inv * acc[1]);
      if (gb) gb[k] = (T)acc[0];
      const double wc = w ? (double)w[k] : 1.0;
      a = wc * acc[0];
      b = wc * acc[1];
    }
    if (coef) {
      const double cx = fixed_stats ? 0 : -inv * inv * inv * b / size;
      coef[k] = (T)cx;
      coef[g.count + k] = (T)(fixed_stats ? 0 : -inv * a / size - cx * mean);
      coef[2 * g.count + k] = (T)inv;
    }
  }
}

/* Group norm's gw and gb: a block per channel over every sample, each
   sample's elements with its own statistic: gb = sum gy, gw = sum invstd *
   gy * (x - mean). */
template <class T>
__global__ void __launch_bounds__(NM_THREADS)
    nm_channels_kernel(nm_geom g, const T *gy, const T *x, const T *stats, T *gw, T *gb) {
  for (int64_t ch = blockIdx.x; ch < g.c; ch += gridDim.x) {
    const nm_run r = nm_channel_run(g, ch);
    const int64_t grp = ch / g.per;
    double acc[2] = {0, 0};
    nm_visit(r, [&](int64_t o, int64_t i) {       /* run i: sample i */
      const int64_t k = i * g.groups + grp;
      const double mean = (double)stats[k], inv = (double)stats[g.count + k], gj = (double)gy[o];
      acc[0] += gj;
      acc[1] += inv * (gj * ((double)x[o] - mean));
    });
    nm_block_sum(acc);
    if (threadIdx.x == 0) {
      if (gw) gw[ch] = (T)acc[1];
      if (gb) gb[ch] = (T)acc[0];
    }
  }
}

/* ---- checks: mt_norm.c's, with its messages ---- */
static int nm_check_input(const mt_tensor *x, const mt_norm_geom *g) {
  char b[128];
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail("%s: expected a float32 or float64 input, got %s", g->op, mt_dtypes[x->dtype].name);
  if (mt_numel(x) != g->n * g->c * g->s || (g->groups && g->c % g->groups))
    return mt_fail("%s: input of size %s does not split into %lld x %lld x %lld (groups %lld)", g->op,
                   mt_shape_str(x, b, sizeof b), (long long)g->n, (long long)g->c, (long long)g->s,
                   (long long)g->groups);
  return 0;
}

static int nm_check_channels(const mt_tensor *t, const char *what, int dtype, const mt_norm_geom *g) {
  char b[128];
  if (!t) return 0;
  if (mt_numel(t) != g->c)
    return mt_fail("%s: %s must have %lld elements, got size %s", g->op, what, (long long)g->c,
                   mt_shape_str(t, b, sizeof b));
  if (t->dtype != dtype)
    return mt_fail("%s: %s is %s but the input is %s", g->op, what, mt_dtypes[t->dtype].name, mt_dtypes[dtype].name);
  return 0;
}

static int nm_check_stats(const mt_tensor *stats, const mt_norm_geom *g, int dtype) {
  if (stats->dtype != dtype || stats->ndim != 2 || stats->shape[0] != 2 || stats->shape[1] != mt_norm_count(g))
    return mt_fail("%s: statistics of the wrong size or dtype", g->op);
  return 0;
}

/* the operands as contiguous tensors on their device (aliases when they
   already are); a NULL one stays empty */
static int nm_contiguous_all(mt_tensor *out, const mt_tensor *const *in, int n) {
  for (int i = 0; i < n; i++)
    if (in[i] && mt_contiguous(&out[i], in[i])) {
      for (int k = 0; k < i; k++) mt_tensor_release(&out[k]);
      return -1;
    }
  return 0;
}

static void nm_release_all(mt_tensor *t, int n) {
  for (int i = 0; i < n; i++) mt_tensor_release(&t[i]);
}

template <class T> static const T *nm_ptr(const mt_tensor *t) { return t->storage ? (const T *)mt_data(t) : NULL; }

/* ---- entry points ---- */
CU_EXTERN int cu_norm_stats(mt_tensor *stats, const mt_tensor *x, const mt_norm_geom *g, double eps,
                            mt_tensor *running_mean, mt_tensor *running_var, double momentum) {
  char b[128];
  int dev = 0;
  const mt_tensor *others[2] = {running_mean, running_var};
  if (nm_device(g->op, x, others, 2, &dev)) return -1;
  if (nm_check_input(x, g) || nm_check_channels(running_mean, "running_mean", x->dtype, g) ||
      nm_check_channels(running_var, "running_var", x->dtype, g))
    return -1;
  mt_tensor *running[2] = {running_mean, running_var};
  for (int i = 0; i < 2; i++) {
    if (running[i] && running[i]->ndim != 1) return mt_fail("%s: running statistics must be 1-D", g->op);
    if (running[i] && mt_check_writable(g->op, running[i])) return -1;
  }
  /* the CPU updates statistic k's channel k: only batch norm's are channels */
  if (g->groups && (running_mean || running_var))
    return mt_fail("%s: running statistics are for batch norm only", g->op);
  const nm_geom k = nm_geom_of(g);
  if (!g->groups && k.size <= 1)
    return mt_fail("%s: expected more than 1 value per channel when training, got input size %s", g->op,
                   mt_shape_str(x, b, sizeof b));
  mt_tensor xc = {};
  if (mt_contiguous(&xc, x)) return -1;
  const int64_t shape[2] = {2, k.count};
  if (mt_tensor_init_on(g->op, stats, x->dtype, 2, shape, MT_CUDA, dev)) {
    mt_tensor_release(&xc);
    return -1;
  }
  int rc = 0;
  if (k.count > 0) {
    const unsigned blocks = nm_blocks(k.count, 1);
    const int threads = nm_reduce_threads(k.size);
    cudaStream_t st = cu_stream(dev);
    const int64_t rms = running_mean ? running_mean->stride[0] : 0, rvs = running_var ? running_var->stride[0] : 0;
    if (x->dtype == MT_FLOAT32)
      nm_stats_kernel<float><<<blocks, threads, 0, st>>>(
          k, (const float *)mt_data(&xc), (float *)mt_data(stats), running_mean ? (float *)mt_data(running_mean) : NULL,
          rms, running_var ? (float *)mt_data(running_var) : NULL, rvs, eps, momentum);
    else
      nm_stats_kernel<double><<<blocks, threads, 0, st>>>(
          k, (const double *)mt_data(&xc), (double *)mt_data(stats),
          running_mean ? (double *)mt_data(running_mean) : NULL, rms,
          running_var ? (double *)mt_data(running_var) : NULL, rvs, eps, momentum);
    rc = CU_LAUNCHED(g->op);
  }
  mt_tensor_release(&xc);
  if (rc) {
    mt_tensor_release(stats);
    return -1;
  }
  if (running_mean) running_mean->storage->version++;
  if (running_var) running_var->storage->version++;
  return 0;
}

CU_EXTERN int cu_norm_running_stats(mt_tensor *stats, const mt_tensor *running_mean, const mt_tensor *running_var,
                                    const mt_norm_geom *g, double eps, int dtype) {
  if (!running_mean || !running_var) return mt_fail("%s: expected running_mean and running_var", g->op);
  int dev = 0;
  const mt_tensor *others[1] = {running_var};
  if (nm_device(g->op, running_mean, others, 1, &dev)) return -1;
  if (nm_check_channels(running_mean, "running_mean", dtype, g) ||
      nm_check_channels(running_var, "running_var", dtype, g))
    return -1;
  if (running_mean->ndim != 1 || running_var->ndim != 1)
    return mt_fail("%s: running statistics must be 1-D", g->op);
  if (!mt_dtype_is_float((mt_dtype)dtype))
    return mt_fail("%s: expected floating-point running statistics, got %s", g->op, mt_dtypes[dtype].name);
  const int64_t shape[2] = {2, g->c};
  if (mt_tensor_init_on(g->op, stats, dtype, 2, shape, MT_CUDA, dev)) return -1;
  if (g->c == 0) return 0;
  const unsigned blocks = nm_blocks(g->c, NM_THREADS);
  cudaStream_t st = cu_stream(dev);
  const char *rm = mt_data(running_mean), *rv = mt_data(running_var);
  const int64_t rms = running_mean->stride[0], rvs = running_var->stride[0];
  char *out = mt_data(stats);
  switch (dtype) {
  case MT_FLOAT32: nm_running_kernel<MT_FLOAT32><<<blocks, NM_THREADS, 0, st>>>(g->c, rm, rms, rv, rvs, out, eps); break;
  case MT_FLOAT64: nm_running_kernel<MT_FLOAT64><<<blocks, NM_THREADS, 0, st>>>(g->c, rm, rms, rv, rvs, out, eps); break;
  case MT_FLOAT16: nm_running_kernel<MT_FLOAT16><<<blocks, NM_THREADS, 0, st>>>(g->c, rm, rms, rv, rvs, out, eps); break;
  default: nm_running_kernel<MT_BFLOAT16><<<blocks, NM_THREADS, 0, st>>>(g->c, rm, rms, rv, rvs, out, eps); break;
  }
  if (CU_LAUNCHED(g->op)) {
    mt_tensor_release(stats);
    return -1;
  }
  return 0;
}

CU_EXTERN int cu_norm_apply(mt_tensor *y, const mt_tensor *x, const mt_tensor *stats, const mt_tensor *w,
                            const mt_tensor *b, const mt_norm_geom *g) {
  int dev = 0;
  const mt_tensor *others[3] = {stats, w, b};
  if (nm_device(g->op, x, others, 3, &dev)) return -1;
  if (nm_check_input(x, g) || nm_check_stats(stats, g, x->dtype) || nm_check_channels(w, "weight", x->dtype, g) ||
      nm_check_channels(b, "bias", x->dtype, g))
    return -1;
  const mt_tensor *in[4] = {x, stats, w, b};
  mt_tensor c[4] = {};
  if (nm_contiguous_all(c, in, 4)) return -1;
  int rc = mt_tensor_init_on(g->op, y, x->dtype, x->ndim, x->shape, MT_CUDA, dev);
  if (rc == 0) {
    const nm_geom k = nm_geom_of(g);
    if (x->dtype == MT_FLOAT32) {
      const nm_point_args<float> p = {(float *)mt_data(y), nm_ptr<float>(&c[0]), NULL, nm_ptr<float>(&c[1]),
                                      nm_ptr<float>(&c[2]), nm_ptr<float>(&c[3])};
      rc = nm_pointwise<float, false>(g->op, k, p, dev);
    } else {
      const nm_point_args<double> p = {(double *)mt_data(y), nm_ptr<double>(&c[0]), NULL, nm_ptr<double>(&c[1]),
                                       nm_ptr<double>(&c[2]), nm_ptr<double>(&c[3])};
      rc = nm_pointwise<double, false>(g->op, k, p, dev);
    }
    if (rc) mt_tensor_release(y);
  }
  nm_release_all(c, 4);
  return rc ? -1 : 0;
}

/* the backward's launches for element type T, the operands contiguous */
template <class T>
static int nm_backward_run(const char *op, const nm_geom &k, T *gx, T *gw, T *gb, const T *gy, const T *x,
                           const T *stats, const T *w, int fixed_stats, int dev) {
  cudaStream_t st = cu_stream(dev);
  T *coef = NULL;
  const size_t coef_bytes = sizeof(T) * 3 * (size_t)(k.count ? k.count : 1);
  if (gx && !(coef = (T *)cu_alloc(coef_bytes, dev))) return mt_fail("%s backward: out of memory", op);
  int rc = 0;
  if ((gx || !k.groups) && k.count > 0) {
    nm_backward_kernel<T><<<nm_blocks(k.count, 1), nm_reduce_threads(k.size), 0, st>>>(
        k, gy, x, stats, w, coef, k.groups ? NULL : gw, k.groups ? NULL : gb, fixed_stats);
    rc = CU_LAUNCHED(op);
  }
  if (rc == 0 && gx) {
    const nm_point_args<T> p = {gx, x, gy, coef, w, NULL};
    rc = nm_pointwise<T, true>(op, k, p, dev);
  }
  if (rc == 0 && k.groups && (gw || gb) && k.c > 0) {
    nm_channels_kernel<T><<<nm_blocks(k.c, 1), nm_reduce_threads(k.n * k.s), 0, st>>>(k, gy, x, stats, gw, gb);
    rc = CU_LAUNCHED(op);
  }
  if (coef) cu_free(coef, coef_bytes, dev);
  return rc;
}

CU_EXTERN int cu_norm_backward(mt_tensor *gx, mt_tensor *gw, mt_tensor *gb, const mt_tensor *gy, const mt_tensor *x,
                               const mt_tensor *stats, const mt_tensor *w, const mt_norm_geom *g, int fixed_stats) {
  char bx[128], bg[128];
  int dev = 0;
  const mt_tensor *others[3] = {gy, stats, w};
  if (nm_device(g->op, x, others, 3, &dev)) return -1;
  if (nm_check_input(x, g) || nm_check_stats(stats, g, x->dtype) || nm_check_channels(w, "weight", x->dtype, g))
    return -1;
  if (!mt_same_shape(gy, x) || gy->dtype != x->dtype)
    return mt_fail("%s backward: gradient %s %s for input %s %s", g->op, mt_dtypes[gy->dtype].name,
                   mt_shape_str(gy, bg, sizeof bg), mt_dtypes[x->dtype].name, mt_shape_str(x, bx, sizeof bx));
  const mt_tensor *in[4] = {gy, x, stats, w};
  mt_tensor c[4] = {};
  if (nm_contiguous_all(c, in, 4)) return -1;
  const int64_t cshape[1] = {g->c};
  int rc = 0;
  if (rc == 0 && gx) rc = mt_tensor_init_on(g->op, gx, x->dtype, x->ndim, x->shape, MT_CUDA, dev);
  if (rc == 0 && gw) rc = mt_tensor_init_on(g->op, gw, x->dtype, 1, cshape, MT_CUDA, dev);
  if (rc == 0 && gb) rc = mt_tensor_init_on(g->op, gb, x->dtype, 1, cshape, MT_CUDA, dev);
  if (rc == 0) {
    const nm_geom k = nm_geom_of(g);
    if (x->dtype == MT_FLOAT32)
      rc = nm_backward_run<float>(g->op, k, gx ? (float *)mt_data(gx) : NULL, gw ? (float *)mt_data(gw) : NULL,
                                  gb ? (float *)mt_data(gb) : NULL, nm_ptr<float>(&c[0]), nm_ptr<float>(&c[1]),
                                  nm_ptr<float>(&c[2]), nm_ptr<float>(&c[3]), fixed_stats, dev);
    else
      rc = nm_backward_run<double>(g->op, k, gx ? (double *)mt_data(gx) : NULL, gw ? (double *)mt_data(gw) : NULL,
                                   gb ? (double *)mt_data(gb) : NULL, nm_ptr<double>(&c[0]), nm_ptr<double>(&c[1]),
                                   nm_ptr<double>(&c[2]), nm_ptr<double>(&c[3]), fixed_stats, dev);
  }
  if (rc) {
    if (gx) mt_tensor_release(gx);
    if (gw) mt_tensor_release(gw);
    if (gb) mt_tensor_release(gb);
  }
  nm_release_all(c, 4);
  return rc ? -1 : 0;
}
