/* mt_optim.c: the fused optimizer updates of mt_optim.h: one kernel per
   optimizer and compute type, run over [begin, end) ranges of contiguous
   operands, split across threads above a grain. */
#include <stdatomic.h>
#include <tgmath.h>
#include "mt_optim.h"
#include "mt_parallel.h"
#include "mt_isa.h"
#if defined(__SSE2__)
#include <immintrin.h>
#endif

/* parameter, gradient and up to three state buffers */
#define MT_OPTIM_MAX_OPERANDS 5
/* Below this many elements an update stays on one thread. An update does
   about ten flops an element over three to five streams, twice the work of
   an elementwise op, hence half of MT_ITER_GRAIN. */
#define MT_OPTIM_GRAIN 16384

/* Elements a kernel handles per pass: the square roots of a block go
   through a buffer of this many values, which stays in L1. */
#define MT_OPTIM_BLOCK 256

typedef void (*range_fn)(char **data, int64_t begin, int64_t end, const void *args);

/* Square roots of a block, in place, spelled out in vector instructions
   where the target has them (the build's -fno-math-errno would let the
   compiler do it too; these stay explicit for compilers that keep errno).
   In a build with clones (mt_isa.h) they are plain loops inlined into each
   clone, vectorised at its width. */
static inline __attribute__((always_inline)) void sqrt_f32(float *x, int64_t n) {
  int64_t i = 0;
#if MT_CLONING
  _Pragma("omp simd") for (int64_t j = 0; j < n; j++) x[j] = sqrtf(x[j]);
  i = n;
#elif defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(x + i, _mm512_sqrt_ps(_mm512_loadu_ps(x + i)));
#elif defined(__AVX__)
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
#elif defined(__SSE2__)
  for (; i + 4 <= n; i += 4) _mm_storeu_ps(x + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#endif
  for (; i < n; i++) x[i] = sqrtf(x[i]);
}

static inline __attribute__((always_inline)) void sqrt_f64(double *x, int64_t n) {
  int64_t i = 0;
#if MT_CLONING
  _Pragma("omp simd") for (int64_t j = 0; j < n; j++) x[j] = sqrt(x[j]);
  i = n;
#elif defined(__AVX512F__)
  for (; i + 8 <= n; i += 8) _mm512_storeu_pd(x + i, _mm512_sqrt_pd(_mm512_loadu_pd(x + i)));
#elif defined(__AVX__)
  for (; i + 4 <= n; i += 4) _mm256_storeu_pd(x + i, _mm256_sqrt_pd(_mm256_loadu_pd(x + i)));
#elif defined(__SSE2__)
  for (; i + 2 <= n; i += 2) _mm_storeu_pd(x + i, _mm_sqrt_pd(_mm_loadu_pd(x + i)));
#endif
  for (; i < n; i++) x[i] = sqrt(x[i]);
}

/* PyTorch's lerp: the form that is exact at the nearer end of the weight. */
#define LERP(from, to, w, w_low, w_rest) \
  ((w_low) ? (from) + (w) * ((to) - (from)) : (to) - ((to) - (from)) * (w_rest))
/* torch.maximum: NaN wins */
#define MAXIMUM(a, b) ((a) != (a) || (a) > (b) ? (a) : (b))
#define MIN_END(start, e) ((start) + MT_OPTIM_BLOCK < (e) ? (start) + MT_OPTIM_BLOCK : (e))
/* Loops over a kernel's variants: flags that decide which buffers a loop
   touches are compile-time constants of an always-inlined loop, so every
   variant vectorises without masked loads; the others are selects. */
#define LOOP static inline __attribute__((always_inline)) void

/* Products and quotients follow PyTorch's kernels term by term (addcmul is
   self + value * t1 * t2, addcdiv self + value * t1 / t2), so float32
   results agree with torch.optim to rounding. The gradient term gi is
   computed again in a second pass rather than stored: p and g are unchanged
   until that pass writes p. */

#define SGD_KERNEL(T, S)                                                        \
  LOOP sgd_loop_##S(char **data, int64_t b, int64_t e, const mt_sgd_args *a,    \
                    const int use_mom, const int first) {                       \
    T *restrict p = (T *)data[0], *restrict buf = (T *)data[2];                 \
    const T *restrict g = (const T *)data[1];                                   \
    const T lr = (T)a->lr, wd = (T)a->weight_decay, mom = (T)a->momentum;       \
    const T keep = (T)(1 - a->dampening), sign = a->maximize ? -1 : 1;          \
    const int decay = a->weight_decay != 0, nesterov = a->nesterov;             \
    _Pragma("omp simd")                                                         \
    for (int64_t i = b; i < e; i++) {                                           \
      T d = sign * g[i];                                                        \
      d = decay ? d + wd * p[i] : d;                                            \
      if (use_mom) {                                                            \
        T m = first ? d : buf[i] * mom + keep * d;                              \
        buf[i] = m;                                                             \
        d = nesterov ? d + mom * m : m;                                         \
      }                                                                         \
      p[i] = p[i] - lr * d;                                                     \
    }                                                                           \
  }                                                                             \
  static MT_CLONES void sgd_##S(char **data, int64_t b, int64_t e, const void *args) {    \
    const mt_sgd_args *a = args;                                                \
    if (a->momentum == 0) sgd_loop_##S(data, b, e, a, 0, 0);                    \
    else if (a->first_step) sgd_loop_##S(data, b, e, a, 1, 1);                  \
    else sgd_loop_##S(data, b, e, a, 1, 0);                                     \
  }

