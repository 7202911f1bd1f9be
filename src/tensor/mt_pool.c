/* mt_pool.c: max pooling kernels (see mt_pool.h). Each dim's windows are
   listed first (first tap, number of taps, step), then one pass over each
   window, planes (volumes, for max_pool3d) spread over threads. A plane is
   pooled as a volume of one time step. */
#include "mt_pool.h"
#include "mt_ops.h"
#include "mt_alloc.h"
#include "mt_iter.h"
#include "mt_parallel.h"
#include "mt_resample.h"
#include "mt_isa.h"
#include <stdio.h>

int64_t mt_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode) {
  int overflow = 0;
  int64_t padded = mt_size_add(in, mt_size_mul(2, p, &overflow), &overflow);
  int64_t span = mt_size_sub(padded, mt_size_add(mt_size_mul(d, k - 1, &overflow), 1, &overflow), &overflow);
  if (overflow) return -1;
  if (span < 0) return 0;
  int64_t o = span / s + (ceil_mode && span % s) + 1;
  /* the last window must start before in + p: (o - 1) * s < in + p, without the product */
  if (ceil_mode && o > 1 && o - 1 > (in + p - 1) / s) o--;
  return o;
}

/* the windows of one dim: output o reads first[o] + a * step, a < count[o] */
typedef struct {
  int64_t out, step;
  int64_t *first, *count;
  int64_t k, s, p;    /* fixed windows: kernel, stride and padding (adaptive ones: 0) */
} windows;

/* max_pool2d's window o: k taps d apart from o * s - p, less those outside [0, in) */
static void fixed_window(windows *wd, int64_t o, int64_t in, int64_t k, int64_t s, int64_t p, int64_t d) {
  const int64_t start = o * s - p;
  const int64_t a0 = start < 0 ? (-start + d - 1) / d : 0;   /* the first tap at or after 0 */
  const int64_t last = in - 1 - start;                         /* taps up to here lie before in */
  const int64_t a1 = last < 0 ? 0 : (last / d + 1 < k ? last / d + 1 : k);
  wd->first[o] = start + a0 * d;
  wd->count[o] = a1 > a0 ? a1 - a0 : 0;
}

/* Max pooling, separable, a volume (t, h, w) at a time (a plane is a volume
   of one time step): the W windows of each row, then the H windows of those,
   then the T windows, each pass keeping a window's maximum and its position
   in the volume. A pass takes a tap only when it is greater than the best so
   far, or the first NaN (masks, not branches: which element wins is data, and
   unpredictable), so the winner is the first maximum in (t, h, w) order and a
   NaN beats a number. The H and T passes run along the contiguous rows of
   the previous result, which vectorises.

   W pass: rows (a, n) of x -> values dv and positions dp (a, wd->out). kw,
   sw, pw: the fixed windows' kernel, stride and padding (their interior,
   every tap inside the row, is one loop per tap; the edges tap by tap). */
#define POOL_ROWS(T)                                                                                  \
  static MT_CLONES void max_rows_##T(const T *restrict x, T *restrict dv, int64_t *restrict dp, int64_t a,       \
                           int64_t n, const windows *wd, int64_t kw, int64_t sw, int64_t pw) {         \
    const int64_t out = wd->out, d = wd->step;                                                        \
    int64_t lo = 0, hi;                                                                               \
    while (lo < out && !(wd->count[lo] == kw && wd->first[lo] == lo * sw - pw)) lo++;                 \
    hi = lo;                                                                                          \
    while (hi < out && wd->count[hi] == kw && wd->first[hi] == hi * sw - pw) hi++;                    \
    for (int64_t r = 0; r < a; r++) {                                                                 \
      const T *restrict row = x + r * n;                                                              \
      T *restrict bv = dv + r * out;                                                                  \
      int64_t *restrict bp = dp + r * out;                                                            \
      for (int64_t j = 0; j < out; j++) {                                                             \
        int64_t at = wd->first[j];                                                                    \
        T best = row[at];                                                                             \
        if (j < lo || j >= hi)                                                                        \
          for (int64_t c = 1; c < wd->count[j]; c++) {                                                \
            const int64_t q = wd->first[j] + c * d;                                                   \
            const T v = row[q];                                                                       \
            const int take = (v > best) | ((v != v) & (best == best));                                \
            at = take ? q : at;                                                                       \
            best = take ? v : best;                                                                   \
          }                                                                                           \
        bv[j] = best;                                                                                 \
        bp[j] = at;                                                                                   \
      }                                                                                               \
      for (int64_t c = 1; c < kw && lo < hi; c++) {                                                   \
        const int64_t shift = c * d - pw;                                                             \
        if (sw == 1) {                                                                                \
          for (int64_t j = lo; j < hi; j++) {                                                         \
            const T v = row[j + shift], best = bv[j];                                                 \
            const int take = (v > best) | ((v != v) & (best == best));                                \
            bv[j] = take ? v : best;                                                                  \
            bp[j] = take ? j + shift : bp[j];                                                         \
          }                                                                                           \
        } else {                                                                                      \
          for (int64_t j = lo; j < hi; j++) {                                                         \
            const int64_t q = j * sw + shift;                                                         \
            const T v = row[q], best = bv[j];                                                         \
            const int take = (v > best) | ((v != v) & (best == best));                                \
            bv[j] = take ? v : best;                                                                  \
            bp[j] = take ? q : bp[j];                                                                 \
          }                                                                                           \
        }                                                                                             \
      }                                                                                               \
      for (int64_t j = 0; j < out; j++) bp[j] += r * n;                                               \
    }                                                                                                 \
  }                                                                                                   \
  /* H and T passes: (a, n, b) values sv and positions sp -> (a, wd->out, b), the windows along n;   \
     positions plus base */                                                                           \
  static MT_CLONES void max_mid_##T(const T *restrict sv, const int64_t *restrict sp, T *restrict dv,           \
                          int64_t *restrict dp, int64_t a, int64_t n, int64_t b, const windows *wd,   \
                          int64_t base) {                                                             \
    const int64_t out = wd->out;                                                                      \
    for (int64_t r = 0; r < a; r++)                                                                   \
      for (int64_t o = 0; o < out; o++) {                                                             \
        const T *restrict v0 = sv + (r * n + wd->first[o]) * b;                                       \
        const int64_t *restrict p0 = sp + (r * n + wd->first[o]) * b;                                 \
        T *restrict bv = dv + (r * out + o) * b;                                                      \
        int64_t *restrict bp = dp + (r * out + o) * b;                                                \
        for (int64_t k = 0; k < b; k++) {                                                             \
          bv[k] = v0[k];                                                                              \
          bp[k] = p0[k];                                                                              \
        }                                                                                             \
        for (int64_t c = 1; c < wd->count[o]; c++) {                                                  \
          const T *restrict vc = v0 + c * wd->step * b;                                               \
          const int64_t *restrict pc = p0 + c * wd->step * b;                                         \
          for (int64_t k = 0; k < b; k++) {                                                           \
            const T v = vc[k], best = bv[k];                                                          \
            const int take = (v > best) | ((v != v) & (best == best));                                \
            bv[k] = take ? v : best;                                                                  \
            bp[k] = take ? pc[k] : bp[k];                                                             \
          }                                                                                           \
        }                                                                                             \
        if (base)                                                                                     \
          for (int64_t k = 0; k < b; k++) bp[k] += base;                                              \
      }                                                                                               \
  }
