/* mt_norm.c: batch norm and group norm kernels (see mt_norm.h), for float32,
   float64, and bfloat16 and float16 inputs with float32 parameters. A
   statistic's elements are a few runs of contiguous elements; each pass
   goes over the statistics, spread over threads, with double accumulators. */
#include <math.h>
#include <string.h>
#include "mt_norm.h"
#include "mt_ops.h"
#include "mt_alloc.h"
#include "mt_iter.h"
#include "mt_parallel.h"
#include "mt_isa.h"
#include "mt_kernel.h"

/* Group norm's weight and bias gradients sum each channel over every
   sample: the samples are cut into at most this many blocks, each summed
   into its own 2 * c partials that are added in block order afterwards, so
   the result does not depend on the thread count. 64 blocks give 16
   threads four each and bound the partials at 128 * c doubles. */
#define NORM_MAX_BLOCKS 64

/* Statistic k's elements as runs: run i is len elements of x from
   first + i * step, weighted by w[chan + i * chan_step]; or, per_element,
   element j of the one run by w[chan + j] (group norm with s = 1, as layer
   norm, so that its loops stay long). */
typedef struct {
  int64_t first, count, step, len;
  int64_t chan, chan_step;
  int per_element;
} run_set;

static run_set stat_runs(const mt_norm_geom *g, int64_t k) {
  if (!g->groups) return (run_set){k * g->s, g->n, g->c * g->s, g->s, k, 0, 0};  /* channel k of every sample */
  const int64_t per = g->c / g->groups, chan = k % g->groups * per, first = (k / g->groups * g->c + chan) * g->s;
  if (g->s == 1) return (run_set){first, 1, 0, per, chan, 0, 1};
  return (run_set){first, per, g->s, g->s, chan, 1, 0};
}

/* The weight index of element j of run i. The kernels pass per_element as a
   constant, each calling an always-inlined body once per value, so that
   the compiler makes a version of the loops for each: with a weight per
   run, the weight is hoisted out of the inner loop. */
#define INLINE static inline __attribute__((always_inline))
INLINE int64_t weight_index(const run_set *rs, int64_t i, int64_t j, int per_element) {
  return per_element ? rs->chan + j : rs->chan + i * rs->chan_step;
}

/* elements behind one statistic */
static int64_t stat_size(const mt_norm_geom *g) {
  return (g->groups ? g->c / g->groups : g->n) * g->s;
}

/* What a pass reads and writes, as elements of the kernel's type (NULL: not
   given, or not wanted). */
typedef struct {
  const mt_norm_geom *g;
  int64_t count;                  /* statistics */
  const void *x, *gy, *w, *b;
  void *stats;                    /* written by the statistics pass, read by the others */
  void *y, *gx, *gw, *gb;
  double eps;
  double *var;                    /* the statistics pass: each one's biased variance */
  double *partial;                /* group norm's channel sums: (blocks, 2, c) */
  int64_t block;                  /* samples per block */
  int fixed_stats;
} norm_job;