#define ADAM_KERNEL(T, S)                                                       \
  LOOP adam_loop_##S(char **data, int64_t b, int64_t e, const mt_adam_args *a,  \
                     const int amsgrad) {                                       \
    T *restrict p = (T *)data[0], *restrict m = (T *)data[2];                   \
    T *restrict v = (T *)data[3], *restrict vmax = (T *)data[4];                \
    const T *restrict g = (const T *)data[1];                                   \
    const T w = (T)(1 - a->beta1), w_rest = 1 - w, beta2 = (T)a->beta2;         \
    const T v_keep = (T)(1 - a->beta2), eps = (T)a->eps, wd = (T)a->weight_decay; \
    const int coupled = a->weight_decay != 0 && !a->decoupled, w_low = w < (T)0.5; \
    const T shrink = a->decoupled ? (T)(1 - a->lr * a->weight_decay) : 1;       \
    const T neg_step = (T)(-(a->lr / a->bias_correction1));                     \
    const T bc2_sqrt = (T)sqrt(a->bias_correction2), sign = a->maximize ? -1 : 1; \
    T root[MT_OPTIM_BLOCK];                                                     \
    for (int64_t start = b; start < e; start += MT_OPTIM_BLOCK) {               \
      const int64_t end = MIN_END(start, e);                                    \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = coupled ? gi + wd * p[i] : gi;                                     \
        T mi = LERP(m[i], gi, w, w_low, w_rest);                                \
        T vi = v[i] * beta2 + v_keep * gi * gi;                                 \
        m[i] = mi;                                                              \
        v[i] = vi;                                                              \
        if (amsgrad) {                                                          \
          vi = MAXIMUM(vmax[i], vi);                                            \
          vmax[i] = vi;                                                         \
        }                                                                       \
        root[i - start] = vi;                                                   \
      }                                                                         \
      sqrt_##S(root, end - start);                                              \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T denom = root[i - start] / bc2_sqrt + eps;                             \
        p[i] = p[i] * shrink + neg_step * m[i] / denom;                         \
      }                                                                         \
    }                                                                           \
  }                                                                             \
  static MT_CLONES void adam_##S(char **data, int64_t b, int64_t e, const void *args) {   \
    const mt_adam_args *a = args;                                               \
    if (a->amsgrad) adam_loop_##S(data, b, e, a, 1);                            \
    else adam_loop_##S(data, b, e, a, 0);                                       \
  }

