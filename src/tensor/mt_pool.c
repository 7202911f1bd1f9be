/* mt_pool.c: pooling kernels (see mt_pool.h): one pass over each window,
   planes spread over threads. */
#include "mt_pool.h"
#include "mt_iter.h"

/* output length along one dim, PyTorch's rule: with ceil_mode the last
   window may start in the right padding but not past it */
static int64_t pool_out(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, int ceil_mode) {
  int64_t span = in + 2 * p - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t o = (ceil_mode ? span + s - 1 : span) / s + 1;
  if (ceil_mode && (o - 1) * s >= in + p) o--;
  return o;
}

#define POOL_MAX(T)                                                                                   \
  static void max_plane_##T(const T *restrict x, int64_t *restrict out, int64_t h, int64_t w,        \
                            int64_t oh, int64_t ow, const int64_t *kp, const int64_t *sp,             \
                            const int64_t *pp, const int64_t *dp, int64_t base) {                     \
    const int64_t k[2] = {kp[0], kp[1]}, s[2] = {sp[0], sp[1]}, p[2] = {pp[0], pp[1]};                \
    const int64_t d[2] = {dp[0], dp[1]};                                                              \
    for (int64_t i = 0; i < oh; i++)                                                                  \
      for (int64_t j = 0; j < ow; j++) {                                                              \
        int64_t a0 = 0, a1 = k[0], b0 = 0, b1 = k[1];                                                 \
        const int64_t r = i * s[0] - p[0], c = j * s[1] - p[1];                                       \
        while (r + a0 * d[0] < 0) a0++;                                                               \
        while (a1 > a0 && r + (a1 - 1) * d[0] >= h) a1--;                                             \
        while (c + b0 * d[1] < 0) b0++;                                                               \
        while (b1 > b0 && c + (b1 - 1) * d[1] >= w) b1--;                                             \
        int64_t at = (r + a0 * d[0]) * w + c + b0 * d[1];                                             \
        T best = x[at];                                                                               \
        for (int64_t a = a0; a < a1; a++)                                                             \
          for (int64_t b = b0; b < b1; b++) {                                                         \
            const int64_t q = (r + a * d[0]) * w + c + b * d[1];                                      \
            const T v = x[q];                                                                         \
            /* masks, not branches: which element wins is data, and unpredictable */                  \
            const int64_t take = -(int64_t)((v > best) | ((v != v) & (best == best)));                \
            at ^= (at ^ q) & take;                                                                    \
            best = take ? v : best;                                                                   \
          }                                                                                           \
        out[i * ow + j] = at + base;                                                                  \
      }                                                                                               \
  }
POOL_MAX(float)
POOL_MAX(double)

int mt_max_pool2d_indices(mt_tensor *idx, const mt_tensor *x, const int64_t *k, const int64_t *s, const int64_t *p,
                          const int64_t *d, int ceil_mode, int64_t base) {
  char bx[128];
  if (x->ndim != 4) return mt_fail("max_pool2d: expected a 4-D input (n, c, h, w), got %s", mt_shape_str(x, bx, sizeof bx));
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail("max_pool2d: expected float32 or float64, got %s", mt_dtypes[x->dtype].name);
  for (int i = 0; i < 2; i++) {
    if (k[i] < 1 || s[i] < 1 || d[i] < 1)
      return mt_fail("max_pool2d: kernel, stride and dilation must be positive, got %lld, %lld, %lld",
                     (long long)k[i], (long long)s[i], (long long)d[i]);
    if (p[i] < 0 || 2 * p[i] > k[i])
      return mt_fail("max_pool2d: padding %lld must be between 0 and half the kernel size %lld", (long long)p[i],
                     (long long)k[i]);
  }
  const int64_t n = x->shape[0], c = x->shape[1], h = x->shape[2], w = x->shape[3];
  const int64_t oh = pool_out(h, k[0], s[0], p[0], d[0], ceil_mode), ow = pool_out(w, k[1], s[1], p[1], d[1], ceil_mode);
  if (oh < 1 || ow < 1)
    return mt_fail("max_pool2d: kernel %lldx%lld (dilation %lldx%lld) does not fit the input %s padded by %lldx%lld",
                   (long long)k[0], (long long)k[1], (long long)d[0], (long long)d[1], mt_shape_str(x, bx, sizeof bx),
                   (long long)p[0], (long long)p[1]);
  mt_tensor xc = {0};
  const int64_t shape[4] = {n, c, oh, ow};
  if (mt_contiguous_as(&xc, x, x->dtype)) return -1;
  if (mt_tensor_init(idx, MT_INT64, 4, shape)) { mt_tensor_release(&xc); return -1; }
  const char *xd = mt_data(&xc);
  int64_t *out = (int64_t *)mt_data(idx);
  const int64_t planes = n * c, es = (int64_t)mt_dtypes[x->dtype].size;
  const int par = mt_get_num_threads() > 1 && planes > 1 && planes * h * w >= MT_ITER_GRAIN;
#pragma omp parallel for schedule(static) if (par)
  for (int64_t q = 0; q < planes; q++) {
    if (x->dtype == MT_FLOAT32)
      max_plane_float((const float *)(xd + q * h * w * es), out + q * oh * ow, h, w, oh, ow, k, s, p, d, base);
    else
      max_plane_double((const double *)(xd + q * h * w * es), out + q * oh * ow, h, w, oh, ow, k, s, p, d, base);
  }
  mt_tensor_release(&xc);
  return 0;
}
