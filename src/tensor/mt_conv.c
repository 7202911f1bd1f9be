/* mt_conv.c: convolution kernels. float32 runs a direct kernel: one image's
   input is copied once into zero-padded "phase planes", where every weight
   tap reads a contiguous run, so the convolution becomes a matrix product
   whose right operand is never materialised (no im2col). float64, and the
   float32 input gradient of strided convolutions, use im2col + GEMM per
   image. Images go to the thread pool when there are several, in one
   fixed share per thread, so results do not depend on which thread runs
   which share. The direct kernel is in mt_conv_direct_body.h, compiled once
   per x86-64 level (mt_conv_direct.h); this file picks one. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cblas.h>
#include "mt_conv.h"
#include "mt_conv_direct.h"
#include "mt_ops.h"
#include "mt_alloc.h"
#include "mt_parallel.h"
#include "mt_reduce.h"
#include "mt_isa.h"

/* ---- geometry ---- */

/* output size along one dim; 0 when the dilated kernel does not fit, -1 when the
   padded input or the dilated kernel overflows (sizes and padding are not negative);
   the 3-D geometry (mt_conv3d.c) uses it too */
int64_t mt_conv_out_size(int64_t in, int64_t k, int64_t s, int64_t before, int64_t after, int64_t d) {
  int overflow = 0;
  const int64_t padded = mt_size_add(mt_size_add(in, before, &overflow), after, &overflow);
  const int64_t reach = mt_size_mul(d, k - 1, &overflow);
  if (overflow) return -1;
  const int64_t span = padded - reach - 1;
  return span < 0 ? 0 : span / s + 1;
}

/* The sizes a geometry implies must fit int64, for they size buffers and index
   them: the input (n, c, h, w), an image's columns (c * kh * kw, oh * ow) and
   the output (n, o, oh, ow); -1 (and the error) when one does not. */
static int check_sizes(const mt_conv_geom *g, const char *op) {
  int64_t in, cols, out;
  if (g->oh < 0 || g->ow < 0 || __builtin_mul_overflow(g->n, g->c, &in) || __builtin_mul_overflow(in, g->h, &in) ||
      __builtin_mul_overflow(in, g->w, &in) || __builtin_mul_overflow(g->c, g->kh, &cols) ||
      __builtin_mul_overflow(cols, g->kw, &cols) || __builtin_mul_overflow(cols, g->oh, &cols) ||
      __builtin_mul_overflow(cols, g->ow, &cols) || __builtin_mul_overflow(g->n, g->o, &out) ||
      __builtin_mul_overflow(out, g->oh, &out) || __builtin_mul_overflow(out, g->ow, &out))
    return mt_fail("%s: too large: a %lldx%lld kernel (dilation %lldx%lld, padding %lldx%lld) over %lldx%lld images "
                   "of %lld channels", op, (long long)g->kh, (long long)g->kw, (long long)g->dh, (long long)g->dw,
                   (long long)g->ph, (long long)g->pw, (long long)g->h, (long long)g->w, (long long)g->c);
  return 0;
}

/* strides and dilations (dims of each) positive, groups positive; the 3-D geometry uses it too */
int mt_conv_check_params(const char *op, int dims, const int64_t *stride, const int64_t *dilation, int64_t groups) {
  for (int i = 0; i < dims; i++) {
    if (stride[i] < 1) return mt_fail("%s: stride must be positive, got %lld", op, (long long)stride[i]);
    if (dilation[i] < 1) return mt_fail("%s: dilation must be positive, got %lld", op, (long long)dilation[i]);
  }
  if (groups < 1) return mt_fail("%s: groups must be positive, got %lld", op, (long long)groups);
  return 0;
}