#define RMSPROP_KERNEL(T, S)                                                    \
  LOOP rmsprop_loop_##S(char **data, int64_t b, int64_t e, const mt_rmsprop_args *a, \
                        const int centered, const int use_mom) {                \
    T *restrict p = (T *)data[0], *restrict sq = (T *)data[2];                  \
    T *restrict ga = (T *)data[3], *restrict buf = (T *)data[4];                \
    const T *restrict g = (const T *)data[1];                                   \
    const T alpha = (T)a->alpha, sq_keep = (T)(1 - a->alpha), eps = (T)a->eps;  \
    const T w = (T)(1 - a->alpha), w_rest = 1 - w, wd = (T)a->weight_decay;     \
    const T mom = (T)a->momentum, neg_lr = (T)(-a->lr), sign = a->maximize ? -1 : 1; \
    const int w_low = w < (T)0.5, decay = a->weight_decay != 0;                 \
    T root[MT_OPTIM_BLOCK];                                                     \
    for (int64_t start = b; start < e; start += MT_OPTIM_BLOCK) {               \
      const int64_t end = MIN_END(start, e);                                    \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = decay ? gi + wd * p[i] : gi;                                       \
        T si = sq[i] * alpha + sq_keep * gi * gi;                               \
        sq[i] = si;                                                             \
        if (centered) {                                                         \
          T gai = LERP(ga[i], gi, w, w_low, w_rest);                            \
          ga[i] = gai;                                                          \
          si = si + (T)-1 * gai * gai;                                          \
        }                                                                       \
        root[i - start] = si;                                                   \
      }                                                                         \
      sqrt_##S(root, end - start);                                              \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = decay ? gi + wd * p[i] : gi;                                       \
        T avg = root[i - start] + eps;                                          \
        if (use_mom) {                                                          \
          T bi = buf[i] * mom + gi / avg;                                       \
          buf[i] = bi;                                                          \
          p[i] = p[i] + neg_lr * bi;                                            \
        } else {                                                                \
          p[i] = p[i] + neg_lr * gi / avg;                                      \
        }                                                                       \
      }                                                                         \
    }                                                                           \
  }                                                                             \
  static MT_CLONES void rmsprop_##S(char **data, int64_t b, int64_t e, const void *args) { \
    const mt_rmsprop_args *a = args;                                            \
    const int use_mom = a->momentum > 0;                                        \
    if (a->centered) {                                                          \
      if (use_mom) rmsprop_loop_##S(data, b, e, a, 1, 1);                       \
      else rmsprop_loop_##S(data, b, e, a, 1, 0);                               \
    } else {                                                                    \
      if (use_mom) rmsprop_loop_##S(data, b, e, a, 0, 1);                       \
      else rmsprop_loop_##S(data, b, e, a, 0, 0);                               \
    }                                                                           \
  }

#define ADAGRAD_KERNEL(T, S)                                                    \
  static MT_CLONES void adagrad_##S(char **data, int64_t b, int64_t e, const void *args) { \
    const mt_adagrad_args *a = args;                                            \
    T *restrict p = (T *)data[0], *restrict sum = (T *)data[2];                 \
    const T *restrict g = (const T *)data[1];                                   \
    const T neg_clr = (T)(-a->clr), eps = (T)a->eps, wd = (T)a->weight_decay;   \
    const T sign = a->maximize ? -1 : 1;                                        \
    const int decay = a->weight_decay != 0;                                     \
    T root[MT_OPTIM_BLOCK];                                                     \
    for (int64_t start = b; start < e; start += MT_OPTIM_BLOCK) {               \
      const int64_t end = MIN_END(start, e);                                    \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = decay ? gi + wd * p[i] : gi;                                       \
        T si = sum[i] + gi * gi;                                                \
        sum[i] = si;                                                            \
        root[i - start] = si;                                                   \
      }                                                                         \
      sqrt_##S(root, end - start);                                              \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = decay ? gi + wd * p[i] : gi;                                       \
        p[i] = p[i] + neg_clr * gi / (root[i - start] + eps);                   \
      }                                                                         \
    }                                                                           \
  }