#define NORM_KERNELS(N, T, X, E)                                                                              \
  /* mean and biased variance of the runs rs, in two passes */                                      \
  static MT_CLONES void moments_##N(const X *x, run_set rs, double *mean, double *var) {                       \
    double sum = 0, sq = 0;                                                                          \
    if (rs.step == rs.len) rs.len *= rs.count, rs.count = 1;       /* adjacent runs: one */          \
    for (int64_t i = 0; i < rs.count; i++) {                                                         \
      const X *run = x + rs.first + i * rs.step;                                                     \
      _Pragma("omp simd reduction(+ : sum)") for (int64_t j = 0; j < rs.len; j++) sum += MT_LOAD_##E(run + j);     \
    }                                                                                                \
    const double m = sum / (double)(rs.count * rs.len);                                              \
    for (int64_t i = 0; i < rs.count; i++) {                                                         \
      const X *run = x + rs.first + i * rs.step;                                                     \
      _Pragma("omp simd reduction(+ : sq)")                                                          \
      for (int64_t j = 0; j < rs.len; j++) sq += (MT_LOAD_##E(run + j) - m) * (MT_LOAD_##E(run + j) - m);                        \
    }                                                                                                \
    *mean = m;                                                                                       \
    *var = sq / (double)(rs.count * rs.len);                                                         \
  }                                                                                                  \
  static MT_CLONES void stats_##N(void *ctx, int64_t begin, int64_t end) {                                    \
    const norm_job *j = ctx;                                                                         \
    T *stats = j->stats;                                                                             \
    for (int64_t k = begin; k < end; k++) {                                                          \
      double m, v;                                                                                   \
      moments_##N(j->x, stat_runs(j->g, k), &m, &v);                                                 \
      stats[k] = (T)m;                                                                               \
      stats[j->count + k] = (T)(1 / sqrt(v + j->eps));                                               \
      j->var[k] = v;                                                                                 \
    }                                                                                                \
  }                                                                                                  \
  /* y = x * scale + shift over statistic k's runs */                                                \
  INLINE void apply_stat_##N(X *y, const X *x, const T *stats, const T *w, const T *b, const run_set *rs, \
                             int64_t k, int64_t count, int per_element) {                            \
    const T mean = stats[k], inv = stats[count + k];                                                 \
    for (int64_t i = 0; i < rs->count; i++) {                                                        \
      const X *xr = x + rs->first + i * rs->step;                                                    \
      X *yr = y + rs->first + i * rs->step;                                                          \
      for (int64_t j = 0; j < rs->len; j++) {                                                        \
        const int64_t e = weight_index(rs, i, j, per_element);                                      \
        const T scale = inv * (w ? w[e] : 1), shift = (b ? b[e] : 0) - mean * scale;                \
        MT_STORE_##E(yr + j, MT_LOAD_##E(xr + j) * scale + shift);                                                               \
      }                                                                                              \
    }                                                                                                \
  }                                                                                                  \
  static MT_CLONES void apply_##N(void *ctx, int64_t begin, int64_t end) {                                    \
    const norm_job *j = ctx;                                                                         \
    for (int64_t k = begin; k < end; k++) {                                                          \
      const run_set rs = stat_runs(j->g, k);                                                         \
      if (rs.per_element) apply_stat_##N(j->y, j->x, j->stats, j->w, j->b, &rs, k, j->count, 1);    \
      else apply_stat_##N(j->y, j->x, j->stats, j->w, j->b, &rs, k, j->count, 0);                   \
    }                                                                                                \
  }                                                                                                  \
  /* Per statistic: the sums of gy and gy * (x - mean) over its elements,                          \
     weighted by w (a, b) and not (q, p). With gh = gy * w and xhat =                               \
     (x - mean) * invstd, the input gradient is                                                     \
       invstd * (gh - mean(gh) - xhat * mean(gh * xhat))                                            \
     = invstd * w * gy + cx * (x - mean) - invstd * a / size,                                       \
     cx = -invstd^3 * b / size. For batch norm q and p also give gb and gw. */                    \
  INLINE void backward_stat_##N(X *gx, T *gw, T *gb, const X *gy, const X *x, const T *stats,        \
                                const T *w, const run_set *rs, int64_t k, int64_t count, double size, \
                                int fixed_stats, int per_element) {                                   \
    const double mean = stats[k], inv = stats[count + k];                                            \
    double a = 0, b = 0, q = 0, p = 0;                                                               \
    for (int64_t i = 0; i < rs->count; i++) {                                                        \
      const X *gr = gy + rs->first + i * rs->step, *xr = x + rs->first + i * rs->step;               \
      double qr = 0, pr = 0, ar = 0, br = 0;                                                         \
      if (per_element) {                                                                             \
        _Pragma("omp simd reduction(+ : qr, pr, ar, br)") for (int64_t j = 0; j < rs->len; j++) {    \
          const double wj = w ? w[rs->chan + j] : 1, gj = MT_LOAD_##E(gr + j), pj = gj * (MT_LOAD_##E(xr + j) - mean);          \
          qr += gj;                                                                                  \
          pr += pj;                                                                                  \
          ar += wj * gj;                                                                             \
          br += wj * pj;                                                                             \
        }                                                                                            \
      } else {                                                                                       \
        _Pragma("omp simd reduction(+ : qr, pr)") for (int64_t j = 0; j < rs->len; j++) {            \
          qr += MT_LOAD_##E(gr + j);                                                                 \
          pr += MT_LOAD_##E(gr + j) * (MT_LOAD_##E(xr + j) - mean);                                                              \
        }                                                                                            \
        const double wc = w ? w[weight_index(rs, i, 0, 0)] : 1;                                      \
        ar = wc * qr;                                                                                \
        br = wc * pr;                                                                                \
      }                                                                                              \
      a += ar;                                                                                       \
      b += br;                                                                                       \
      q += qr;                                                                                       \
      p += pr;                                                                                       \
    }                                                                                                \
    if (gw) gw[k] = (T)(inv * p);                                                                    \
    if (gb) gb[k] = (T)q;                                                                            \
    if (!gx) return;                                                                                 \
    const double cx = fixed_stats ? 0 : -inv * inv * inv * b / size;                                 \
    const T tx = (T)cx, t0 = (T)(fixed_stats ? 0 : -inv * a / size - cx * mean), ti = (T)inv;        \
    for (int64_t i = 0; i < rs->count; i++) {                                                        \
      const X *gr = gy + rs->first + i * rs->step, *xr = x + rs->first + i * rs->step;               \
      X *dr = gx + rs->first + i * rs->step;                                                         \
      for (int64_t j = 0; j < rs->len; j++)                                                          \
        MT_STORE_##E(dr + j, ti * (w ? w[weight_index(rs, i, j, per_element)] : 1) * MT_LOAD_##E(gr + j) + tx * MT_LOAD_##E(xr + j) + t0);    \
    }                                                                                                \
  }                                                                                                  \
  /* gw and gb only for batch norm, whose statistics are per channel */                            \
  static MT_CLONES void backward_groups_##N(void *ctx, int64_t begin, int64_t end) {                          \
    const norm_job *j = ctx;                                                                         \
    const double size = (double)stat_size(j->g);                                                     \
    T *gw = j->g->groups ? NULL : j->gw, *gb = j->g->groups ? NULL : j->gb;                          \
    for (int64_t k = begin; k < end; k++) {                                                          \
      const run_set rs = stat_runs(j->g, k);                                                         \
      if (rs.per_element)                                                                            \
        backward_stat_##N(j->gx, gw, gb, j->gy, j->x, j->stats, j->w, &rs, k, j->count, size, j->fixed_stats, 1); \
      else                                                                                           \
        backward_stat_##N(j->gx, gw, gb, j->gy, j->x, j->stats, j->w, &rs, k, j->count, size, j->fixed_stats, 0); \
    }                                                                                                \
  }                                                                                                  \
  /* group norm's gw and gb: a channel's elements belong to different                              \
     statistics. Block i sums samples [i * block, (i + 1) * block) into its                         \
     part of partial (blocks, 2, c), in memory order. */                                            \
  static MT_CLONES void backward_channels_##N(void *ctx, int64_t begin, int64_t end) {                        \
    const norm_job *j = ctx;                                                                         \
    const mt_norm_geom *g = j->g;                                                                    \
    const X *gy = j->gy, *x = j->x;                                                                  \
    const T *stats = j->stats;                                               \
    for (int64_t blk = begin; blk < end; blk++) {                                                    \
      double *q = j->partial + blk * 2 * g->c, *p = q + g->c;                                        \
      const int64_t s0 = blk * j->block, s1 = g->n - s0 < j->block ? g->n : s0 + j->block;          \
      memset(q, 0, sizeof(double) * 2 * (size_t)g->c);                                               \
      for (int64_t k = s0 * g->groups; k < s1 * g->groups; k++) {                                    \
        const run_set rs = stat_runs(g, k);                                                          \
        const double mean = stats[k], inv = stats[j->count + k];                                     \
        for (int64_t i = 0; i < rs.count; i++) {                                                     \
          const X *gr = gy + rs.first + i * rs.step, *xr = x + rs.first + i * rs.step;               \
          if (rs.per_element) {                            /* a column of sums per element */        \
            for (int64_t e = 0; e < rs.len; e++) {                                                   \
              q[rs.chan + e] += MT_LOAD_##E(gr + e);                                                 \
              p[rs.chan + e] += inv * MT_LOAD_##E(gr + e) * (MT_LOAD_##E(xr + e) - mean);                                        \
            }                                                                                        \
            continue;                                                                                \
          }                                                                                          \
          double qr = 0, pr = 0;                                                                     \
          _Pragma("omp simd reduction(+ : qr, pr)") for (int64_t e = 0; e < rs.len; e++) {           \
            qr += MT_LOAD_##E(gr + e);                                                               \
            pr += MT_LOAD_##E(gr + e) * (MT_LOAD_##E(xr + e) - mean);                                                            \
          }                                                                                          \
          q[weight_index(&rs, i, 0, 0)] += qr;                                                       \
          p[weight_index(&rs, i, 0, 0)] += inv * pr;                                                 \
        }                                                                                            \
      }                                                                                              \
    }                                                                                                \
  }                                                                                                  \
  /* gw and gb from the blocks' partial sums, added in block order */                               \
  static MT_CLONES void channel_sums_##N(const norm_job *j, int64_t blocks) {                                  \
    const int64_t c = j->g->c;                                                                       \
    T *gw = j->gw, *gb = j->gb;                                                                      \
    for (int64_t ch = 0; ch < c; ch++) {                                                             \
      double q = 0, p = 0;                                                                           \
      for (int64_t blk = 0; blk < blocks; blk++) {                                                   \
        q += j->partial[blk * 2 * c + ch];                                                           \
        p += j->partial[(blk * 2 + 1) * c + ch];                                                     \
      }                                                                                              \
      if (gw) gw[ch] = (T)p;                                                                         \
      if (gb) gb[ch] = (T)q;                                                                         \
    }                                                                                                \
  }