int mt_conv_geom_make(mt_conv_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                      const int64_t *stride, const int64_t *pad_before, const int64_t *pad_after,
                      const int64_t *dilation, int64_t groups) {
  char bx[128], bw[128];
  if (x->ndim != 4 || w->ndim != 4)
    return mt_fail("%s: expected a 4-D input (n, c, h, w) and weight (o, c / groups, kh, kw), got %s and %s", op,
                   mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  if (mt_conv_check_params(op, 2, stride, dilation, groups)) return -1;
  for (int i = 0; i < 2; i++)
    if (pad_before[i] < 0 || pad_after[i] < 0)
      return mt_fail("%s: negative padding %lld", op, (long long)(pad_before[i] < 0 ? pad_before[i] : pad_after[i]));
  if (w->shape[0] % groups)
    return mt_fail("%s: out_channels (%lld, weight %s) must be divisible by groups=%lld", op,
                   (long long)w->shape[0], mt_shape_str(w, bw, sizeof bw), (long long)groups);
  int64_t channels;
  if (__builtin_mul_overflow(w->shape[1], groups, &channels))
    return mt_fail("%s: weight %s with groups=%lld: too many input channels", op, mt_shape_str(w, bw, sizeof bw),
                   (long long)groups);
  if (x->shape[1] != channels)
    return mt_fail("%s: given groups=%lld, weight of size %s expects input with %lld channels, got input of size %s",
                   op, (long long)groups, mt_shape_str(w, bw, sizeof bw), (long long)channels,
                   mt_shape_str(x, bx, sizeof bx));
  *g = (mt_conv_geom){x->shape[0], x->shape[1], x->shape[2], x->shape[3], w->shape[0], w->shape[2], w->shape[3],
                      0, 0, stride[0], stride[1], pad_before[0], pad_before[1], dilation[0], dilation[1], groups};
  g->oh = mt_conv_out_size(g->h, g->kh, g->sh, pad_before[0], pad_after[0], g->dh);
  g->ow = mt_conv_out_size(g->w, g->kw, g->sw, pad_before[1], pad_after[1], g->dw);
  if (check_sizes(g, op)) return -1;
  if (g->oh < 1 || g->ow < 1 || g->kh < 1 || g->kw < 1)
    return mt_fail("%s: kernel size %lldx%lld (dilation %lldx%lld) does not fit the input padded by (%lld, %lld)x(%lld, %lld) "
                   "(input %s, weight %s)", op, (long long)g->kh, (long long)g->kw, (long long)g->dh, (long long)g->dw,
                   (long long)pad_before[0], (long long)pad_after[0], (long long)pad_before[1], (long long)pad_after[1],
                   mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  return 0;
}

int mt_conv_transpose_geom_make(mt_conv_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                                const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                                const int64_t *dilation, int64_t groups) {
  char bx[128], bw[128];
  if (x->ndim != 4 || w->ndim != 4)
    return mt_fail("%s: expected a 4-D input (n, c, h, w) and weight (c, o / groups, kh, kw), got %s and %s", op,
                   mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  if (mt_conv_check_params(op, 2, stride, dilation, groups)) return -1;
  if (x->shape[1] != w->shape[0])
    return mt_fail("%s: given transposed=1, weight of size %s expects input with %lld channels, got input of size %s",
                   op, mt_shape_str(w, bw, sizeof bw), (long long)w->shape[0], mt_shape_str(x, bx, sizeof bx));
  if (w->shape[0] % groups)
    return mt_fail("%s: in_channels (%lld, weight %s) must be divisible by groups=%lld", op,
                   (long long)w->shape[0], mt_shape_str(w, bw, sizeof bw), (long long)groups);
  int64_t size[2];
  for (int i = 0; i < 2; i++) {
    if (padding[i] < 0 || output_padding[i] < 0)
      return mt_fail("%s: negative padding or output_padding", op);
    if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])
      return mt_fail("%s: output padding (%lld) must be smaller than either stride (%lld) or dilation (%lld)", op,
                     (long long)output_padding[i], (long long)stride[i], (long long)dilation[i]);
    int64_t span, reach, crop;                 /* output_padding + 1 fits: it is below stride or dilation */
    if (__builtin_mul_overflow(x->shape[2 + i] - 1, stride[i], &span) ||
        __builtin_mul_overflow(dilation[i], w->shape[2 + i] - 1, &reach) || __builtin_add_overflow(span, reach, &span) ||
        __builtin_add_overflow(span, output_padding[i] + 1, &span) || __builtin_mul_overflow(padding[i], 2, &crop) ||
        __builtin_sub_overflow(span, crop, &size[i]))
      return mt_fail("%s: too large: stride %lld, padding %lld and dilation %lld for input %s and weight %s", op,
                     (long long)stride[i], (long long)padding[i], (long long)dilation[i],
                     mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
    if (size[i] < 1 || w->shape[2 + i] < 1)
      return mt_fail("%s: the output would be empty (%lld) for input %s and weight %s", op, (long long)size[i],
                     mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  }
  int64_t out_channels;
  if (__builtin_mul_overflow(w->shape[1], groups, &out_channels))
    return mt_fail("%s: weight %s with groups=%lld: too many output channels", op, mt_shape_str(w, bw, sizeof bw),
                   (long long)groups);
  *g = (mt_conv_geom){x->shape[0], out_channels, size[0], size[1], w->shape[0], w->shape[2], w->shape[3],
                      x->shape[2], x->shape[3], stride[0], stride[1], padding[0], padding[1],
                      dilation[0], dilation[1], groups};
  return check_sizes(g, op);
}

int mt_unfold_geom_make(mt_conv_geom *g, const char *op, const int64_t *image, const int64_t *k, const int64_t *d,
                        const int64_t *p, const int64_t *s) {
  if (mt_conv_check_params(op, 2, s, d, 1)) return -1;
  for (int i = 0; i < 2; i++)
    if (k[i] < 1 || p[i] < 0)
      return mt_fail("%s: kernel size must be positive and padding not negative, got %lld and %lld", op,
                     (long long)k[i], (long long)p[i]);
  *g = (mt_conv_geom){image[0], image[1], image[2], image[3], image[1], k[0], k[1], 0, 0, s[0], s[1], p[0], p[1],
                      d[0], d[1], 1};
  g->oh = mt_conv_out_size(g->h, g->kh, g->sh, p[0], p[0], g->dh);
  g->ow = mt_conv_out_size(g->w, g->kw, g->sw, p[1], p[1], g->dw);
  if (check_sizes(g, op)) return -1;
  if (g->oh < 1 || g->ow < 1)
    return mt_fail("%s: kernel %lldx%lld (dilation %lldx%lld) does not fit the input %lldx%lld padded by %lldx%lld", op,
                   (long long)k[0], (long long)k[1], (long long)d[0], (long long)d[1], (long long)image[2],
                   (long long)image[3], (long long)p[0], (long long)p[1]);
  return 0;
}

/* Inputs as contiguous tensors of one floating dtype (aliases when they already are). */
static int prepare(const char *op, mt_tensor *out, const mt_tensor *const *in, int n) {
  int dtype = in[0]->dtype;
  if (dtype != MT_FLOAT32 && dtype != MT_FLOAT64)
    return mt_fail("%s: expected float32 or float64 tensors, got %s", op, mt_dtypes[dtype].name);
  for (int i = 0; i < n; i++) {
    if (in[i] && in[i]->dtype != dtype)
      return mt_fail("%s: expected tensors of one dtype, got %s and %s", op, mt_dtypes[dtype].name,
                     mt_dtypes[in[i]->dtype].name);
    if (in[i] && mt_contiguous_as(&out[i], in[i], dtype)) {
      for (int k = 0; k < i; k++) mt_tensor_release(&out[k]);
      return -1;
    }
  }
  return 0;
}

static void release_all(mt_tensor *t, int n) {
  for (int i = 0; i < n; i++) mt_tensor_release(&t[i]);
}

/* ---- im2col / col2im and the GEMM path, for float and double ----
   cols[(c * kh + a) * kw + b][i * ow + j] = x[c][i * sh - ph + a * dh][j * sw - pw + b * dw]
   (zero outside x). */


#define CONV_GEMM_PATH(T, P)                                                                        \
  static void im2col_##T(T *cols, const T *x, int64_t c, const mt_conv_geom *g) {                   \
    const int64_t len = g->oh * g->ow;                                                            \
    for (int64_t ci = 0; ci < c; ci++)                                                            \
      for (int64_t a = 0; a < g->kh; a++)                                                         \
        for (int64_t b = 0; b < g->kw; b++) {                                                     \
          T *row = cols + ((ci * g->kh + a) * g->kw + b) * len;                                   \
          const int64_t cstart = b * g->dw - g->pw;                                               \
          int64_t j0, j1;                                                                         \
          valid_cols(g->ow, g->sw, cstart, g->w, &j0, &j1);                                       \
          for (int64_t i = 0; i < g->oh; i++, row += g->ow) {                                     \
            const int64_t r = i * g->sh - g->ph + a * g->dh;                                      \
            if (r < 0 || r >= g->h) { memset(row, 0, sizeof(T) * (size_t)g->ow); continue; }      \
            const T *src = x + (ci * g->h + r) * g->w;                                            \
            for (int64_t j = 0; j < j0; j++) row[j] = 0;                                          \
            if (g->sw == 1) memcpy(row + j0, src + cstart + j0, sizeof(T) * (size_t)(j1 - j0));   \
            else for (int64_t j = j0; j < j1; j++) row[j] = src[cstart + j * g->sw];              \
            for (int64_t j = j1; j < g->ow; j++) row[j] = 0;                                      \
          }                                                                                       \
        }                                                                                         \
  }                                                                                               \
  /* x += the columns put back in place */                                                        \
  static void col2im_##T(T *x, const T *cols, int64_t c, const mt_conv_geom *g) {                   \
    const int64_t len = g->oh * g->ow;                                                            \
    for (int64_t ci = 0; ci < c; ci++)                                                            \
      for (int64_t a = 0; a < g->kh; a++)                                                         \
        for (int64_t b = 0; b < g->kw; b++) {                                                     \
          const T *row = cols + ((ci * g->kh + a) * g->kw + b) * len;                             \
          const int64_t cstart = b * g->dw - g->pw;                                               \
          int64_t j0, j1;                                                                         \
          valid_cols(g->ow, g->sw, cstart, g->w, &j0, &j1);                                       \
          for (int64_t i = 0; i < g->oh; i++, row += g->ow) {                                     \
            const int64_t r = i * g->sh - g->ph + a * g->dh;                                      \
            if (r < 0 || r >= g->h) continue;                                                     \
            T *dst = x + (ci * g->h + r) * g->w;                                                  \
            for (int64_t j = j0; j < j1; j++) dst[cstart + j * g->sw] += row[j];                  \
          }                                                                                       \
        }                                                                                         \
  }                                                                                               \
  /* y (o, oh * ow) of one image; cols: scratch of c * kh * kw * oh * ow */                      \
  static void gemm_forward_##T(T *y, const T *x, const T *w, const T *bias, T *cols,              \
                               const mt_conv_geom *g) {                                           \
    const int64_t len = g->oh * g->ow, og = g->o / g->groups, kg = g->c / g->groups * g->kh * g->kw; \
    im2col_##T(cols, x, g->c, g);                                                                 \
    for (int64_t gi = 0; gi < g->groups; gi++)                                                    \
      cblas_##P##gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)og, (int)len, (int)kg, 1,    \
                      w + gi * og * kg, (int)kg, cols + gi * kg * len, (int)len, 0,               \
                      y + gi * og * len, (int)len);                                               \
    if (bias)                                                                                     \
      for (int64_t o = 0; o < g->o; o++)                                                          \
        for (int64_t i = 0; i < len; i++) y[o * len + i] += bias[o];                              \
  }                                                                                               \
  /* gx (c, h, w) of one image from gy (o, oh * ow) */                                           \
  static void gemm_input_grad_##T(T *gx, const T *gy, const T *w, T *cols, const mt_conv_geom *g) { \
    const int64_t len = g->oh * g->ow, og = g->o / g->groups, kg = g->c / g->groups * g->kh * g->kw; \
    for (int64_t gi = 0; gi < g->groups; gi++)                                                    \
      cblas_##P##gemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)kg, (int)len, (int)og, 1,      \
                      w + gi * og * kg, (int)kg, gy + gi * og * len, (int)len, 0,                 \
                      cols + gi * kg * len, (int)len);                                            \
    memset(gx, 0, sizeof(T) * (size_t)(g->c * g->h * g->w));                                      \
    col2im_##T(gx, cols, g->c, g);                                                                \
  }                                                                                               \
  /* gw (o, kg) += gy (o, oh * ow) @ im2col(x)^T for one image */                                 \
  static void gemm_weight_grad_##T(T *gw, const T *x, const T *gy, T *cols, const mt_conv_geom *g) { \
    const int64_t len = g->oh * g->ow, og = g->o / g->groups, kg = g->c / g->groups * g->kh * g->kw; \
    im2col_##T(cols, x, g->c, g);                                                                 \
    for (int64_t gi = 0; gi < g->groups; gi++)                                                    \
      cblas_##P##gemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)og, (int)kg, (int)len, 1,      \
                      gy + gi * og * len, (int)len, cols + gi * kg * len, (int)len, 1,            \
                      gw + gi * og * kg, (int)kg);                                                \
  }