#define ADADELTA_KERNEL(T, S)                                                   \
  static MT_CLONES void adadelta_##S(char **data, int64_t b, int64_t e, const void *args) { \
    const mt_adadelta_args *a = args;                                           \
    T *restrict p = (T *)data[0], *restrict sq = (T *)data[2];                  \
    T *restrict acc = (T *)data[3];                                             \
    const T *restrict g = (const T *)data[1];                                   \
    const T rho = (T)a->rho, keep = (T)(1 - a->rho), eps = (T)a->eps;           \
    const T neg_lr = (T)(-a->lr), wd = (T)a->weight_decay, sign = a->maximize ? -1 : 1; \
    const int decay = a->weight_decay != 0;                                     \
    T std[MT_OPTIM_BLOCK], rms_delta[MT_OPTIM_BLOCK];                           \
    for (int64_t start = b; start < e; start += MT_OPTIM_BLOCK) {               \
      const int64_t end = MIN_END(start, e);                                    \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = decay ? gi + wd * p[i] : gi;                                       \
        T si = sq[i] * rho + keep * gi * gi;                                    \
        sq[i] = si;                                                             \
        std[i - start] = si + eps;                                              \
        rms_delta[i - start] = acc[i] + eps;                                    \
      }                                                                         \
      sqrt_##S(std, end - start);                                               \
      sqrt_##S(rms_delta, end - start);                                         \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = decay ? gi + wd * p[i] : gi;                                       \
        T delta = rms_delta[i - start] / std[i - start] * gi;                   \
        acc[i] = acc[i] * rho + keep * delta * delta;                           \
        p[i] = p[i] + neg_lr * delta;                                           \
      }                                                                         \
    }                                                                           \
  }

#define ADAMAX_KERNEL(T, S)                                                     \
  static MT_CLONES void adamax_##S(char **data, int64_t b, int64_t e, const void *args) { \
    const mt_adamax_args *a = args;                                             \
    T *restrict p = (T *)data[0], *restrict m = (T *)data[2];                   \
    T *restrict u = (T *)data[3];                                               \
    const T *restrict g = (const T *)data[1];                                   \
    const T w = (T)(1 - a->beta1), w_rest = 1 - w, beta2 = (T)a->beta2;         \
    const T eps = (T)a->eps, neg_clr = (T)(-a->clr), wd = (T)a->weight_decay;   \
    const T sign = a->maximize ? -1 : 1;                                        \
    const int w_low = w < (T)0.5, decay = a->weight_decay != 0;                 \
    _Pragma("omp simd")                                                         \
    for (int64_t i = b; i < e; i++) {                                           \
      T gi = sign * g[i];                                                       \
      gi = decay ? gi + wd * p[i] : gi;                                         \
      T mi = LERP(m[i], gi, w, w_low, w_rest);                                  \
      T decayed = u[i] * beta2, bound = fabs(gi) + eps;                         \
      T ui = MAXIMUM(decayed, bound);                                           \
      m[i] = mi;                                                                \
      u[i] = ui;                                                                \
      p[i] = p[i] + neg_clr * mi / ui;                                          \
    }                                                                           \
  }