/* float32 and float64 in their own type; bfloat16 and float16 inputs (autocast's) read and
   written in their dtype, with float32 statistics and parameters, computed in float */
NORM_KERNELS(float, float, float, FLOAT32)
NORM_KERNELS(double, double, double, FLOAT64)
NORM_KERNELS(bf16, float, mt_bf16, BFLOAT16)
NORM_KERNELS(f16, float, mt_half, FLOAT16)

typedef struct {
  mt_chunk_fn stats, apply, backward_groups, backward_channels;
  void (*channel_sums)(const norm_job *j, int64_t blocks);
} norm_kernels;
#define NORM_ENTRY(N) {stats_##N, apply_##N, backward_groups_##N, backward_channels_##N, channel_sums_##N}
static const norm_kernels kernels_float = NORM_ENTRY(float), kernels_double = NORM_ENTRY(double),
                          kernels_bf16 = NORM_ENTRY(bf16), kernels_f16 = NORM_ENTRY(f16);

/* the kernels of an input of one of the four float dtypes (check_input allows no other) */
static const norm_kernels *kernels_for(int dtype) {
  switch (dtype) {
  case MT_FLOAT32: return &kernels_float;
  case MT_BFLOAT16: return &kernels_bf16;
  case MT_FLOAT16: return &kernels_f16;
  default: return &kernels_double;
  }
}