CONV_GEMM_PATH(float, s)
CONV_GEMM_PATH(double, d)

/* ---- the direct kernel's level ----
   The highest of the CPU's levels (cpuid, as the MT_CLONES loops choose), or a lower one
   that TH_CONV_ISA names ('DEFAULT', 'AVX2', 'AVX512', any case; the specs run each one
   this CPU has). A level above the CPU's, or another word, is not taken. */
static const mt_conv_direct_kernels *direct;
static pthread_once_t direct_once = PTHREAD_ONCE_INIT;

static void direct_choose(void) {
  direct = &mt_conv_direct_base;
#if defined(__x86_64__)
  int level = mt_cpu_level();
  const char *env = getenv("TH_CONV_ISA");
  for (int l = 0; env && l < level; l++)
    if (!strcasecmp(env, mt_cpu_level_name(l))) level = l;
  if (level == 2) direct = &mt_conv_direct_v4;
  else if (level == 1) direct = &mt_conv_direct_v3;
#endif
}

static const mt_conv_direct_kernels *direct_kernels(void) {
  (void)pthread_once(&direct_once, direct_choose);
  return direct;
}

const char *mt_conv_level(void) { return mt_cpu_level_name(direct_kernels()->level); }

/* ---- the GEMM path over images ---- */
typedef enum { PATH_FORWARD, PATH_INPUT_GRAD, PATH_WEIGHT_GRAD } gemm_path;