#define NADAM_KERNEL(T, S)                                                      \
  static MT_CLONES void nadam_##S(char **data, int64_t b, int64_t e, const void *args) {  \
    const mt_nadam_args *a = args;                                              \
    T *restrict p = (T *)data[0], *restrict m = (T *)data[2];                   \
    T *restrict v = (T *)data[3];                                               \
    const T *restrict g = (const T *)data[1];                                   \
    const T w = (T)(1 - a->beta1), w_rest = 1 - w, beta2 = (T)a->beta2;         \
    const T v_keep = (T)(1 - a->beta2), eps = (T)a->eps, wd = (T)a->weight_decay; \
    const int coupled = a->weight_decay != 0 && !a->decoupled, w_low = w < (T)0.5; \
    const T shrink = a->decoupled ? (T)(1 - a->lr * a->weight_decay) : 1;       \
    const T bc2 = (T)a->bias_correction2, sign = a->maximize ? -1 : 1;          \
    const T grad_coef = (T)a->grad_coef, avg_coef = (T)a->avg_coef;             \
    T root[MT_OPTIM_BLOCK];                                                     \
    for (int64_t start = b; start < e; start += MT_OPTIM_BLOCK) {               \
      const int64_t end = MIN_END(start, e);                                    \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = coupled ? gi + wd * p[i] : gi;                                     \
        T vi = v[i] * beta2 + v_keep * gi * gi;                                 \
        m[i] = LERP(m[i], gi, w, w_low, w_rest);                                \
        v[i] = vi;                                                              \
        root[i - start] = vi / bc2;                                             \
      }                                                                         \
      sqrt_##S(root, end - start);                                              \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = coupled ? gi + wd * p[i] : gi;                                     \
        T denom = root[i - start] + eps;                                        \
        T pi = p[i] * shrink + grad_coef * gi / denom;                          \
        p[i] = pi + avg_coef * m[i] / denom;                                    \
      }                                                                         \
    }                                                                           \
  }

#define RADAM_KERNEL(T, S)                                                      \
  LOOP radam_loop_##S(char **data, int64_t b, int64_t e, const mt_radam_args *a, \
                      const int rectified) {                                    \
    T *restrict p = (T *)data[0], *restrict m = (T *)data[2];                   \
    T *restrict v = (T *)data[3];                                               \
    const T *restrict g = (const T *)data[1];                                   \
    const T w = (T)(1 - a->beta1), w_rest = 1 - w, beta2 = (T)a->beta2;         \
    const T v_keep = (T)(1 - a->beta2), eps = (T)a->eps, wd = (T)a->weight_decay; \
    const int coupled = a->weight_decay != 0 && !a->decoupled, w_low = w < (T)0.5; \
    const T shrink = a->decoupled ? (T)(1 - a->lr * a->weight_decay) : 1;       \
    const T lr = (T)a->lr, bc1 = (T)a->bias_correction1;                        \
    const T bc2_sqrt = (T)sqrt(a->bias_correction2), rect = (T)a->rect;         \
    const T sign = a->maximize ? -1 : 1;                                        \
    T root[MT_OPTIM_BLOCK];                                                     \
    for (int64_t start = b; start < e; start += MT_OPTIM_BLOCK) {               \
      const int64_t end = MIN_END(start, e);                                    \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T gi = sign * g[i];                                                     \
        gi = coupled ? gi + wd * p[i] : gi;                                     \
        T vi = v[i] * beta2 + v_keep * gi * gi;                                 \
        m[i] = LERP(m[i], gi, w, w_low, w_rest);                                \
        v[i] = vi;                                                              \
        root[i - start] = vi;                                                   \
      }                                                                         \
      if (rectified) sqrt_##S(root, end - start);                               \
      _Pragma("omp simd")                                                       \
      for (int64_t i = start; i < end; i++) {                                   \
        T step = m[i] / bc1 * lr;                                               \
        if (rectified) step = step * (bc2_sqrt / (root[i - start] + eps)) * rect; \
        p[i] = p[i] * shrink - step;                                            \
      }                                                                         \
    }                                                                           \
  }                                                                             \
  static MT_CLONES void radam_##S(char **data, int64_t b, int64_t e, const void *args) {  \
    const mt_radam_args *a = args;                                              \
    if (a->rect > 0) radam_loop_##S(data, b, e, a, 1);                          \
    else radam_loop_##S(data, b, e, a, 0);                                      \
  }

#define MT_OPTIM_KERNELS(T, S)                                                  \
  SGD_KERNEL(T, S) ADAM_KERNEL(T, S) RMSPROP_KERNEL(T, S) ADAGRAD_KERNEL(T, S)  \
  ADADELTA_KERNEL(T, S) ADAMAX_KERNEL(T, S) NADAM_KERNEL(T, S) RADAM_KERNEL(T, S)