/* the dtype of the statistics and parameters (weight, bias, running stats) that go with an
   input: its own, float32 for bfloat16 and float16 */
static int param_dtype(int dtype) { return dtype == MT_BFLOAT16 || dtype == MT_FLOAT16 ? MT_FLOAT32 : dtype; }

/* Runs a pass over the statistics, across threads when there is enough work. */
static void over_stats(mt_chunk_fn fn, norm_job *j) {
  mt_parallel_for(j->count, mt_parallel_items(MT_ITER_GRAIN / 2, stat_size(j->g), 1), fn, j);
}

/* ---- checks ---- */
static int check_input(const mt_tensor *x, const mt_norm_geom *g) {
  char b[128];
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64 && x->dtype != MT_BFLOAT16 && x->dtype != MT_FLOAT16)
    return mt_fail("%s: expected a float32, float64, bfloat16 or float16 input, got %s", g->op,
                   mt_dtypes[x->dtype].name);
  if (mt_numel(x) != g->n * g->c * g->s || (g->groups && g->c % g->groups))
    return mt_fail("%s: input of size %s does not split into %lld x %lld x %lld (groups %lld)", g->op,
                   mt_shape_str(x, b, sizeof b), (long long)g->n, (long long)g->c, (long long)g->s,
                   (long long)g->groups);
  return 0;
}