POOL_ROWS(float)
POOL_ROWS(double)

/* The common 2x2 window at stride 2, every window inside the plane (oh =
   h / 2, ow = w / 2, floored): a straight pass over each pair of rows that
   the compiler vectorises, with max_plane's order and NaN rule (the first
   maximum in row-major order wins; a NaN beats a number, the first NaN
   stays). */
#define POOL_MAX_2X2(T)                                                                               \
  static MT_CLONES void max_plane_2x2_##T(const T *restrict x, int64_t *restrict out, int64_t w, int64_t oh,    \
                                int64_t ow, int64_t base) {                                           \
    for (int64_t i = 0; i < oh; i++) {                                                                \
      const T *r0 = x + 2 * i * w, *r1 = r0 + w;                                                      \
      int64_t *o = out + i * ow;                                                                      \
      const int64_t row = 2 * i * w + base;                                                           \
      for (int64_t j = 0; j < ow; j++) {                                                              \
        const T a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];                   \
        T best = a;                                                                                   \
        int64_t at = 0;                                                                               \
        int tb = (b > best) | ((b != b) & (best == best));                                            \
        best = tb ? b : best;                                                                         \
        at = tb ? 1 : at;                                                                             \
        int tc = (c > best) | ((c != c) & (best == best));                                            \
        best = tc ? c : best;                                                                         \
        at = tc ? w : at;                                                                             \
        int td = (d > best) | ((d != d) & (best == best));                                            \
        at = td ? w + 1 : at;                                                                         \
        o[j] = row + 2 * j + at;                                                                      \
      }                                                                                               \
    }                                                                                                 \
  }
POOL_MAX_2X2(float)
POOL_MAX_2X2(double)

#if defined(__x86_64__)
#include <immintrin.h>
/* max_plane_2x2_float, 16 windows at a time: the even and odd columns of
   both rows pulled apart by permutes, the same compares as masks; compiled
   for AVX-512 whatever the build's target, taken where the CPU has it */