MT_OPTIM_KERNELS(float, f32)
MT_OPTIM_KERNELS(double, f64)

/* ---- the driver ---- */
typedef struct {
  range_fn fn;
  char **data;
  const void *args;
} range_job;

static void range_chunk(void *job, int64_t begin, int64_t end) {
  const range_job *j = job;
  j->fn(j->data, begin, end, j->args);
}

static void run_ranges(range_fn fn, char **data, int64_t n, const void *args) {
  range_job job = {fn, data, args};
  mt_parallel_for(n, MT_OPTIM_GRAIN / 2, range_chunk, &job);
}

static const char *const roles[MT_OPTIM_MAX_OPERANDS] = {
  "parameter", "gradient", "state buffer", "state buffer", "state buffer"};

static int check_operands(const char *name, mt_tensor *const *ops, int nops) {
  const mt_tensor *p = ops[0];
  char b1[128], b2[128];
  for (int k = 0; k < nops; k++) {
    const mt_tensor *t = ops[k];
    if (!t) continue;
    if (!t->storage) return mt_fail("%s: the %s has no data", name, roles[k]);
    if (!mt_same_device(t, p)) {
      char d1[32], d2[32];
      return mt_fail("%s: the %s is on %s, the parameter on %s", name, roles[k], mt_tensor_device_str(t, d1, sizeof d1),
                     mt_tensor_device_str(p, d2, sizeof d2));
    }
    if (!mt_dtype_is_float(t->dtype))
      return mt_fail("%s: the %s must be floating point, got %s", name, roles[k], mt_dtypes[t->dtype].name);
    if (k > 0 && !mt_same_shape(t, p))
      return mt_fail("%s: the %s has shape %s, the parameter %s", name, roles[k],
                     mt_shape_str(t, b1, sizeof b1), mt_shape_str(p, b2, sizeof b2));
  }
  return 0;
}

/* An operand is used where it lies when it is contiguous, of the compute
   dtype and shares no storage with an earlier operand; otherwise through a
   contiguous copy. */
static int in_place(mt_tensor *const *ops, int k, int dtype) {
  const mt_tensor *t = ops[k];
  if (t->dtype != dtype || !mt_is_contiguous(t)) return 0;
  for (int j = 0; j < k; j++)
    if (ops[j] && ops[j]->storage == t->storage) return 0;
  return 1;
}

static mt_optim_device_fn device_updates[MT_NUM_DEVICES];
void mt_register_optim(int device, mt_optim_device_fn fn) {
  if (device > MT_CPU && device < MT_NUM_DEVICES) device_updates[device] = fn;
}

/* ops: parameter, gradient, state buffers (NULL where unused); every
   operand but the gradient is written. */
static int run_update(const char *name, mt_optim_kind kind, mt_tensor *const *ops, int nops, range_fn f32,
                      range_fn f64, const void *args) {
  if (check_operands(name, ops, nops)) return -1;
  const mt_tensor *p = ops[0];
  int device = p->storage->device;
  if (device != MT_CPU) {
    char d[32];
    if (device < 0 || device >= MT_NUM_DEVICES || !device_updates[device])
      return mt_fail("%s: no kernel for parameters on %s", name, mt_tensor_device_str(p, d, sizeof d));
    return device_updates[device](name, kind, ops, nops, args);
  }
  int dtype = p->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  mt_tensor work[MT_OPTIM_MAX_OPERANDS] = {{0}};
  char *data[MT_OPTIM_MAX_OPERANDS] = {0};
  int copied[MT_OPTIM_MAX_OPERANDS] = {0};
  int rc = 0;
  for (int k = 0; k < nops && rc == 0; k++) {
    if (!ops[k]) continue;
    if (in_place(ops, k, dtype)) { data[k] = mt_data(ops[k]); continue; }
    copied[k] = 1;
    rc = mt_tensor_init(&work[k], dtype, p->ndim, p->shape);
    if (rc == 0) rc = mt_copy(&work[k], ops[k]);
    if (rc == 0) data[k] = mt_data(&work[k]);
  }
  if (rc == 0) {
    run_ranges(dtype == MT_FLOAT64 ? f64 : f32, data, mt_numel(p), args);
    for (int k = 0; k < nops && rc == 0; k++) {
      if (!ops[k] || k == 1) continue;
      if (copied[k]) rc = mt_copy(ops[k], &work[k]);
      else ops[k]->storage->version++;
    }
  }
  for (int k = 0; k < nops; k++)
    if (copied[k]) mt_tensor_release(&work[k]);
  return rc;
}