/* out = forward (a = x, b = w), input grad (a = gy, b = w) or weight grad
   (a = x, b = gy); contiguous operands of dtype. */
typedef struct {
  gemm_path path;
  int dtype, nt;
  char *out, *scratch;     /* scratch: per share, im2col columns then (weight grad) an accumulator */
  const char *a, *b, *bias;
  const mt_conv_geom *g;
  int64_t cols_size, xs, ys, per_share;
} gemm_job;

/* Shares [begin, end) of the images, each with its own scratch. */
static void gemm_shares(void *ctx, int64_t begin, int64_t end) {
  const gemm_job *j = ctx;
  const mt_conv_geom *g = j->g;
  const int64_t xs = j->xs, ys = j->ys;
#define GEMM_IMAGE(T)                                                                                       \
  do {                                                                                                      \
    T *cols = (T *)j->scratch + t * j->per_share;                                                          \
    if (j->path == PATH_FORWARD)                                                                            \
      gemm_forward_##T((T *)j->out + n * ys, (const T *)j->a + n * xs, (const T *)j->b, (const T *)j->bias, cols, g); \
    else if (j->path == PATH_INPUT_GRAD)                                                                    \
      gemm_input_grad_##T((T *)j->out + n * xs, (const T *)j->a + n * ys, (const T *)j->b, cols, g);        \
    else                                                                                                    \
      gemm_weight_grad_##T(cols + j->cols_size, (const T *)j->a + n * xs, (const T *)j->b + n * ys, cols, g); \
  } while (0)
  for (int64_t t = begin; t < end; t++)
    for (int64_t n = g->n * t / j->nt; n < g->n * (t + 1) / j->nt; n++) {
      if (j->dtype == MT_FLOAT32) GEMM_IMAGE(float); else GEMM_IMAGE(double);
    }
#undef GEMM_IMAGE
}