static __attribute__((target("avx512f"))) void max_plane_2x2_f32x16(const float *restrict x, int64_t *restrict out, int64_t w, int64_t oh, int64_t ow,
                                 int64_t base) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i one = _mm512_set1_epi32(1), down = _mm512_set1_epi32((int)w), diag = _mm512_set1_epi32((int)w + 1);
  for (int64_t i = 0; i < oh; i++) {
    const float *r0 = x + 2 * i * w, *r1 = r0 + w;
    int64_t *o = out + i * ow;
    const __m512i row = _mm512_set1_epi64(2 * i * w + base);
    for (int64_t j = 0; j < ow; j += 16) {
      /* the last windows of a row: masked loads of the 2n columns left, masked stores of n */
      const int64_t n = ow - j < 16 ? ow - j : 16;
      const __mmask16 ml = (__mmask16)(n >= 8 ? 0xffffu : (1u << (2 * n)) - 1u);
      const __mmask16 mh = (__mmask16)(n >= 16 ? 0xffffu : n > 8 ? (1u << (2 * n - 16)) - 1u : 0u);
      const __m512 l0 = _mm512_maskz_loadu_ps(ml, r0 + 2 * j), h0 = _mm512_maskz_loadu_ps(mh, r0 + 2 * j + 16);
      const __m512 l1 = _mm512_maskz_loadu_ps(ml, r1 + 2 * j), h1 = _mm512_maskz_loadu_ps(mh, r1 + 2 * j + 16);
      const __m512 a = _mm512_permutex2var_ps(l0, even, h0), b = _mm512_permutex2var_ps(l0, odd, h0);
      const __m512 c = _mm512_permutex2var_ps(l1, even, h1), d = _mm512_permutex2var_ps(l1, odd, h1);
      __m512 best = a;
      __m512i at = _mm512_setzero_si512();
      __mmask16 t = _mm512_cmp_ps_mask(b, best, _CMP_GT_OQ) |
                    (_mm512_cmp_ps_mask(b, b, _CMP_UNORD_Q) & _mm512_cmp_ps_mask(best, best, _CMP_ORD_Q));
      best = _mm512_mask_blend_ps(t, best, b);
      at = _mm512_mask_blend_epi32(t, at, one);
      t = _mm512_cmp_ps_mask(c, best, _CMP_GT_OQ) |
          (_mm512_cmp_ps_mask(c, c, _CMP_UNORD_Q) & _mm512_cmp_ps_mask(best, best, _CMP_ORD_Q));
      best = _mm512_mask_blend_ps(t, best, c);
      at = _mm512_mask_blend_epi32(t, at, down);
      t = _mm512_cmp_ps_mask(d, best, _CMP_GT_OQ) |
          (_mm512_cmp_ps_mask(d, d, _CMP_UNORD_Q) & _mm512_cmp_ps_mask(best, best, _CMP_ORD_Q));
      at = _mm512_mask_blend_epi32(t, at, diag);
      at = _mm512_add_epi32(at, _mm512_add_epi32(even, _mm512_set1_epi32((int)(2 * j))));
      const __m512i lo = _mm512_add_epi64(row, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(at)));
      const __m512i hi = _mm512_add_epi64(row, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(at, 1)));
      if (n == 16) {
        _mm512_storeu_si512(o + j, lo);
        _mm512_storeu_si512(o + j + 8, hi);
      } else {
        _mm512_mask_storeu_epi64(o + j, (__mmask8)(n >= 8 ? 0xffu : (1u << n) - 1u), lo);
        if (n > 8) _mm512_mask_storeu_epi64(o + j + 8, (__mmask8)((1u << (n - 8)) - 1u), hi);
      }
    }
  }
}
#endif

/* one plane of the 2x2 stride-2 pooling */
static void max_plane_2x2(const char *plane, int dtype, int64_t *out, int64_t w, int64_t oh, int64_t ow, int64_t base) {
  if (dtype == MT_FLOAT64) {
    max_plane_2x2_double((const double *)plane, out, w, oh, ow, base);
    return;
  }
#if defined(__x86_64__)
  __builtin_cpu_init();                /* once; then a test of a bit cpuid set */
  if (__builtin_cpu_supports("avx512f") && w < ((int64_t)1 << 29)) {
    max_plane_2x2_f32x16((const float *)plane, out, w, oh, ow, base);
    return;
  }
#endif
  max_plane_2x2_float((const float *)plane, out, w, oh, ow, base);
}

/* "AxBxC": the n values of v */
static const char *dims_str(char *buf, size_t len, int n, const int64_t *v) {
  size_t used = 0;
  buf[0] = 0;
  for (int i = 0; i < n && used < len; i++) {
    int k = snprintf(buf + used, len - used, i ? "x%lld" : "%lld", (long long)v[i]);
    if (k < 0) break;
    used += (size_t)k;
  }
  return buf;
}

/* x is an (n, c, h, w) batch of planes (nd 2) or an (n, c, t, h, w) one of volumes (nd 3) */
static int check_input(const mt_tensor *x, int nd, const char *op) {
  char bx[128];
  if (x->ndim != nd + 2)
    return mt_fail("%s: expected a %d-D input %s, got %s", op, nd + 2, nd == 3 ? "(n, c, t, h, w)" : "(n, c, h, w)",
                   mt_shape_str(x, bx, sizeof bx));
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail("%s: expected float32 or float64, got %s", op, mt_dtypes[x->dtype].name);
  return 0;
}

/* room for the windows of an output volume out (t, h, w), in one block */
static int windows_alloc(windows wd[3], const int64_t out[3], const char *op) {
  size_t entries, bytes;
  char bo[96];
  if (__builtin_add_overflow(out[0], out[1], &entries) || __builtin_add_overflow(entries, out[2], &entries) ||
      __builtin_mul_overflow(entries, 2 * sizeof(int64_t), &bytes))
    return mt_fail("%s: an output of %s is too large", op, dims_str(bo, sizeof bo, 3, out));
  int64_t *block = mt_alloc(bytes);
  if (!block) return mt_fail("%s: out of memory", op);
  for (int i = 0; i < 3; i++) {
    wd[i] = (windows){out[i], 1, block, block + out[i], 0, 0, 0};
    block += 2 * out[i];
  }
  return 0;
}

static void windows_free(windows wd[3]) {
  mt_free(wd[0].first, sizeof(int64_t) * (size_t)(2 * (wd[0].out + wd[1].out + wd[2].out)));
}