static int need(const char *name, const mt_tensor *t, const char *what) {
  return t ? 0 : mt_fail("%s: %s is missing", name, what);
}

int mt_optim_sgd(mt_tensor *p, const mt_tensor *g, mt_tensor *momentum_buffer, const mt_sgd_args *a) {
  if (a->momentum != 0 && need("optim.sgd", momentum_buffer, "the momentum buffer")) return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, a->momentum != 0 ? momentum_buffer : NULL};
  return run_update("optim.sgd", MT_OPTIM_SGD, ops, 3, sgd_f32, sgd_f64, a);
}

int mt_optim_adam(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                  mt_tensor *max_exp_avg_sq, const mt_adam_args *a) {
  if (need("optim.adam", exp_avg, "exp_avg") || need("optim.adam", exp_avg_sq, "exp_avg_sq") ||
      (a->amsgrad && need("optim.adam", max_exp_avg_sq, "max_exp_avg_sq (amsgrad)")))
    return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, exp_avg, exp_avg_sq, a->amsgrad ? max_exp_avg_sq : NULL};
  return run_update("optim.adam", MT_OPTIM_ADAM, ops, 5, adam_f32, adam_f64, a);
}

int mt_optim_rmsprop(mt_tensor *p, const mt_tensor *g, mt_tensor *square_avg, mt_tensor *grad_avg,
                     mt_tensor *momentum_buffer, const mt_rmsprop_args *a) {
  if (need("optim.rmsprop", square_avg, "square_avg") ||
      (a->centered && need("optim.rmsprop", grad_avg, "grad_avg (centered)")) ||
      (a->momentum > 0 && need("optim.rmsprop", momentum_buffer, "the momentum buffer")))
    return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, square_avg, a->centered ? grad_avg : NULL,
                      a->momentum > 0 ? momentum_buffer : NULL};
  return run_update("optim.rmsprop", MT_OPTIM_RMSPROP, ops, 5, rmsprop_f32, rmsprop_f64, a);
}

int mt_optim_adagrad(mt_tensor *p, const mt_tensor *g, mt_tensor *sum, const mt_adagrad_args *a) {
  if (need("optim.adagrad", sum, "sum")) return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, sum};
  return run_update("optim.adagrad", MT_OPTIM_ADAGRAD, ops, 3, adagrad_f32, adagrad_f64, a);
}

int mt_optim_adadelta(mt_tensor *p, const mt_tensor *g, mt_tensor *square_avg, mt_tensor *acc_delta,
                      const mt_adadelta_args *a) {
  if (need("optim.adadelta", square_avg, "square_avg") || need("optim.adadelta", acc_delta, "acc_delta")) return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, square_avg, acc_delta};
  return run_update("optim.adadelta", MT_OPTIM_ADADELTA, ops, 4, adadelta_f32, adadelta_f64, a);
}

int mt_optim_adamax(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_inf,
                    const mt_adamax_args *a) {
  if (need("optim.adamax", exp_avg, "exp_avg") || need("optim.adamax", exp_inf, "exp_inf")) return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, exp_avg, exp_inf};
  return run_update("optim.adamax", MT_OPTIM_ADAMAX, ops, 4, adamax_f32, adamax_f64, a);
}

