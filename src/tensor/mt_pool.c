/* mt_pool.c: max pooling kernels (see mt_pool.h). Each dim's windows are
   listed first (first tap, number of taps, step), then one pass over each
   window, planes spread over threads. */
#include "mt_pool.h"
#include "mt_alloc.h"
#include "mt_iter.h"

int64_t mt_pool_out_size(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t o = (ceil_mode ? span + s - 1 : span) / s + 1;
  if (ceil_mode && (o - 1) * s >= in + p) o--;
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

static int check_input(const mt_tensor *x, const char *op) {
  char bx[128];
  if (x->ndim != 4) return mt_fail("%s: expected a 4-D input (n, c, h, w), got %s", op, mt_shape_str(x, bx, sizeof bx));
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail("%s: expected float32 or float64, got %s", op, mt_dtypes[x->dtype].name);
  return 0;
}

/* room for the windows of an output plane (oh, ow), in one block */
static int windows_alloc(windows *wh, windows *ww, int64_t oh, int64_t ow, const char *op) {
  int64_t *block = mt_alloc(sizeof(int64_t) * (size_t)(2 * (oh + ow)));
  if (!block) return mt_fail("%s: out of memory", op);
  *wh = (windows){oh, 1, block, block + oh};
  *ww = (windows){ow, 1, block + 2 * oh, block + 2 * oh + ow};
  return 0;
}

static void windows_free(windows *wh, windows *ww) {
  mt_free(wh->first, sizeof(int64_t) * (size_t)(2 * (wh->out + ww->out)));
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
    const char *xd = mt_data(&xc);
    int64_t *out = (int64_t *)mt_data(idx);
    const int64_t planes = n * c, es = (int64_t)mt_dtypes[x->dtype].size, len = wh->out * ww->out;
    const int par = mt_get_num_threads() > 1 && planes > 1 && planes * h * w >= MT_ITER_GRAIN;
#pragma omp parallel for schedule(static) if (par)
    for (int64_t q = 0; q < planes; q++) {
      if (x->dtype == MT_FLOAT32) max_plane_float((const float *)(xd + q * h * w * es), out + q * len, w, wh, ww, base);
      else max_plane_double((const double *)(xd + q * h * w * es), out + q * len, w, wh, ww, base);
    }
  }
  windows_free(wh, ww);
  mt_tensor_release(&xc);
  return rc;
}

int mt_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base) {
  char bx[128];
  const char *op = "max_pool2d";
  if (check_input(x, op)) return -1;
  for (int i = 0; i < 2; i++) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1)
      return mt_fail("max_pool2d: kernel, stride and dilation must be positive, got %lld, %lld, %lld",
                     (long long)k[i], (long long)s[i], (long long)d[i]);
    if (p[i] < 0 || 2 * p[i] > k[i])
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
  char bx[128];
  const char *op = "adaptive_max_pool2d";
  if (check_input(x, op)) return -1;
  const int64_t in[2] = {x->shape[2], x->shape[3]};
  if (out[0] < 1 || out[1] < 1 || in[0] < 1 || in[1] < 1)
    return mt_fail("%s: cannot pool an input of size %s to %lldx%lld", op, mt_shape_str(x, bx, sizeof bx),
                   (long long)out[0], (long long)out[1]);
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