typedef struct {
  const char *xd;
  int64_t *out;
  const windows *wd;
  int64_t t, h, w, vol, es, len, base;
  int64_t scratch;    /* the separable passes' scratch, in elements (a value and a position each) */
  int dtype, two;     /* two: the (h, w) windows 2x2 at stride 2 (max_plane_2x2) */
  int failed;         /* set when a thread's scratch could not be had */
} pool_job;

/* the separable passes over volumes [begin, end), each through the scratch s:
   the W pass's (t, h, ow) values and positions, the H pass's (t, oh, ow) and
   the T pass's values */
static void pool_volumes_separable(pool_job *j, int64_t begin, int64_t end) {
  const windows *wt = &j->wd[0], *wh = &j->wd[1], *ww = &j->wd[2];
  const size_t bytes = (size_t)j->scratch * (sizeof(int64_t) + (size_t)j->es);
  char *s = mt_alloc(bytes);
  if (!s) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  const int64_t n1 = j->t * j->h * ww->out, n2 = j->t * wh->out * ww->out;
  int64_t *p1 = (int64_t *)s, *p2 = p1 + n1;
  char *v = (char *)(p2 + n2);
  for (int64_t q = begin; q < end; q++) {
    const char *vol = j->xd + q * j->vol * j->es;
    int64_t *out = j->out + q * j->len;
    if (j->two) {
      /* the (h, w) windows 2x2 at stride 2: max_plane_2x2 per time step, then the values there */
      const int64_t hw = j->h * j->w, ohw = wh->out * ww->out;
      for (int64_t t = 0; t < j->t; t++)
        max_plane_2x2(vol + t * hw * j->es, j->dtype, p2 + t * ohw, j->w, wh->out, ww->out, t * hw);
      if (j->dtype == MT_FLOAT32) {
        float *v2 = (float *)v + n1, *v3 = v2 + n2;
        for (int64_t k = 0; k < n2; k++) v2[k] = ((const float *)vol)[p2[k]];
        max_mid_float(v2, p2, v3, out, 1, j->t, ohw, wt, j->base);
      } else {
        double *v2 = (double *)v + n1, *v3 = v2 + n2;
        for (int64_t k = 0; k < n2; k++) v2[k] = ((const double *)vol)[p2[k]];
        max_mid_double(v2, p2, v3, out, 1, j->t, ohw, wt, j->base);
      }
    } else if (j->dtype == MT_FLOAT32) {
      float *v1 = (float *)v, *v2 = v1 + n1, *v3 = v2 + n2;
      max_rows_float((const float *)vol, v1, p1, j->t * j->h, j->w, ww, ww->k, ww->s, ww->p);
      max_mid_float(v1, p1, v2, p2, j->t, j->h, ww->out, wh, 0);
      max_mid_float(v2, p2, v3, out, 1, j->t, wh->out * ww->out, wt, j->base);
    } else {
      double *v1 = (double *)v, *v2 = v1 + n1, *v3 = v2 + n2;
      max_rows_double((const double *)vol, v1, p1, j->t * j->h, j->w, ww, ww->k, ww->s, ww->p);
      max_mid_double(v1, p1, v2, p2, j->t, j->h, ww->out, wh, 0);
      max_mid_double(v2, p2, v3, out, 1, j->t, wh->out * ww->out, wt, j->base);
    }
  }
  mt_free(s, bytes);
}

static void pool_volumes(void *job, int64_t begin, int64_t end) {
  pool_job *j = job;
  if (!j->two || j->t > 1 || j->wd[0].out > 1) {
    pool_volumes_separable(j, begin, end);
    return;
  }
  for (int64_t q = begin; q < end; q++)
    max_plane_2x2(j->xd + q * j->vol * j->es, j->dtype, j->out + q * j->len, j->w, j->wd[1].out, j->wd[2].out,
                  j->base);
}

/* idx (n, c, [ot,] oh, ow) of x (nd 2: (n, c, h, w); 3: (n, c, t, h, w)) over
   the windows wd (t, h, w; a plane's t windows are one over its one step),
   freed here */
