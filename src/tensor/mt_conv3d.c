/* mt_conv3d.c: 3-D convolution over NCTHW batches (float32, float64) and
   its two adjoints, on the 2-D kernels of mt_conv.c. A frame is an image m
   at an output time step i; its time window, opened into channels (vol2col
   along t):
     u[m, i][ci * kt + a] = x[m][ci][i * st - pt + a * dt]   (planes h x w, zero outside x)
   convolved in 2-D with the weight viewed (o, c / groups * kt, kh, kw)
   gives the output plane y[m][:, i] -- channels (ci, a) of one group stay
   together, so groups carry over. The 2-D kernels are the tuned ones (the
   direct float32 kernels, im2col + GEMM through cblas for float64, each
   over the frames on the thread pool); the input adjoint is the 2-D one's
   result folded back along t (col2vol along t), the weight adjoint the 2-D
   one's over the frames. Frames go in chunks of at most CHUNK_BYTES of
   opened windows, so memory stays bounded whatever n and t; the copies
   around the 2-D kernels spread over the pool when they are large. */
#include <string.h>
#include "mt_conv.h"
#include "mt_ops.h"
#include "mt_iter.h"
#include "mt_parallel.h"

/* the opened windows (or the gathered output gradient) of one chunk of frames */
#define CHUNK_BYTES ((int64_t)32 << 20)

/* ---- geometry ---- */

/* The sizes the geometry implies must fit int64: the input, the output, and
   the frames' 2-D problem (n * ot frames of c * kt channels, their 2-D
   columns c * kt * kh * kw * oh * ow); -1 (and the error) when one does not. */
static int check_sizes(const mt_conv3d_geom *g, const char *op) {
  int ov = 0;
  if (g->ot < 0 || g->oh < 0 || g->ow < 0) ov = 1;
  const int64_t hw = mt_size_mul(g->h, g->w, &ov), ohw = mt_size_mul(g->oh, g->ow, &ov);
  const int64_t ckt = mt_size_mul(g->c, g->kt, &ov), frames = mt_size_mul(g->n, g->ot, &ov);
  mt_size_mul(mt_size_mul(mt_size_mul(g->n, g->c, &ov), g->t, &ov), hw, &ov);
  mt_size_mul(mt_size_mul(mt_size_mul(g->n, g->o, &ov), g->ot, &ov), ohw, &ov);
  mt_size_mul(mt_size_mul(frames, ckt, &ov), hw, &ov);
  mt_size_mul(mt_size_mul(mt_size_mul(ckt, g->kh, &ov), g->kw, &ov), ohw, &ov);
  mt_size_mul(mt_size_mul(frames, g->o, &ov), ohw, &ov);
  if (ov)
    return mt_fail("%s: too large: a %lldx%lldx%lld kernel (dilation %lldx%lldx%lld, padding %lldx%lldx%lld) over "
                   "%lldx%lldx%lld volumes of %lld channels", op, (long long)g->kt, (long long)g->kh,
                   (long long)g->kw, (long long)g->dt, (long long)g->dh, (long long)g->dw, (long long)g->pt,
                   (long long)g->ph, (long long)g->pw, (long long)g->t, (long long)g->h, (long long)g->w,
                   (long long)g->c);
  return 0;
}