static int gemm_run(gemm_path path, int dtype, char *out, const char *a, const char *b, const char *bias,
                    const mt_conv_geom *g) {
  const int64_t cols_size = g->c * g->kh * g->kw * g->oh * g->ow, wsize = g->o * (g->c / g->groups) * g->kh * g->kw;
  const int64_t xs = g->c * g->h * g->w, ys = g->o * g->oh * g->ow;
  const size_t es = mt_dtype_size(dtype);
  const int nt = image_threads(g);
  const int64_t per_thread = cols_size + (path == PATH_WEIGHT_GRAD ? wsize : 0);
  const size_t bytes = es * (size_t)per_thread * (size_t)nt;
  char *scratch = mt_alloc(bytes);
  if (!scratch) return mt_fail("conv2d: out of memory for %zu bytes of scratch", bytes);
  if (path == PATH_WEIGHT_GRAD)
    for (int t = 0; t < nt; t++) memset(scratch + es * (size_t)(t * per_thread + cols_size), 0, es * (size_t)wsize);
  gemm_job job = {path, dtype, nt, out, scratch, a, b, bias, g, cols_size, xs, ys, per_thread};
  mt_parallel_for(nt, 1, gemm_shares, &job);
  if (path == PATH_WEIGHT_GRAD) {
    for (int64_t i = 0; i < wsize; i++) {
      double sum = 0;
      for (int t = 0; t < nt; t++) {
        const char *p = scratch + es * (size_t)(t * per_thread + cols_size + i);
        sum += dtype == MT_FLOAT32 ? (double)*(const float *)p : *(const double *)p;
      }
      if (dtype == MT_FLOAT32) ((float *)out)[i] = (float)sum; else ((double *)out)[i] = sum;
    }
  }
  mt_free(scratch, bytes);
  return 0;
}