static int pool_indices(mt_tensor *idx, const mt_tensor *x, windows wd[3], int nd, int64_t base, const char *op) {
  const int64_t n = x->shape[0], c = x->shape[1], h = x->shape[nd], w = x->shape[nd + 1];
  const int64_t t = nd == 3 ? x->shape[2] : 1;
  const int64_t shape[5] = {n, c, nd == 3 ? wd[0].out : wd[1].out, nd == 3 ? wd[1].out : wd[2].out, wd[2].out};
  mt_tensor xc = {0};
  int rc = 0, overflow = 0;
  char bx[128];
  for (int i = 0; i < 3 && rc == 0; i++)
    for (int64_t o = 0; o < wd[i].out && rc == 0; o++)
      if (wd[i].count[o] < 1)
        rc = mt_fail("%s: a window of the input %s lies in the padding alone", op, mt_shape_str(x, bx, sizeof bx));
  const int64_t vol = mt_size_mul(mt_size_mul(t, h, &overflow), w, &overflow);
  const int64_t len = mt_size_mul(mt_size_mul(wd[0].out, wd[1].out, &overflow), wd[2].out, &overflow);
  if (rc == 0 && overflow)
    rc = mt_fail("%s: the input %s is too large", op, mt_shape_str(x, bx, sizeof bx));
  if (rc == 0) rc = mt_contiguous_as(&xc, x, x->dtype);
  if (rc == 0) rc = mt_tensor_init(idx, MT_INT64, nd + 2, shape);
  if (rc == 0) {
    const int64_t planes = mt_size_mul(n, c, &overflow), es = (int64_t)mt_dtypes[x->dtype].size;
    const windows *wh = &wd[1], *ww = &wd[2];
    int two = wh->step == 1 && ww->step == 1 && 2 * wh->out <= h && 2 * ww->out <= w;
    for (int64_t o = 0; two && o < wh->out; o++) two = wh->first[o] == 2 * o && wh->count[o] == 2;
    for (int64_t o = 0; two && o < ww->out; o++) two = ww->first[o] == 2 * o && ww->count[o] == 2;
    /* the separable passes' scratch per thread: (t, h, ow), (t, oh, ow) and (ot, oh, ow), room
       for a value and a position each (the bytes checked here) */
    const int64_t n1 = mt_size_mul(mt_size_mul(t, h, &overflow), ww->out, &overflow);
    const int64_t n2 = mt_size_mul(mt_size_mul(t, wh->out, &overflow), ww->out, &overflow);
    const int64_t scratch = mt_size_add(mt_size_add(n1, n2, &overflow), len, &overflow);
    mt_size_mul(scratch, (int64_t)sizeof(int64_t) + es, &overflow);
    if (overflow) rc = mt_fail("%s: the input %s is too large", op, mt_shape_str(x, bx, sizeof bx));
    pool_job job = {mt_data(&xc), (int64_t *)mt_data(idx), wd, t, h, w, vol, es, len, base, scratch, x->dtype, two, 0};
    if (rc == 0)
      mt_parallel_for(planes, mt_parallel_items(MT_ITER_GRAIN / 2, mt_numel(x), planes), pool_volumes, &job);
    if (rc == 0 && job.failed) rc = mt_fail("%s: out of memory", op);
  }
  windows_free(wd);
  mt_tensor_release(&xc);
  return rc;
}

int mt_pool_check_input(const mt_tensor *x, int nd, const char *op) { return check_input(x, nd, op); }

int mt_max_pool_plan(const mt_tensor *x, int nd, const int64_t *k, const int64_t *s, const int64_t *p,
                     const int64_t *d, int ceil_mode, const char *op, int64_t *out) {
  char bx[128], bk[96], bd[96], bp[96];
  if (check_input(x, nd, op)) return -1;
  for (int i = 0; i < nd; i++) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1)
      return mt_fail("%s: kernel, stride and dilation must be positive, got %lld, %lld, %lld", op, (long long)k[i],
                     (long long)s[i], (long long)d[i]);
    if (p[i] < 0 || p[i] > k[i] / 2)
      return mt_fail("%s: padding %lld must be between 0 and half the kernel size %lld", op, (long long)p[i],
                     (long long)k[i]);
  }
  for (int i = 0; i < nd; i++) {
    out[i] = mt_pool_out_size(x->shape[2 + i], k[i], s[i], p[i], d[i], ceil_mode);
    if (out[i] < 1)
      return mt_fail("%s: kernel %s (dilation %s) does not fit the input %s padded by %s", op,
                     dims_str(bk, sizeof bk, nd, k), dims_str(bd, sizeof bd, nd, d), mt_shape_str(x, bx, sizeof bx),
                     dims_str(bp, sizeof bp, nd, p));
  }
  return 0;
}

/* max pooling over the last nd dims (2 or 3) of x: kernel k, stride s,
   padding p, dilation d, each nd values */
static int fixed_pool(mt_tensor *idx, const mt_tensor *x, int nd, const int64_t *k, const int64_t *s,
                      const int64_t *p, const int64_t *d, int ceil_mode, int64_t base, const char *op) {
  int64_t o[3];
  if (mt_max_pool_plan(x, nd, k, s, p, d, ceil_mode, op, o)) return -1;
  int64_t out[3] = {1, 1, 1}, in[3] = {1, 1, 1}, kk[3] = {1, 1, 1}, ss[3] = {1, 1, 1}, pp[3] = {0}, dd[3] = {1, 1, 1};
  for (int i = 0; i < nd; i++) {
    const int j = 3 - nd + i;
    in[j] = x->shape[2 + i];
    kk[j] = k[i];
    ss[j] = s[i];
    pp[j] = p[i];
    dd[j] = d[i];
    out[j] = o[i];
  }
  windows wd[3];
  if (windows_alloc(wd, out, op)) return -1;
  for (int i = 0; i < 3; i++) {
    wd[i].step = dd[i];
    wd[i].k = kk[i];
    wd[i].s = ss[i];
    wd[i].p = pp[i];
    for (int64_t o = 0; o < out[i]; o++) fixed_window(&wd[i], o, in[i], kk[i], ss[i], pp[i], dd[i]);
  }
  return pool_indices(idx, x, wd, nd, base, op);
}

int mt_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base) {
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL("max_pool2d", max_pool2d_indices, x, NULL, NULL, idx, x, k, s, p, d, ceil_mode, base);
  return fixed_pool(idx, x, 2, k, s, p, d, ceil_mode, base, "max_pool2d");
}