int mt_optim_nadam(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                   const mt_nadam_args *a) {
  if (need("optim.nadam", exp_avg, "exp_avg") || need("optim.nadam", exp_avg_sq, "exp_avg_sq")) return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, exp_avg, exp_avg_sq};
  return run_update("optim.nadam", MT_OPTIM_NADAM, ops, 4, nadam_f32, nadam_f64, a);
}

int mt_optim_radam(mt_tensor *p, const mt_tensor *g, mt_tensor *exp_avg, mt_tensor *exp_avg_sq,
                   const mt_radam_args *a) {
  if (need("optim.radam", exp_avg, "exp_avg") || need("optim.radam", exp_avg_sq, "exp_avg_sq")) return -1;
  mt_tensor *ops[] = {p, (mt_tensor *)g, exp_avg, exp_avg_sq};
  return run_update("optim.radam", MT_OPTIM_RADAM, ops, 4, radam_f32, radam_f64, a);
}

/* ---- the gradient scaler's unscale (torch.amp.GradScaler:unscale_) ----
   One pass per gradient: g *= inv_scale, noting whether any element was
   inf or NaN before. Every element is scaled, found or not, as PyTorch's
   _amp_foreach_non_finite_check_and_unscale_ does. */
typedef struct { double inv; atomic_int found; } unscale_args;

/* the pass over [begin, end) of a T gradient */
#define UNSCALE_RANGE(name, T)                                                    \
  static MT_CLONES void name(char **data, int64_t begin, int64_t end, const void *args) { \
    unscale_args *a = (unscale_args *)args;                                       \
    T *g = (T *)data[0];                                                          \
    const T inv = (T)a->inv;                                                      \
    int bad = 0;                                                                  \
    _Pragma("omp simd reduction(| : bad)")                                        \
    for (int64_t i = begin; i < end; i++) {                                       \
      const T v = g[i];                                                           \
      bad |= !isfinite(v);                                                        \
      g[i] = v * inv;                                                             \
    }                                                                             \
    if (bad) atomic_store(&a->found, 1);                                          \
  }
UNSCALE_RANGE(unscale_f32, float)
UNSCALE_RANGE(unscale_f64, double)

static mt_amp_unscale_fn device_unscales[MT_NUM_DEVICES];
void mt_register_amp_unscale(int device, mt_amp_unscale_fn fn) {
  if (device > MT_CPU && device < MT_NUM_DEVICES) device_unscales[device] = fn;
}

int mt_amp_unscale(mt_tensor *g, double inv_scale, int *found_inf) {
  const char *name = "GradScaler.unscale_";
  char d[32];
  if (!g->storage) return mt_fail("%s: the gradient has no data", name);
  if (!mt_dtype_is_float(g->dtype))
    return mt_fail("%s: gradients must be floating point, got %s", name, mt_dtypes[g->dtype].name);
  if (mt_check_writable(name, g)) return -1;
  int device = g->storage->device;
  if (device != MT_CPU) {
    if (device < 0 || device >= MT_NUM_DEVICES || !device_unscales[device])
      return mt_fail("%s: no kernel for gradients on %s", name, mt_tensor_device_str(g, d, sizeof d));
    return device_unscales[device](g, inv_scale, found_inf);
  }
  int dtype = g->dtype == MT_FLOAT64 ? MT_FLOAT64 : MT_FLOAT32;
  unscale_args a = {inv_scale, 0};
  mt_tensor work = {0};
  int copied = g->dtype != dtype || !mt_is_contiguous(g);
  if (copied && (mt_tensor_init(&work, dtype, g->ndim, g->shape) || mt_copy(&work, g))) {
    mt_tensor_release(&work);
    return -1;
  }
  char *data[1] = {mt_data(copied ? &work : g)};
  run_ranges(dtype == MT_FLOAT64 ? unscale_f64 : unscale_f32, data, mt_numel(g), &a);
  int rc = 0;
  if (copied) {
    rc = mt_copy(g, &work);
    mt_tensor_release(&work);
  } else {
    g->storage->version++;
  }
  if (atomic_load(&a.found)) *found_inf = 1;
  return rc;
}