/* ---- entry points ---- */
static int check_bias(const char *op, const mt_tensor *b, int64_t n) {
  char bb[128];
  if (b && (b->ndim != 1 || b->shape[0] != n))
    return mt_fail("%s: expected a bias of size %lld, got %s", op, (long long)n, mt_shape_str(b, bb, sizeof bb));
  return 0;
}

/* adds bias[c] to every element of channel c of x (n, c, len) */
static void add_bias(char *x, const char *bias, int dtype, int64_t n, int64_t c, int64_t len) {
  for (int64_t i = 0; i < n * c; i++)
    for (int64_t j = 0; j < len; j++) {
      if (dtype == MT_FLOAT32) ((float *)x)[i * len + j] += ((const float *)bias)[i % c];
      else ((double *)x)[i * len + j] += ((const double *)bias)[i % c];
    }
}

int mt_conv2d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, const mt_conv_geom *g) {
  if (__builtin_expect(mt_any_off_cpu(x, w, b), 0)) MT_EXTRA_CALL("conv2d", conv2d, x, w, b, y, x, w, b, g);
  if (check_bias("conv2d", b, g->o)) return -1;
  const mt_tensor *in[3] = {x, w, b};
  mt_tensor c[3] = {{0}};
  if (prepare("conv2d", c, in, 3)) return -1;
  const int64_t shape[4] = {g->n, g->o, g->oh, g->ow};
  int rc = mt_tensor_init(y, x->dtype, 4, shape);
  const char *bias = b ? mt_data(&c[2]) : NULL;
  if (rc == 0 && g->n > 0) {
    if (x->dtype == MT_FLOAT32)
      rc = direct_kernels()->forward((float *)mt_data(y), (const float *)mt_data(&c[0]), (const float *)mt_data(&c[1]),
                          (const float *)bias, g);
    else
      rc = gemm_run(PATH_FORWARD, x->dtype, mt_data(y), mt_data(&c[0]), mt_data(&c[1]), bias, g);
  }
  release_all(c, 3);
  return rc;
}

int mt_conv2d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                         const mt_conv_geom *g) {
  if (__builtin_expect(mt_any_off_cpu(gy, w, b), 0))
    MT_EXTRA_CALL("conv_transpose2d", conv2d_input_grad, gy, w, b, gx, gy, w, b, g);
  if (check_bias("conv_transpose2d", b, g->c)) return -1;
  const mt_tensor *in[3] = {gy, w, b};
  mt_tensor c[3] = {{0}};
  if (prepare("conv_transpose2d", c, in, 3)) return -1;
  const int64_t shape[4] = {g->n, g->c, g->h, g->w};
  int rc = mt_tensor_init(gx, gy->dtype, 4, shape);
  if (rc == 0 && g->n > 0) {
    if (gy->dtype == MT_FLOAT32 && g->sh == 1 && g->sw == 1)
      rc = direct_kernels()->input_grad((float *)mt_data(gx), (const float *)mt_data(&c[0]), (const float *)mt_data(&c[1]), g);
    else
      rc = gemm_run(PATH_INPUT_GRAD, gy->dtype, mt_data(gx), mt_data(&c[0]), mt_data(&c[1]), NULL, g);
    if (rc == 0 && b) add_bias(mt_data(gx), mt_data(&c[2]), gy->dtype, g->n, g->c, g->h * g->w);
  }
  release_all(c, 3);
  return rc;
}