int mt_max_pool3d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base) {
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL("max_pool3d", max_pool3d_indices, x, NULL, NULL, idx, x, k, s, p, d, ceil_mode, base);
  return fixed_pool(idx, x, 3, k, s, p, d, ceil_mode, base, "max_pool3d");
}

int mt_adaptive_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *out, int64_t base) {
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL("adaptive_max_pool2d", adaptive_max_pool2d_indices, x, NULL, NULL, idx, x, out, base);
  char bx[128];
  const char *op = "adaptive_max_pool2d";
  if (check_input(x, 2, op)) return -1;
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
  windows wd[3];
  const int64_t outs[3] = {1, out[0], out[1]};
  if (windows_alloc(wd, outs, op)) return -1;
  wd[0].first[0] = 0;
  wd[0].count[0] = 1;
  for (int i = 0; i < 2; i++)
    for (int64_t o = 0; o < out[i]; o++) {
      int64_t lo, hi;
      mt_adaptive_window(o, in[i], out[i], &lo, &hi);
      wd[i + 1].first[o] = lo;
      wd[i + 1].count[o] = hi - lo;
    }
  return pool_indices(idx, x, wd, 2, base, op);
}

/* ---- average pooling over volumes (avg_pool3d) and its adjoint ----
   Separable, as max_pool3d's passes: the W windows of each row, then the H
   windows, then the T windows, each window's sum times its dim's weight (1
   over its dim's share of the divisor: the taps inside the input, or with
   COUNT_PAD those up to the right padding's end; 1 with SUM). The adjoint
   runs the passes' transposes in the reverse order, each tap adding the
   weighted gradient of its window. */
#define AVG_PASSES(T)                                                                                 \
  /* rows (a, n) -> (a, out), or back with adjoint; the interior windows (every tap inside the row)   \
     tap by tap across the row, the edges window by window */                                         \
  static MT_CLONES void avg_rows_##T(const T *restrict x, T *restrict y, int64_t a, int64_t n,                   \
                           const windows *wd, const double *wgt, int adjoint) {                       \
    const int64_t out = wd->out, kw = wd->k, sw = wd->s, pw = wd->p;                                  \
    int64_t lo = 0, hi;                                                                               \
    while (lo < out && !(wd->count[lo] == kw && wd->first[lo] == lo * sw - pw)) lo++;                 \
    hi = lo;                                                                                          \
    while (hi < out && wd->count[hi] == kw && wd->first[hi] == hi * sw - pw) hi++;                    \
    for (int64_t r = 0; r < a; r++) {                                                                 \
      if (!adjoint) {                                                                                 \
        const T *restrict row = x + r * n;                                                            \
        T *restrict dst = y + r * out;                                                                \
        for (int64_t j = 0; j < out; j++) {                                                           \
          if (j == lo) j = hi;                                                                        \
          if (j >= out) break;                                                                        \
          T sum = 0;                                                                                  \
          for (int64_t c = 0; c < wd->count[j]; c++) sum += row[wd->first[j] + c];                    \
          dst[j] = sum;                                                                               \
        }                                                                                             \
        for (int64_t j = lo; j < hi; j++) dst[j] = row[j * sw - pw];                                  \
        for (int64_t c = 1; c < kw && lo < hi; c++) {                                                 \
          const int64_t shift = c - pw;                                                               \
          if (sw == 1)                                                                                \
            for (int64_t j = lo; j < hi; j++) dst[j] += row[j + shift];                               \
          else                                                                                        \
            for (int64_t j = lo; j < hi; j++) dst[j] += row[j * sw + shift];                          \
        }                                                                                             \
        for (int64_t j = 0; j < out; j++) dst[j] = (T)(dst[j] * wgt[j]);                              \
      } else {                                                                                        \
        const T *restrict src = x + r * out;                                                          \
        T *restrict row = y + r * n;                                                                  \
        for (int64_t i = 0; i < n; i++) row[i] = 0;                                                   \
        for (int64_t j = 0; j < out; j++) {                                                           \
          if (j == lo) j = hi;                                                                        \
          if (j >= out) break;                                                                        \
          const T g = (T)(src[j] * wgt[j]);                                                           \
          for (int64_t c = 0; c < wd->count[j]; c++) row[wd->first[j] + c] += g;                      \
        }                                                                                             \
        for (int64_t c = 0; c < kw && lo < hi; c++) {                                                 \
          const int64_t shift = c - pw;                                                               \
          if (sw == 1)                                                                                \
            for (int64_t j = lo; j < hi; j++) row[j + shift] += (T)(src[j] * wgt[j]);                 \
          else                                                                                        \
            for (int64_t j = lo; j < hi; j++) row[j * sw + shift] += (T)(src[j] * wgt[j]);            \
        }                                                                                             \
      }                                                                                               \
    }                                                                                                 \
  }                                                                                                   \
  /* (a, n, b) -> (a, out, b) along n; the adjoint (a, out, b) -> (a, n, b) */                        \
  static MT_CLONES void avg_mid_##T(const T *restrict x, T *restrict y, int64_t a, int64_t n, int64_t b,        \
                          const windows *wd, const double *wgt, int adjoint) {                        \
    const int64_t out = wd->out;                                                                      \
    for (int64_t r = 0; r < a; r++) {                                                                 \
      if (adjoint)                                                                                    \
        for (int64_t k = 0; k < n * b; k++) y[r * n * b + k] = 0;                                     \
      for (int64_t o = 0; o < out; o++) {                                                             \
        const T w = (T)wgt[o];                                                                        \
        if (!adjoint) {                                                                               \
          T *restrict dst = y + (r * out + o) * b;                                                    \
          const T *restrict src = x + (r * n + wd->first[o]) * b;                                     \
          for (int64_t k = 0; k < b; k++) dst[k] = src[k];                                            \
          for (int64_t c = 1; c < wd->count[o]; c++)                                                  \
            for (int64_t k = 0; k < b; k++) dst[k] += src[c * b + k];                                 \
          for (int64_t k = 0; k < b; k++) dst[k] *= w;                                                \
        } else {                                                                                      \
          const T *restrict src = x + (r * out + o) * b;                                              \
          T *restrict dst = y + (r * n + wd->first[o]) * b;                                           \
          for (int64_t c = 0; c < wd->count[o]; c++)                                                  \
            for (int64_t k = 0; k < b; k++) dst[c * b + k] += w * src[k];                             \
        }                                                                                             \
      }                                                                                               \
    }                                                                                                 \
  }                                                                                                   \
  /* one volume: in (t, h, w) -> out (ot, oh, ow), or back with adjoint, through s1 and s2 */         \
  static MT_CLONES void avg_volume_##T(const T *x, T *y, T *s1, T *s2, const int64_t *in, const windows *wd,    \
                             const double *const *wgt, int adjoint) {                                 \
    const int64_t t = in[0], h = in[1], w = in[2], ot = wd[0].out, oh = wd[1].out, ow = wd[2].out;   \
    if (!adjoint) {                                                                                   \
      avg_rows_##T(x, s1, t * h, w, &wd[2], wgt[2], 0);                   /* (t, h, ow) */            \
      avg_mid_##T(s1, s2, t, h, ow, &wd[1], wgt[1], 0);                   /* (t, oh, ow) */           \
      avg_mid_##T(s2, y, 1, t, oh * ow, &wd[0], wgt[0], 0);               /* (ot, oh, ow) */          \
    } else {                                                                                          \
      avg_mid_##T(x, s2, 1, t, oh * ow, &wd[0], wgt[0], 1);               /* (t, oh, ow) */           \
      avg_mid_##T(s2, s1, t, h, ow, &wd[1], wgt[1], 1);                   /* (t, h, ow) */            \
      avg_rows_##T(s1, y, t * h, w, &wd[2], wgt[2], 1);                   /* (t, h, w) */             \
    }                                                                                                 \
    (void)ot;                                                                                         \
  }