/* a per-channel operand (weight, bias, running stats): c elements of the dtype that goes
   with an input of dtype xd (param_dtype) */
static int check_channels(const mt_tensor *t, const char *what, int xd, const mt_norm_geom *g) {
  char b[128];
  if (!t) return 0;
  if (mt_numel(t) != g->c)
    return mt_fail("%s: %s must have %lld elements, got size %s", g->op, what, (long long)g->c,
                   mt_shape_str(t, b, sizeof b));
  if (t->dtype != param_dtype(xd) && xd == param_dtype(xd))
    return mt_fail("%s: %s is %s but the input is %s", g->op, what, mt_dtypes[t->dtype].name, mt_dtypes[xd].name);
  if (t->dtype != param_dtype(xd))
    return mt_fail("%s: %s is %s but a %s input takes %s ones", g->op, what, mt_dtypes[t->dtype].name,
                   mt_dtypes[xd].name, mt_dtypes[param_dtype(xd)].name);
  return 0;
}

static int check_stats(const mt_tensor *stats, const mt_norm_geom *g, int xd) {
  if (stats->dtype != param_dtype(xd) || stats->ndim != 2 || stats->shape[0] != 2 || stats->shape[1] != mt_norm_count(g))
    return mt_fail("%s: statistics of the wrong size or dtype", g->op);
  return 0;
}

/* the operands as contiguous tensors (aliases when they already are); NULL stays empty */
static int contiguous_all(mt_tensor *out, const mt_tensor *const *in, int n) {
  for (int i = 0; i < n; i++)
    if (in[i] && mt_contiguous_as(&out[i], in[i], in[i]->dtype)) {
      for (int k = 0; k < i; k++) mt_tensor_release(&out[k]);
      return -1;
    }
  return 0;
}

static void release_all(mt_tensor *t, int n) {
  for (int i = 0; i < n; i++) mt_tensor_release(&t[i]);
}

static const void *data_or_null(const mt_tensor *t) { return t->storage ? mt_data(t) : NULL; }

/* where element c of a 1-D per-channel tensor lies */
static char *channel_ptr(const mt_tensor *t, int64_t c) {
  return mt_data(t) + c * t->stride[0] * mt_dtypes[t->dtype].size;
}

