/* mt_pool.c: max pooling kernels (see mt_pool.h). Each dim's windows are
   listed first (first tap, number of taps, step), then one pass over each
   window, planes spread over threads. */
#include "mt_pool.h"
#include "mt_ops.h"
#include "mt_alloc.h"
#include "mt_iter.h"
#include "mt_parallel.h"

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

#define POOL_MAX(T)                                                                                   \
  static void max_plane_##T(const T *restrict x, int64_t *restrict out, int64_t w, const windows *wh,  \
                            const windows *ww, int64_t base) {                                         \
    for (int64_t i = 0; i < wh->out; i++)                                                             \
      for (int64_t j = 0; j < ww->out; j++) {                                                         \
        int64_t at = wh->first[i] * w + ww->first[j];                                                 \
        T best = x[at];                                                                               \
        for (int64_t a = 0; a < wh->count[i]; a++)                                                    \
          for (int64_t b = 0; b < ww->count[j]; b++) {                                                \
            const int64_t q = (wh->first[i] + a * wh->step) * w + ww->first[j] + b * ww->step;        \
            const T v = x[q];                                                                         \
            /* masks, not branches: which element wins is data, and unpredictable */                  \
            const int64_t take = -(int64_t)((v > best) | ((v != v) & (best == best)));                \
            at ^= (at ^ q) & take;                                                                    \
            best = take ? v : best;                                                                   \
          }                                                                                           \
        out[i * ww->out + j] = at + base;                                                             \
      }                                                                                               \
  }
POOL_MAX(float)
POOL_MAX(double)

/* The common 2x2 window at stride 2, every window inside the plane (oh =
   h / 2, ow = w / 2, floored): a straight pass over each pair of rows that
   the compiler vectorises, with max_plane's order and NaN rule (the first
   maximum in row-major order wins; a NaN beats a number, the first NaN
   stays). */
#define POOL_MAX_2X2(T)                                                                               \
  static void max_plane_2x2_##T(const T *restrict x, int64_t *restrict out, int64_t w, int64_t oh,    \
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

#if defined(__AVX512F__)
#include <immintrin.h>
/* max_plane_2x2_float, 16 windows at a time: the even and odd columns of
   both rows pulled apart by permutes, the same compares as masks */
static void max_plane_2x2_f32x16(const float *restrict x, int64_t *restrict out, int64_t w, int64_t oh, int64_t ow,
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
#if defined(__AVX512F__)
  if (w < ((int64_t)1 << 29)) {
    max_plane_2x2_f32x16((const float *)plane, out, w, oh, ow, base);
    return;
  }
#endif
  max_plane_2x2_float((const float *)plane, out, w, oh, ow, base);
}

static int check_input(const mt_tensor *x, const char *op) {
  char bx[128];
  if (x->ndim != 4) return mt_fail("%s: expected a 4-D input (n, c, h, w), got %s", op, mt_shape_str(x, bx, sizeof bx));
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail("%s: expected float32 or float64, got %s", op, mt_dtypes[x->dtype].name);
  return 0;
}

/* room for the windows of an output plane (oh, ow), in one block */
static int windows_alloc(windows *wh, windows *ww, int64_t oh, int64_t ow, const char *op) {
  size_t entries, bytes;
  if (__builtin_add_overflow(oh, ow, &entries) || __builtin_mul_overflow(entries, 2 * sizeof(int64_t), &bytes))
    return mt_fail("%s: an output of %lldx%lld is too large", op, (long long)oh, (long long)ow);
  int64_t *block = mt_alloc(bytes);
  if (!block) return mt_fail("%s: out of memory", op);
  *wh = (windows){oh, 1, block, block + oh};
  *ww = (windows){ow, 1, block + 2 * oh, block + 2 * oh + ow};
  return 0;
}

static void windows_free(windows *wh, windows *ww) {
  mt_free(wh->first, sizeof(int64_t) * (size_t)(2 * (wh->out + ww->out)));
}

typedef struct {
  const char *xd;
  int64_t *out;
  const windows *wh, *ww;
  int64_t h, w, es, len, base;
  int dtype, two;
} pool_job;

static void pool_planes(void *job, int64_t begin, int64_t end) {
  const pool_job *j = job;
  for (int64_t q = begin; q < end; q++) {
    const char *plane = j->xd + q * j->h * j->w * j->es;
    int64_t *out = j->out + q * j->len;
    if (j->two) max_plane_2x2(plane, j->dtype, out, j->w, j->wh->out, j->ww->out, j->base);
    else if (j->dtype == MT_FLOAT32) max_plane_float((const float *)plane, out, j->w, j->wh, j->ww, j->base);
    else max_plane_double((const double *)plane, out, j->w, j->wh, j->ww, j->base);
  }
}