AVG_PASSES(float)
AVG_PASSES(double)

typedef struct {
  const char *xd;
  char *yd;
  const windows *wd;
  const double *const *wgt;
  const int64_t *in;
  int64_t xlen, ylen, n1, n2, es;
  int dtype, adjoint, failed;
} avg_job;

static void avg_volumes(void *job, int64_t begin, int64_t end) {
  avg_job *j = job;
  const size_t bytes = (size_t)(j->n1 + j->n2) * (size_t)j->es;
  char *s = mt_alloc(bytes ? bytes : 1);
  if (!s) {
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
    return;
  }
  for (int64_t q = begin; q < end; q++) {
    const char *x = j->xd + q * j->xlen * j->es;
    char *y = j->yd + q * j->ylen * j->es;
    if (j->dtype == MT_FLOAT32)
      avg_volume_float((const float *)x, (float *)y, (float *)s, (float *)s + j->n1, j->in, j->wd, j->wgt, j->adjoint);
    else
      avg_volume_double((const double *)x, (double *)y, (double *)s, (double *)s + j->n1, j->in, j->wd, j->wgt,
                        j->adjoint);
  }
  mt_free(s, bytes ? bytes : 1);
}

int mt_avg_pool3d_plan(const mt_tensor *x, const int64_t *pool, int flags, const int64_t *in_volume, const char *op,
                       int64_t *in, int64_t *out) {
  char bx[128], bk[96], bp[96];
  if (check_input(x, 3, op)) return -1;
  const int64_t *k = pool, *s = pool + 3, *p = pool + 6;
  const int ceil_mode = (flags & MT_RS_CEIL_MODE) != 0;
  for (int i = 0; i < 3; i++) {
    if (k[i] < 1 || s[i] < 1)
      return mt_fail("%s: kernel and stride must be positive, got %lld, %lld", op, (long long)k[i], (long long)s[i]);
    if (p[i] < 0 || p[i] > k[i] / 2)
      return mt_fail("%s: padding %lld must be between 0 and half the kernel size %lld", op, (long long)p[i],
                     (long long)k[i]);
  }
  for (int i = 0; i < 3; i++) {
    in[i] = in_volume ? in_volume[i] : x->shape[2 + i];
    out[i] = in[i] < 1 ? 0 : mt_pool_out_size(in[i], k[i], s[i], p[i], 1, ceil_mode);
    if (out[i] < 1)
      return mt_fail("%s: kernel %s does not fit the input %s padded by %s", op, dims_str(bk, sizeof bk, 3, k),
                     in_volume ? dims_str(bx, sizeof bx, 3, in) : mt_shape_str(x, bx, sizeof bx),
                     dims_str(bp, sizeof bp, 3, p));
  }
  if (in_volume && (x->shape[2] != out[0] || x->shape[3] != out[1] || x->shape[4] != out[2]))
    return mt_fail("%s backward: gradient of size %s for an output volume of %lldx%lldx%lld", op,
                   mt_shape_str(x, bx, sizeof bx), (long long)out[0], (long long)out[1], (long long)out[2]);
  int overflow = 0;
  const int64_t planes = mt_size_mul(x->shape[0], x->shape[1], &overflow);
  mt_size_mul(planes, mt_size_mul(mt_size_mul(in[0], in[1], &overflow), in[2], &overflow), &overflow);
  mt_size_mul(planes, mt_size_mul(mt_size_mul(out[0], out[1], &overflow), out[2], &overflow), &overflow);
  if (overflow) return mt_fail("%s: the input %s is too large", op, mt_shape_str(x, bx, sizeof bx));
  return 0;
}