int mt_conv3d_geom_make(mt_conv3d_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                        const int64_t *stride, const int64_t *pad_before, const int64_t *pad_after,
                        const int64_t *dilation, int64_t groups) {
  char bx[128], bw[128];
  if (x->ndim != 5 || w->ndim != 5)
    return mt_fail("%s: expected a 5-D input (n, c, t, h, w) and weight (o, c / groups, kt, kh, kw), got %s and %s",
                   op, mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  if (mt_conv_check_params(op, 3, stride, dilation, groups)) return -1;
  for (int i = 0; i < 3; i++)
    if (pad_before[i] < 0 || pad_after[i] < 0)
      return mt_fail("%s: negative padding %lld", op, (long long)(pad_before[i] < 0 ? pad_before[i] : pad_after[i]));
  if (w->shape[0] % groups)
    return mt_fail("%s: out_channels (%lld, weight %s) must be divisible by groups=%lld", op,
                   (long long)w->shape[0], mt_shape_str(w, bw, sizeof bw), (long long)groups);
  int64_t channels;
  if (mt_mul_size(op, w->shape[1], groups, &channels)) return -1;
  if (x->shape[1] != channels)
    return mt_fail("%s: given groups=%lld, weight of size %s expects input with %lld channels, got input of size %s",
                   op, (long long)groups, mt_shape_str(w, bw, sizeof bw), (long long)channels,
                   mt_shape_str(x, bx, sizeof bx));
  *g = (mt_conv3d_geom){x->shape[0], x->shape[1], x->shape[2], x->shape[3], x->shape[4],
                        w->shape[0], w->shape[2], w->shape[3], w->shape[4], 0, 0, 0,
                        stride[0], stride[1], stride[2], pad_before[0], pad_before[1], pad_before[2],
                        dilation[0], dilation[1], dilation[2], groups};
  g->ot = mt_conv_out_size(g->t, g->kt, g->st, pad_before[0], pad_after[0], g->dt);
  g->oh = mt_conv_out_size(g->h, g->kh, g->sh, pad_before[1], pad_after[1], g->dh);
  g->ow = mt_conv_out_size(g->w, g->kw, g->sw, pad_before[2], pad_after[2], g->dw);
  if (check_sizes(g, op)) return -1;
  if (g->ot < 1 || g->oh < 1 || g->ow < 1 || g->kt < 1 || g->kh < 1 || g->kw < 1)
    return mt_fail("%s: kernel size %lldx%lldx%lld (dilation %lldx%lldx%lld) does not fit the input padded by "
                   "(%lld, %lld)x(%lld, %lld)x(%lld, %lld) (input %s, weight %s)", op, (long long)g->kt,
                   (long long)g->kh, (long long)g->kw, (long long)g->dt, (long long)g->dh, (long long)g->dw,
                   (long long)pad_before[0], (long long)pad_after[0], (long long)pad_before[1],
                   (long long)pad_after[1], (long long)pad_before[2], (long long)pad_after[2],
                   mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  return 0;
}

int mt_conv_transpose3d_geom_make(mt_conv3d_geom *g, const char *op, const mt_tensor *x, const mt_tensor *w,
                                  const int64_t *stride, const int64_t *padding, const int64_t *output_padding,
                                  const int64_t *dilation, int64_t groups) {
  char bx[128], bw[128];
  if (x->ndim != 5 || w->ndim != 5)
    return mt_fail("%s: expected a 5-D input (n, c, t, h, w) and weight (c, o / groups, kt, kh, kw), got %s and %s",
                   op, mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  if (mt_conv_check_params(op, 3, stride, dilation, groups)) return -1;
  if (x->shape[1] != w->shape[0])
    return mt_fail("%s: given transposed=1, weight of size %s expects input with %lld channels, got input of size %s",
                   op, mt_shape_str(w, bw, sizeof bw), (long long)w->shape[0], mt_shape_str(x, bx, sizeof bx));
  if (w->shape[0] % groups)
    return mt_fail("%s: in_channels (%lld, weight %s) must be divisible by groups=%lld", op,
                   (long long)w->shape[0], mt_shape_str(w, bw, sizeof bw), (long long)groups);
  int64_t size[3];
  for (int i = 0; i < 3; i++) {
    if (padding[i] < 0 || output_padding[i] < 0) return mt_fail("%s: negative padding or output_padding", op);
    if (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i])
      return mt_fail("%s: output padding (%lld) must be smaller than either stride (%lld) or dilation (%lld)", op,
                     (long long)output_padding[i], (long long)stride[i], (long long)dilation[i]);
    int ov = 0;                                 /* output_padding + 1 fits: it is below stride or dilation */
    const int64_t span = mt_size_add(mt_size_mul(x->shape[2 + i] - 1, stride[i], &ov),
                                     mt_size_mul(dilation[i], w->shape[2 + i] - 1, &ov), &ov);
    size[i] = mt_size_sub(mt_size_add(span, output_padding[i] + 1, &ov), mt_size_mul(padding[i], 2, &ov), &ov);
    if (ov)
      return mt_fail("%s: too large: stride %lld, padding %lld and dilation %lld for input %s and weight %s", op,
                     (long long)stride[i], (long long)padding[i], (long long)dilation[i],
                     mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
    if (size[i] < 1 || w->shape[2 + i] < 1)
      return mt_fail("%s: the output would be empty (%lld) for input %s and weight %s", op, (long long)size[i],
                     mt_shape_str(x, bx, sizeof bx), mt_shape_str(w, bw, sizeof bw));
  }
  int64_t out_channels;
  if (mt_mul_size(op, w->shape[1], groups, &out_channels)) return -1;
  *g = (mt_conv3d_geom){x->shape[0], out_channels, size[0], size[1], size[2], w->shape[0], w->shape[2],
                        w->shape[3], w->shape[4], x->shape[2], x->shape[3], x->shape[4],
                        stride[0], stride[1], stride[2], padding[0], padding[1], padding[2],
                        dilation[0], dilation[1], dilation[2], groups};
  return check_sizes(g, op);
}

/* ---- the frames ---- */

/* The 2-D convolution of count frames: (count, c * kt, h, w) -> (count, o, oh, ow) */
static mt_conv_geom frame_geom(const mt_conv3d_geom *g, int64_t count) {
  return (mt_conv_geom){count, g->c * g->kt, g->h, g->w, g->o, g->kh, g->kw, g->oh, g->ow,
                        g->sh, g->sw, g->ph, g->pw, g->dh, g->dw, g->groups};
}

/* Frames per chunk: opened windows and gathered gradients of at most CHUNK_BYTES, at least one frame */
static int64_t chunk_frames(const mt_conv3d_geom *g, size_t es) {
  const int64_t in = g->c * g->kt * g->h * g->w, out = g->o * g->oh * g->ow;
  const int64_t per = (in > out ? in : out) * (int64_t)es;
  const int64_t f = per > 0 ? CHUNK_BYTES / per : g->n * g->ot;
  const int64_t all = g->n * g->ot;
  return f < 1 ? 1 : (f > all ? all : f);
}

/* One copy between the 5-D tensors and a chunk's frames, over frames [begin, end) of the chunk. */
typedef struct {
  const mt_conv3d_geom *g;
  int64_t f0;              /* the chunk's first frame */
  size_t es;
  int dtype;
  char *dst;
  const char *src, *bias;
} frame_job;

/* u (count, c * kt, h * w) of frames f0 + [begin, end): the windows of x (src) */
static void vol2col_frames(void *ctx, int64_t begin, int64_t end) {
  const frame_job *j = ctx;
  const mt_conv3d_geom *g = j->g;
  const int64_t hw = g->h * g->w;
  const size_t row = j->es * (size_t)hw;
  for (int64_t f = begin; f < end; f++) {
    const int64_t m = (j->f0 + f) / g->ot, i = (j->f0 + f) % g->ot;
    char *dst = j->dst + (size_t)(f * g->c * g->kt) * row;
    for (int64_t ci = 0; ci < g->c; ci++)
      for (int64_t a = 0; a < g->kt; a++, dst += row) {
        const int64_t tt = i * g->st - g->pt + a * g->dt;
        if (tt < 0 || tt >= g->t) memset(dst, 0, row);
        else memcpy(dst, j->src + (size_t)((m * g->c + ci) * g->t + tt) * row, row);
      }
  }
}

/* gy2 (count, o, oh * ow) of frames f0 + [begin, end): the planes of gy (src) */
static void gather_frames(void *ctx, int64_t begin, int64_t end) {
  const frame_job *j = ctx;
  const mt_conv3d_geom *g = j->g;
  const size_t row = j->es * (size_t)(g->oh * g->ow);
  for (int64_t f = begin; f < end; f++) {
    const int64_t m = (j->f0 + f) / g->ot, i = (j->f0 + f) % g->ot;
    for (int64_t o = 0; o < g->o; o++)
      memcpy(j->dst + (size_t)(f * g->o + o) * row, j->src + (size_t)((m * g->o + o) * g->ot + i) * row, row);
  }
}

/* y's planes of frames f0 + [begin, end) from y2 (count, o, oh * ow) (src), plus the bias */
static void scatter_frames(void *ctx, int64_t begin, int64_t end) {
  const frame_job *j = ctx;
  const mt_conv3d_geom *g = j->g;
  const int64_t len = g->oh * g->ow;
  for (int64_t f = begin; f < end; f++) {
    const int64_t m = (j->f0 + f) / g->ot, i = (j->f0 + f) % g->ot;
    for (int64_t o = 0; o < g->o; o++) {
      const int64_t d = ((m * g->o + o) * g->ot + i) * len, s = (f * g->o + o) * len;
      if (j->dtype == MT_FLOAT32) {
        float *dst = (float *)j->dst + d;
        const float *src = (const float *)j->src + s, bo = j->bias ? ((const float *)j->bias)[o] : 0.0f;
        for (int64_t q = 0; q < len; q++) dst[q] = src[q] + bo;
      } else {
        double *dst = (double *)j->dst + d;
        const double *src = (const double *)j->src + s, bo = j->bias ? ((const double *)j->bias)[o] : 0.0;
        for (int64_t q = 0; q < len; q++) dst[q] = src[q] + bo;
      }
    }
  }
}

/* gx += gu (count, c * kt, h * w) of the chunk's frames (src) folded back along t (col2vol
   along t), for the pairs (image, channel) [begin, end) counted from the chunk's first image:
   each pair owns its rows of gx, so pairs may run in parallel */
typedef struct {
  const frame_job *j;
  int64_t count;
} fold_job;

static void fold_pairs(void *ctx, int64_t begin, int64_t end) {
  const fold_job *fj = ctx;
  const frame_job *j = fj->j;
  const mt_conv3d_geom *g = j->g;
  const int64_t hw = g->h * g->w, m0 = j->f0 / g->ot;
  for (int64_t p = begin; p < end; p++) {
    const int64_t m = m0 + p / g->c, ci = p % g->c;
    int64_t f = m * g->ot - j->f0, fe = f + g->ot;         /* m's frames, within the chunk */
    if (f < 0) f = 0;
    if (fe > fj->count) fe = fj->count;
    for (; f < fe; f++) {
      const int64_t i = (j->f0 + f) % g->ot;
      for (int64_t a = 0; a < g->kt; a++) {
        const int64_t tt = i * g->st - g->pt + a * g->dt;
        if (tt < 0 || tt >= g->t) continue;
        const int64_t d = ((m * g->c + ci) * g->t + tt) * hw, s = ((f * g->c + ci) * g->kt + a) * hw;
        if (j->dtype == MT_FLOAT32) {
          float *dst = (float *)j->dst + d;
          const float *src = (const float *)j->src + s;
          for (int64_t q = 0; q < hw; q++) dst[q] += src[q];
        } else {
          double *dst = (double *)j->dst + d;
          const double *src = (const double *)j->src + s;
          for (int64_t q = 0; q < hw; q++) dst[q] += src[q];
        }
      }
    }
  }
}

/* runs fn over items [0, n), each about per elements: on the pool when large, else inline */
static void spread(int64_t n, int64_t per, mt_chunk_fn fn, void *ctx) {
  mt_parallel_for(n, mt_parallel_items(MT_ITER_GRAIN / 2, n * per, n), fn, ctx);
}

/* ---- entry points ---- */

/* t has the 5 sizes of shape (what names t in the error) */
static int check_shape(const char *op, const char *what, const mt_tensor *t, const int64_t *shape) {
  char bt[128], bs[128];
  if (t->ndim == 5 && !memcmp(t->shape, shape, sizeof(int64_t) * 5)) return 0;
  return mt_fail("%s: expected %s of size %s, got %s", op, what, mt_dims_str(shape, 5, bs, sizeof bs),
                 mt_shape_str(t, bt, sizeof bt));
}

static int check_bias(const char *op, const mt_tensor *b, int64_t n) {
  char bb[128];
  if (b && (b->ndim != 1 || b->shape[0] != n))
    return mt_fail("%s: expected a bias of size %lld, got %s", op, (long long)n, mt_shape_str(b, bb, sizeof bb));
  return 0;
}

/* Inputs as contiguous tensors of one floating dtype (aliases when they already are). */
static int prepare(const char *op, mt_tensor *out, const mt_tensor *const *in, int n) {
  const int dtype = in[0]->dtype;
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

/* the shapes of the operands: x, the weight, y */
static void shapes_of(const mt_conv3d_geom *g, int64_t *xs, int64_t *ws, int64_t *ys) {
  const int64_t x[5] = {g->n, g->c, g->t, g->h, g->w}, w[5] = {g->o, g->c / g->groups, g->kt, g->kh, g->kw};
  const int64_t y[5] = {g->n, g->o, g->ot, g->oh, g->ow};
  memcpy(xs, x, sizeof x);
  memcpy(ws, w, sizeof w);
  memcpy(ys, y, sizeof y);
}

/* the weight (o, cg, kt, kh, kw) viewed as the frames' 2-D one (o, cg * kt, kh, kw) */
static int weight_2d(mt_tensor *w2, const mt_tensor *w, const mt_conv3d_geom *g) {
  const int64_t shape[4] = {g->o, g->c / g->groups * g->kt, g->kh, g->kw};
  return mt_view(w2, w, 4, shape);
}

int mt_conv3d(mt_tensor *y, const mt_tensor *x, const mt_tensor *w, const mt_tensor *b, const mt_conv3d_geom *g) {
  const char *op = "conv3d";
  int64_t xs[5], ws[5], ys[5];
  shapes_of(g, xs, ws, ys);
  if (__builtin_expect(mt_any_off_cpu(x, w, b), 0)) MT_EXTRA_CALL(op, conv3d, x, w, b, y, x, w, b, g);
  if (check_shape(op, "an input", x, xs) || check_shape(op, "a weight", w, ws) ||
      check_bias(op, b, g->o))
    return -1;
  const mt_tensor *in[3] = {x, w, b};
  mt_tensor c[3] = {{0}}, w2 = {0};
  if (prepare(op, c, in, 3)) return -1;
  const int dtype = x->dtype;
  const size_t es = mt_dtype_size(dtype);
  int rc = mt_tensor_init(y, dtype, 5, ys);
  if (rc == 0) rc = weight_2d(&w2, &c[1], g);
  const int64_t frames = g->n * g->ot, per = chunk_frames(g, es);
  for (int64_t f0 = 0; rc == 0 && f0 < frames; f0 += per) {
    const int64_t count = frames - f0 < per ? frames - f0 : per;
    const mt_conv_geom g2 = frame_geom(g, count);
    const int64_t ushape[4] = {count, g2.c, g->h, g->w};
    mt_tensor u = {0}, y2 = {0};
    frame_job j = {g, f0, es, dtype, NULL, mt_data(&c[0]), b ? mt_data(&c[2]) : NULL};
    rc = mt_tensor_init(&u, dtype, 4, ushape);
    if (rc == 0) {
      j.dst = mt_data(&u);
      spread(count, g2.c * g->h * g->w, vol2col_frames, &j);
      rc = mt_conv2d(&y2, &u, &w2, NULL, &g2);
    }
    if (rc == 0) {
      j.dst = mt_data(y);
      j.src = mt_data(&y2);
      spread(count, g->o * g->oh * g->ow, scatter_frames, &j);
    }
    mt_tensor_release(&u);
    mt_tensor_release(&y2);
  }
  mt_tensor_release(&w2);
  release_all(c, 3);
  if (rc) mt_tensor_release(y);
  return rc;
}

int mt_conv3d_input_grad(mt_tensor *gx, const mt_tensor *gy, const mt_tensor *w, const mt_tensor *b,
                         const mt_conv3d_geom *g) {
  const char *op = "conv_transpose3d";
  int64_t xs[5], ws[5], ys[5];
  shapes_of(g, xs, ws, ys);
  if (__builtin_expect(mt_any_off_cpu(gy, w, b), 0)) MT_EXTRA_CALL(op, conv3d_input_grad, gy, w, b, gx, gy, w, b, g);
  if (check_shape(op, "an input", gy, ys) || check_shape(op, "a weight", w, ws) ||
      check_bias(op, b, g->c))
    return -1;
  const mt_tensor *in[3] = {gy, w, b};
  mt_tensor c[3] = {{0}}, w2 = {0};
  if (prepare(op, c, in, 3)) return -1;
  const int dtype = gy->dtype;
  const size_t es = mt_dtype_size(dtype);
  int rc = mt_tensor_init(gx, dtype, 5, xs);
  if (rc == 0) rc = mt_fill(gx, 0);
  if (rc == 0) rc = weight_2d(&w2, &c[1], g);
  const int64_t frames = g->n * g->ot, per = chunk_frames(g, es);
  for (int64_t f0 = 0; rc == 0 && f0 < frames; f0 += per) {
    const int64_t count = frames - f0 < per ? frames - f0 : per;
    const mt_conv_geom g2 = frame_geom(g, count);
    const int64_t gshape[4] = {count, g->o, g->oh, g->ow};
    mt_tensor gy2 = {0}, gu = {0};
    frame_job j = {g, f0, es, dtype, NULL, mt_data(&c[0]), NULL};
    rc = mt_tensor_init(&gy2, dtype, 4, gshape);
    if (rc == 0) {
      j.dst = mt_data(&gy2);
      spread(count, g->o * g->oh * g->ow, gather_frames, &j);
      rc = mt_conv2d_input_grad(&gu, &gy2, &w2, NULL, &g2);
    }
    if (rc == 0) {
      j.dst = mt_data(gx);
      j.src = mt_data(&gu);
      fold_job fj = {&j, count};
      const int64_t images = (f0 + count - 1) / g->ot - f0 / g->ot + 1;   /* the chunk's, whole or part */
      if (g->c > 0) spread(images * g->c, count * g->kt * g->h * g->w / images, fold_pairs, &fj);
    }
    mt_tensor_release(&gy2);
    mt_tensor_release(&gu);
  }
  if (rc == 0 && b) {
    const int64_t len = g->t * g->h * g->w;
    for (int64_t i = 0; i < g->n * g->c; i++) {
      if (dtype == MT_FLOAT32) {
        float *p = (float *)mt_data(gx) + i * len;
        const float v = ((const float *)mt_data(&c[2]))[i % g->c];
        for (int64_t q = 0; q < len; q++) p[q] += v;
      } else {
        double *p = (double *)mt_data(gx) + i * len;
        const double v = ((const double *)mt_data(&c[2]))[i % g->c];
        for (int64_t q = 0; q < len; q++) p[q] += v;
      }
    }
  }
  mt_tensor_release(&w2);
  release_all(c, 3);
  if (rc) mt_tensor_release(gx);
  return rc;
}

/* acc += add, n elements of dtype */
static void accumulate(char *acc, const char *add, int dtype, int64_t n) {
  if (dtype == MT_FLOAT32)
    for (int64_t i = 0; i < n; i++) ((float *)acc)[i] += ((const float *)add)[i];
  else
    for (int64_t i = 0; i < n; i++) ((double *)acc)[i] += ((const double *)add)[i];
}

int mt_conv3d_weight_grad(mt_tensor *gw, mt_tensor *gb, const mt_tensor *x, const mt_tensor *gy,
                          const mt_conv3d_geom *g) {
  const char *op = "conv3d backward";
  int64_t xs[5], ws[5], ys[5];
  shapes_of(g, xs, ws, ys);
  if (__builtin_expect(mt_any_off_cpu(x, gy, NULL), 0))
    MT_EXTRA_CALL(op, conv3d_weight_grad, x, gy, NULL, gw, gb, x, gy, g);
  if (check_shape(op, "an input", x, xs) || check_shape(op, "a gradient", gy, ys))
    return -1;
  const mt_tensor *in[2] = {x, gy};
  mt_tensor c[2] = {{0}};
  if (prepare(op, c, in, 2)) return -1;
  const int dtype = x->dtype;
  const size_t es = mt_dtype_size(dtype);
  const int64_t bshape[1] = {g->o}, wnumel = g->o * (g->c / g->groups) * g->kt * g->kh * g->kw;
  int rc = mt_tensor_init(gw, dtype, 5, ws);
  if (rc == 0) rc = mt_fill(gw, 0);
  if (rc == 0 && gb) rc = mt_tensor_init(gb, dtype, 1, bshape);
  if (rc == 0 && gb) rc = mt_fill(gb, 0);
  const int64_t frames = g->n * g->ot, per = chunk_frames(g, es);
  for (int64_t f0 = 0; rc == 0 && f0 < frames; f0 += per) {
    const int64_t count = frames - f0 < per ? frames - f0 : per;
    const mt_conv_geom g2 = frame_geom(g, count);
    const int64_t ushape[4] = {count, g2.c, g->h, g->w}, gshape[4] = {count, g->o, g->oh, g->ow};
    mt_tensor u = {0}, gy2 = {0}, gw2 = {0}, gb2 = {0}, gbc = {0};
    frame_job j = {g, f0, es, dtype, NULL, mt_data(&c[0]), NULL};
    rc = mt_tensor_init(&u, dtype, 4, ushape);
    if (rc == 0) rc = mt_tensor_init(&gy2, dtype, 4, gshape);
    if (rc == 0) {
      j.dst = mt_data(&u);
      spread(count, g2.c * g->h * g->w, vol2col_frames, &j);
      j.dst = mt_data(&gy2);
      j.src = mt_data(&c[1]);
      spread(count, g->o * g->oh * g->ow, gather_frames, &j);
      rc = mt_conv2d_weight_grad(&gw2, gb ? &gb2 : NULL, &u, &gy2, &g2);
    }
    if (rc == 0) {
      accumulate(mt_data(gw), mt_data(&gw2), dtype, wnumel);
      if (gb && (rc = mt_contiguous_as(&gbc, &gb2, dtype)) == 0) accumulate(mt_data(gb), mt_data(&gbc), dtype, g->o);
    }
    mt_tensor_release(&u);
    mt_tensor_release(&gy2);
    mt_tensor_release(&gw2);
    mt_tensor_release(&gb2);
    mt_tensor_release(&gbc);
  }
  release_all(c, 2);
  if (rc) {
    mt_tensor_release(gw);
    if (gb) mt_tensor_release(gb);
  }
  return rc;
}