/* ---- entry points ---- */
int mt_norm_stats(mt_tensor *stats, const mt_tensor *x, const mt_norm_geom *g, double eps,
                  mt_tensor *running_mean, mt_tensor *running_var, double momentum) {
  if (__builtin_expect(mt_any_off_cpu(x, running_mean, running_var), 0))
    MT_EXTRA_CALL(g->op, norm_stats, x, running_mean, running_var, stats, x, g, eps, running_mean, running_var, momentum);
  char b[128];
  if (check_input(x, g) || check_channels(running_mean, "running_mean", x->dtype, g) ||
      check_channels(running_var, "running_var", x->dtype, g))
    return -1;
  mt_tensor *running[2] = {running_mean, running_var};
  for (int i = 0; i < 2; i++) {
    if (running[i] && running[i]->ndim != 1) return mt_fail("%s: running statistics must be 1-D", g->op);
    if (running[i] && mt_check_writable(g->op, running[i])) return -1;
  }
  const int64_t size = stat_size(g), count = mt_norm_count(g);
  if (!g->groups && size <= 1)
    return mt_fail("%s: expected more than 1 value per channel when training, got input size %s", g->op,
                   mt_shape_str(x, b, sizeof b));
  mt_tensor xc = {0};
  if (mt_contiguous_as(&xc, x, x->dtype)) return -1;
  const int64_t shape[2] = {2, count};
  double *var = mt_alloc(sizeof(double) * (size_t)(count ? count : 1));
  const int pd = param_dtype(x->dtype);
  int rc = var ? mt_tensor_init(stats, pd, 2, shape) : mt_fail("%s: out of memory", g->op);
  if (rc == 0) {
    norm_job job = {.g = g, .count = count, .x = mt_data(&xc), .stats = mt_data(stats), .eps = eps, .var = var};
    over_stats(kernels_for(x->dtype)->stats, &job);
    for (int64_t k = 0; k < count && (running_mean || running_var); k++) {
      if (running_mean) {
        char *p = channel_ptr(running_mean, k);
        const double mean = mt_get_f64(pd, mt_data(stats) + k * mt_dtypes[pd].size);
        mt_set_f64(pd, p, (1 - momentum) * mt_get_f64(pd, p) + momentum * mean);
      }
      if (running_var) {
        char *p = channel_ptr(running_var, k);
        mt_set_f64(pd, p, (1 - momentum) * mt_get_f64(pd, p) + momentum * var[k] * size / (size - 1));
      }
    }
    if (running_mean) running_mean->storage->version++;
    if (running_var) running_var->storage->version++;
  }
  if (var) mt_free(var, sizeof(double) * (size_t)(count ? count : 1));
  mt_tensor_release(&xc);
  return rc;
}

int mt_norm_running_stats(mt_tensor *stats, const mt_tensor *running_mean, const mt_tensor *running_var,
                          const mt_norm_geom *g, double eps, int dtype) {
  if (__builtin_expect(mt_any_off_cpu(running_mean, running_var, NULL), 0))
    MT_EXTRA_CALL(g->op, norm_running_stats, running_mean, running_var, NULL, stats, running_mean, running_var, g, eps,
                  dtype);
  if (check_channels(running_mean, "running_mean", dtype, g) || check_channels(running_var, "running_var", dtype, g))
    return -1;
  dtype = param_dtype(dtype);   /* dtype: the input's; the statistics are in its parameters' */
  if (running_mean->ndim != 1 || running_var->ndim != 1)
    return mt_fail("%s: running statistics must be 1-D", g->op);
  const int64_t shape[2] = {2, g->c};
  if (mt_tensor_init(stats, dtype, 2, shape)) return -1;
  const size_t es = mt_dtypes[dtype].size;
  for (int64_t c = 0; c < g->c; c++) {
    mt_set_f64(dtype, mt_data(stats) + c * es, mt_get_f64(dtype, channel_ptr(running_mean, c)));
    mt_set_f64(dtype, mt_data(stats) + (g->c + c) * es, 1 / sqrt(mt_get_f64(dtype, channel_ptr(running_var, c)) + eps));
  }
  return 0;
}

int mt_norm_apply(mt_tensor *y, const mt_tensor *x, const mt_tensor *stats, const mt_tensor *w,
                  const mt_tensor *b, const mt_norm_geom *g) {
  if (__builtin_expect(mt_any_off_cpu(x, stats, w) || (b && mt_device_of(b) != MT_CPU), 0))
    MT_EXTRA_CALL(g->op, norm_apply, x, stats, w, y, x, stats, w, b, g);
  if (check_input(x, g) || check_stats(stats, g, x->dtype) || check_channels(w, "weight", x->dtype, g) ||
      check_channels(b, "bias", x->dtype, g))
    return -1;
  const mt_tensor *in[4] = {x, stats, w, b};
  mt_tensor c[4] = {{0}};
  if (contiguous_all(c, in, 4)) return -1;
  int rc = mt_tensor_init(y, x->dtype, x->ndim, x->shape);
  if (rc == 0) {
    norm_job job = {.g = g, .count = mt_norm_count(g), .x = mt_data(&c[0]), .stats = mt_data(&c[1]),
                    .w = data_or_null(&c[2]), .b = data_or_null(&c[3]), .y = mt_data(y)};
    over_stats(kernels_for(x->dtype)->apply, &job);
  }
  release_all(c, 4);
  return rc;
}