int mt_avg_pool3d(mt_tensor *r, const mt_tensor *x, const int64_t *pool, int flags, const int64_t *in_volume) {
  const char *op = "avg_pool3d";
  char bx[128];
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL(op, avg_pool3d, x, NULL, NULL, r, x, pool, flags, in_volume);
  /* in: the input volume (x's, or the adjoint's target); out: the pooled one */
  int64_t in[3], out[3];
  if (mt_avg_pool3d_plan(x, pool, flags, in_volume, op, in, out)) return -1;
  const int64_t *k = pool, *s = pool + 3, *p = pool + 6;
  const int count_pad = (flags & MT_RS_COUNT_PAD) != 0;
  int overflow = 0;
  const int64_t vin = mt_size_mul(mt_size_mul(in[0], in[1], &overflow), in[2], &overflow);
  const int64_t vout = mt_size_mul(mt_size_mul(out[0], out[1], &overflow), out[2], &overflow);
  const int64_t n1 = mt_size_mul(mt_size_mul(in[0], in[1], &overflow), out[2], &overflow);
  const int64_t n2 = mt_size_mul(mt_size_mul(in[0], out[1], &overflow), out[2], &overflow);
  const int64_t es = (int64_t)mt_dtypes[x->dtype].size;
  mt_size_mul(mt_size_add(n1, n2, &overflow), es, &overflow);
  const int64_t planes = mt_size_mul(x->shape[0], x->shape[1], &overflow);
  const int64_t shape[5] = {x->shape[0], x->shape[1], in_volume ? in[0] : out[0], in_volume ? in[1] : out[1],
                            in_volume ? in[2] : out[2]};
  mt_size_mul(planes, in_volume ? vin : vout, &overflow);
  if (overflow) return mt_fail("%s: the input %s is too large", op, mt_shape_str(x, bx, sizeof bx));
  windows wd[3];
  if (windows_alloc(wd, out, op)) return -1;
  /* each dim's weights: 1 / its share of the divisor (1 with SUM) */
  double *wgt_block = mt_alloc(sizeof(double) * (size_t)(out[0] + out[1] + out[2]));
  if (!wgt_block) {
    windows_free(wd);
    return mt_fail("%s: out of memory", op);
  }
  const double *wgt[3] = {wgt_block, wgt_block + out[0], wgt_block + out[0] + out[1]};
  for (int i = 0; i < 3; i++) {
    wd[i].k = k[i];
    wd[i].s = s[i];
    wd[i].p = p[i];
  }
  for (int i = 0; i < 3; i++)
    for (int64_t o = 0; o < out[i]; o++) {
      fixed_window(&wd[i], o, in[i], k[i], s[i], p[i], 1);
      const int64_t start = o * s[i] - p[i];
      const int64_t end = start + k[i] < in[i] + p[i] ? start + k[i] : in[i] + p[i];
      const int64_t share = count_pad ? end - start : wd[i].count[o];
      ((double *)wgt[i])[o] = (flags & MT_RS_SUM) || share < 1 ? 1.0 : 1.0 / (double)share;
    }
  int rc = 0;
  for (int i = 0; i < 3 && rc == 0; i++)       /* never with p <= k / 2; the passes read a tap of each */
    for (int64_t o = 0; o < out[i] && rc == 0; o++)
      if (wd[i].count[o] < 1)
        rc = mt_fail("%s: a window of the input %s lies in the padding alone", op, mt_shape_str(x, bx, sizeof bx));
  mt_tensor xc = {0};
  if (rc == 0) rc = mt_contiguous_as(&xc, x, x->dtype);
  if (rc == 0) rc = mt_tensor_init_like(r, x->dtype, 5, shape, x);
  if (rc == 0 && planes > 0) {
    avg_job job = {mt_data(&xc), mt_data(r), wd, wgt, in, in_volume ? vout : vin, in_volume ? vin : vout,
                   n1, n2, es, x->dtype, in_volume != NULL, 0};
    mt_parallel_for(planes, mt_parallel_items(MT_ITER_GRAIN / 2, vin + vout, 1), avg_volumes, &job);
    if (job.failed) {
      mt_tensor_release(r);
      rc = mt_fail("%s: out of memory", op);
    }
  }
  mt_free(wgt_block, sizeof(double) * (size_t)(out[0] + out[1] + out[2]));
  windows_free(wd);
  mt_tensor_release(&xc);
  return rc;
}