int mt_conv2d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                          const mt_conv_geom *g) {
  if (__builtin_expect(mt_any_off_cpu(x, gy, NULL), 0))
    MT_EXTRA_CALL("conv2d", conv2d_weight_grad, x, gy, NULL, gw, gb, x, gy, g);
  const mt_tensor *in[2] = {x, gy};
  mt_tensor c[2] = {{0}};
  if (prepare("conv2d backward", c, in, 2)) return -1;
  const int64_t shape[4] = {g->o, g->c / g->groups, g->kh, g->kw}, bshape[1] = {g->o};
  /* the bias gradient from the weight gradient's pass where the kernel has one, else a sum */
  const int fused = gb && x->dtype == MT_FLOAT32 && g->n > 0 && direct_kernels()->fuses_bias(g);
  int rc = mt_tensor_init(gw, x->dtype, 4, shape);
  if (rc == 0 && gb)
    rc = fused ? mt_tensor_init(gb, x->dtype, 1, bshape)
               : mt_reduce(gb, &c[1], MT_OP_sum, 1u << 0 | 1u << 2 | 1u << 3, 0, -1, 0, MT_FLOAT32);
  if (rc == 0 && g->n == 0)
    rc = mt_fill(gw, 0);
  else if (rc == 0 && x->dtype == MT_FLOAT32)
    rc = direct_kernels()->weight_grad((float *)mt_data(gw), fused ? (float *)mt_data(gb) : NULL, (const float *)mt_data(&c[0]),
                            (const float *)mt_data(&c[1]), g);
  else if (rc == 0)
    rc = gemm_run(PATH_WEIGHT_GRAD, x->dtype, mt_data(gw), mt_data(&c[0]), mt_data(&c[1]), NULL, g);
  if (rc) {
    mt_tensor_release(gw);
    if (gb) mt_tensor_release(gb);
  }
  release_all(c, 2);
  return rc;
}

/* Off the CPU: the device's unfold (fold 0: out = cols from in = x) or
   fold (out = x from in = cols), in contiguous. */
static __attribute__((noinline)) int fold_off_cpu(mt_tensor *out, const mt_tensor *in, const mt_conv_geom *g,
                                                  int fold) {
  const char *op = fold ? "fold" : "unfold";
  const mt_device_extra *k = mt_extra_for(op, in, NULL, NULL);
  if (!k) return -1;
  int (*fn)(mt_tensor *, const mt_tensor *, const mt_conv_geom *) = fold ? k->col2im : k->im2col;
  if (!fn) return mt_fail("%s: no kernel for this device yet (move the tensors with :cpu())", op);
  return fn(out, in, g);
}

int mt_im2col(mt_tensor *cols, const mt_tensor *x, const mt_conv_geom *g) {
  const mt_tensor *in[1] = {x};
  mt_tensor c = {0};
  if (prepare("unfold", &c, in, 1)) return -1;
  const int64_t kc = g->c * g->kh * g->kw, len = g->oh * g->ow, xs = g->c * g->h * g->w;
  const int64_t shape[3] = {g->n, kc, len};
  int rc = mt_tensor_init_like(cols, x->dtype, 3, shape, x);
  if (mt_device_of(x) != MT_CPU) {
    rc = rc ? -1 : fold_off_cpu(cols, &c, g, 0);
    mt_tensor_release(&c);
    return rc;
  }
  for (int64_t n = 0; rc == 0 && n < g->n; n++) {
    if (x->dtype == MT_FLOAT32) im2col_float((float *)mt_data(cols) + n * kc * len, (const float *)mt_data(&c) + n * xs, g->c, g);
    else im2col_double((double *)mt_data(cols) + n * kc * len, (const double *)mt_data(&c) + n * xs, g->c, g);
  }
  mt_tensor_release(&c);
  return rc;
}

int mt_col2im(mt_tensor *x, const mt_tensor *cols, const mt_conv_geom *g) {
  const mt_tensor *in[1] = {cols};
  mt_tensor c = {0};
  if (prepare("fold", &c, in, 1)) return -1;
  const int64_t kc = g->c * g->kh * g->kw, len = g->oh * g->ow, xs = g->c * g->h * g->w;
  const int64_t shape[4] = {g->n, g->c, g->h, g->w};
  int rc = mt_tensor_init_like(x, cols->dtype, 4, shape, cols);
  if (mt_device_of(cols) != MT_CPU) {
    rc = rc ? -1 : fold_off_cpu(x, &c, g, 1);
    mt_tensor_release(&c);
    return rc;
  }
  if (rc == 0) rc = mt_fill(x, 0);
  for (int64_t n = 0; rc == 0 && n < g->n; n++) {
    if (cols->dtype == MT_FLOAT32) col2im_float((float *)mt_data(x) + n * xs, (const float *)mt_data(&c) + n * kc * len, g->c, g);
    else col2im_double((double *)mt_data(x) + n * xs, (const double *)mt_data(&c) + n * kc * len, g->c, g);
  }
  mt_tensor_release(&c);
  return rc;
}