int mt_norm_backward(mt_tensor *gx, mt_tensor *gw, mt_tensor *gb, const mt_tensor *gy, const mt_tensor *x,
                     const mt_tensor *stats, const mt_tensor *w, const mt_norm_geom *g, int fixed_stats) {
  if (__builtin_expect(mt_any_off_cpu(gy, x, stats) || (w && mt_device_of(w) != MT_CPU), 0))
    MT_EXTRA_CALL(g->op, norm_backward, gy, x, stats, gx, gw, gb, gy, x, stats, w, g, fixed_stats);
  char bx[128], bg[128];
  if (check_input(x, g) || check_stats(stats, g, x->dtype) || check_channels(w, "weight", x->dtype, g)) return -1;
  if (!mt_same_shape(gy, x) || gy->dtype != x->dtype)
    return mt_fail("%s backward: gradient %s %s for input %s %s", g->op, mt_dtypes[gy->dtype].name,
                   mt_shape_str(gy, bg, sizeof bg), mt_dtypes[x->dtype].name, mt_shape_str(x, bx, sizeof bx));
  const mt_tensor *in[4] = {gy, x, stats, w};
  mt_tensor c[4] = {{0}};
  if (contiguous_all(c, in, 4)) return -1;
  const int64_t cshape[1] = {g->c};
  norm_job job = {.g = g, .count = mt_norm_count(g), .gy = mt_data(&c[0]), .x = mt_data(&c[1]),
                  .stats = mt_data(&c[2]), .w = data_or_null(&c[3]), .fixed_stats = fixed_stats};
  /* group norm's gw and gb: blocks of at least a grain of samples, at most NORM_MAX_BLOCKS */
  const int channels = g->groups && (gw || gb);
  int64_t blocks = 0;
  size_t partial_bytes = 0;
  int rc = 0;
  if (channels) {
    int64_t sample_size;
    if (__builtin_mul_overflow(g->c, g->s, &sample_size)) sample_size = INT64_MAX;
    job.block = (g->n + NORM_MAX_BLOCKS - 1) / NORM_MAX_BLOCKS;
    int64_t min_block = mt_parallel_items(MT_ITER_GRAIN / 2, sample_size, 1);
    if (job.block < min_block) job.block = min_block;
    blocks = (g->n + job.block - 1) / job.block;
    if (__builtin_mul_overflow((size_t)blocks * 2 * sizeof(double), (size_t)g->c, &partial_bytes) ||
        !(job.partial = mt_alloc(partial_bytes)))
      rc = mt_fail("%s backward: out of memory", g->op);
  }
  if (rc == 0 && gx) rc = mt_tensor_init(gx, x->dtype, x->ndim, x->shape);
  if (rc == 0 && gw) rc = mt_tensor_init(gw, param_dtype(x->dtype), 1, cshape);
  if (rc == 0 && gb) rc = mt_tensor_init(gb, param_dtype(x->dtype), 1, cshape);
  if (rc == 0) {
    const norm_kernels *k = kernels_for(x->dtype);
    job.gx = gx ? mt_data(gx) : NULL;
    job.gw = gw ? mt_data(gw) : NULL;
    job.gb = gb ? mt_data(gb) : NULL;
    if (gx || !g->groups) over_stats(k->backward_groups, &job);
    if (channels) {
      mt_parallel_for(blocks, 1, k->backward_channels, &job);
      k->channel_sums(&job, blocks);
    }
  }
  if (job.partial) mt_free(job.partial, partial_bytes);
  release_all(c, 4);
  return rc;
}