/* idx (n, c, oh, ow) of x over the windows wh, ww (freed here) */
static int pool_indices(mt_tensor *idx, const mt_tensor *x, windows *wh, windows *ww, int64_t base, const char *op) {
  const int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  const int64_t shape[4] = {n, c, wh->out, ww->out};
  mt_tensor xc = {0};
  int rc = 0;
  for (int64_t o = 0; o < wh->out + ww->out && rc == 0; o++)
    if ((o < wh->out ? wh->count[o] : ww->count[o - wh->out]) < 1)
      rc = mt_fail("%s: a window of the input %lldx%lld lies in the padding alone", op, (long long)h, (long long)w);
  if (rc == 0) rc = mt_contiguous_as(&xc, x, x->dtype);
  if (rc == 0) rc = mt_tensor_init(idx, MT_INT64, 4, shape);
  if (rc == 0) {
    const int64_t planes = n * c, es = (int64_t)mt_dtypes[x->dtype].size, len = wh->out * ww->out;
    int two = wh->step == 1 && ww->step == 1 && 2 * wh->out <= h && 2 * ww->out <= w;
    for (int64_t o = 0; two && o < wh->out; o++) two = wh->first[o] == 2 * o && wh->count[o] == 2;
    for (int64_t o = 0; two && o < ww->out; o++) two = ww->first[o] == 2 * o && ww->count[o] == 2;
    pool_job job = {mt_data(&xc), (int64_t *)mt_data(idx), wh, ww, h, w, es, len, base, x->dtype, two};
    mt_parallel_for(planes, mt_parallel_items(MT_ITER_GRAIN / 2, mt_numel(x), planes), pool_planes, &job);
  }
  windows_free(wh, ww);
  mt_tensor_release(&xc);
  return rc;
}

int mt_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base) {
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL("max_pool2d", max_pool2d_indices, x, NULL, NULL, idx, x, k, s, p, d, ceil_mode, base);
  char bx[128];
  const char *op = "max_pool2d";
  if (check_input(x, op)) return -1;
  for (int i = 0; i < 2; i++) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1)
      return mt_fail("max_pool2d: kernel, stride and dilation must be positive, got %lld, %lld, %lld",
                     (long long)k[i], (long long)s[i], (long long)d[i]);
    if (p[i] < 0 || p[i] > k[i] / 2)
      return mt_fail("max_pool2d: padding %lld must be between 0 and half the kernel size %lld", (long long)p[i],
                     (long long)k[i]);
  }
  const int64_t h = x->shape[2], w = x->shape[3];
  const int64_t oh = mt_pool_out_size(h, k[0], s[0], p[0], d[0], ceil_mode);
  const int64_t ow = mt_pool_out_size(w, k[1], s[1], p[1], d[1], ceil_mode);
  if (oh < 1 || ow < 1)
    return mt_fail("max_pool2d: kernel %lldx%lld (dilation %lldx%lld) does not fit the input %s padded by %lldx%lld",
                   (long long)k[0], (long long)k[1], (long long)d[0], (long long)d[1], mt_shape_str(x, bx, sizeof bx),
                   (long long)p[0], (long long)p[1]);
  windows wh, ww;
  if (windows_alloc(&wh, &ww, oh, ow, op)) return -1;
  wh.step = d[0];
  ww.step = d[1];
  for (int64_t o = 0; o < oh; o++) fixed_window(&wh, o, h, k[0], s[0], p[0], d[0]);
  for (int64_t o = 0; o < ow; o++) fixed_window(&ww, o, w, k[1], s[1], p[1], d[1]);
  return pool_indices(idx, x, &wh, &ww, base, op);
}

int mt_adaptive_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *out, int64_t base) {
  if (__builtin_expect(mt_device_of(x) != MT_CPU, 0))
    MT_EXTRA_CALL("adaptive_max_pool2d", adaptive_max_pool2d_indices, x, NULL, NULL, idx, x, out, base);
  char bx[128];
  const char *op = "adaptive_max_pool2d";
  if (check_input(x, op)) return -1;
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
  windows wd[2];
  if (windows_alloc(&wd[0], &wd[1], out[0], out[1], op)) return -1;
  for (int i = 0; i < 2; i++)
    for (int64_t o = 0; o < out[i]; o++) {
      int64_t lo, hi;
      mt_adaptive_window(o, in[i], out[i], &lo, &hi);
      wd[i].first[o] = lo;
      wd[i].count[o] = hi - lo;
    }
  return pool_indices(idx, x, &wd[0], &wd[1], base, op);
}
