/* mt_resample.c: separable linear maps of the last two dims (see
   mt_resample.h). Each dim's map is a sparse matrix of taps (output i reads
   input index[k] with weight[k], k in [start[i], start[i + 1])); a plane
   goes through the w taps into a scratch plane, then through the h taps.
   The adjoint runs the same taps backwards, scattering. Planes are spread
   over threads. */
#include <math.h>
#include <string.h>
#include "mt_resample.h"
#include "mt_pool.h"
#include "mt_alloc.h"
#include "mt_iter.h"
#include "mt_parallel.h"
#include "mt_ops.h"
#include "mt_isa.h"

static const char *const op_names[] = {
  [MT_RS_AVG_POOL] = "avg_pool2d", [MT_RS_ADAPTIVE_AVG] = "adaptive_avg_pool2d", [MT_RS_REFLECT] = "pad",
  [MT_RS_REPLICATE] = "pad", [MT_RS_NEAREST] = "interpolate", [MT_RS_BILINEAR] = "interpolate",
  [MT_RS_CIRCULAR] = "pad",
};

static const char *dim_names[2] = {"height", "width"};

/* ---- sizes ---- */
/* Circular padding crops first (the negative pads), then wraps around what
   is left, as PyTorch: the length of that part. */
static int64_t circular_kept(int64_t in, int64_t before, int64_t after) {
  int overflow = 0;
  int64_t kept = mt_size_add(mt_size_add(in, before < 0 ? before : 0, &overflow), after < 0 ? after : 0, &overflow);
  return overflow ? -1 : kept;
}

static int dim_size(const mt_resample *rs, int d, int64_t in, int64_t *out) {
  const char *op = op_names[rs->kind];
  const int64_t a = rs->a[d], b = rs->b[d], c = rs->c[d];
  switch (rs->kind) {
  case MT_RS_AVG_POOL:
    if (a < 1 || b < 1) return mt_fail("%s: kernel and stride must be positive, got %lld and %lld", op, (long long)a, (long long)b);
    if (c < 0 || c > a / 2)
      return mt_fail("%s: padding %lld must be between 0 and half the kernel size %lld", op, (long long)c, (long long)a);
    *out = mt_pool_out_size(in, a, b, c, 1, rs->flags & MT_RS_CEIL_MODE);
    break;
  case MT_RS_REFLECT:
    if (b >= in || c >= in)
      return mt_fail("%s: reflect padding (%lld, %lld) must be less than the input %s %lld", op, (long long)b,
                     (long long)c, dim_names[d], (long long)in);
    break;
  case MT_RS_REPLICATE:
    break;
  case MT_RS_CIRCULAR: {
    const int64_t kept = circular_kept(in, b, c);
    if (kept < 0)
      return mt_fail("%s: circular padding (%lld, %lld) crops more than the input %s %lld", op, (long long)b,
                     (long long)c, dim_names[d], (long long)in);
    if (b > kept || c > kept)
      return mt_fail("%s: circular padding (%lld, %lld) must be at most the input %s %lld%s", op, (long long)b,
                     (long long)c, dim_names[d], (long long)kept, kept != in ? " left after the crop" : "");
    break;
  }
  default:                                       /* the output size is given */
    *out = a;
    if (rs->scale_factor[d] < 0) return mt_fail("%s: scale_factor must be positive, got %g", op, rs->scale_factor[d]);
  }
  if (rs->kind == MT_RS_REFLECT || rs->kind == MT_RS_REPLICATE || rs->kind == MT_RS_CIRCULAR) {
    int overflow = 0;
    *out = mt_size_add(mt_size_add(in, b, &overflow), c, &overflow);
    if (overflow) return mt_fail("%s: padding (%lld, %lld) of the input %s %lld overflows", op, (long long)b,
                                 (long long)c, dim_names[d], (long long)in);
  }
  if (*out < 1 || in < 1)
    return mt_fail("%s: the output %s would be %lld for an input %s of %lld", op, dim_names[d], (long long)*out,
                   dim_names[d], (long long)in);
  return 0;
}

int mt_resample_size(const mt_resample *rs, const int64_t *in, int64_t *out) {
  return dim_size(rs, 0, in[0], &out[0]) || dim_size(rs, 1, in[1], &out[1]) ? -1 : 0;
}

/* ---- taps ---- */
typedef struct {
  int64_t *start;          /* out + 1 */
  int64_t *index;
  double *weight;
  int64_t out, cap;
  size_t bytes;
} taps;

/* the most taps one dim can have; -1 when that count overflows */
static int64_t tap_bound(const mt_resample *rs, int d, int64_t in, int64_t out) {
  int overflow = 0;
  int64_t per_output = rs->kind == MT_RS_AVG_POOL ? rs->a[d] : rs->kind == MT_RS_ADAPTIVE_AVG ? in / out + 2 : 2;
  int64_t bound = mt_size_mul(out, per_output, &overflow);
  return overflow || bound > MT_MAX_NUMEL ? -1 : bound;
}

/* PyTorch's source coordinate of output o for linear interpolation */
static double linear_source(const mt_resample *rs, int d, int64_t in, int64_t out, int64_t o) {
  if (rs->flags & MT_RS_ALIGN_CORNERS) return out > 1 ? (double)o * (double)(in - 1) / (double)(out - 1) : 0;
  const double step = rs->scale_factor[d] > 0 ? 1 / rs->scale_factor[d] : (double)in / (double)out;
  const double src = step * ((double)o + 0.5) - 0.5;
  return src < 0 ? 0 : src;
}

/* PyTorch's 'nearest' source index, computed in float as PyTorch does */
static int64_t nearest_source(const mt_resample *rs, int d, int64_t in, int64_t out, int64_t o) {
  if (out == in) return o;
  if (out == 2 * in) return o >> 1;
  const float step = rs->scale_factor[d] > 0 ? (float)(1 / rs->scale_factor[d]) : (float)in / (float)out;
  const int64_t src = (int64_t)floorf((float)o * step);
  return src < in - 1 ? src : in - 1;
}

/* appends a tap to output t->out */
static void add_tap(taps *t, int64_t index, double weight) {
  int64_t *end = &t->start[t->out + 1];
  t->index[*end] = index;
  t->weight[(*end)++] = weight;
}

/* the taps of output o of dim d (appended after the previous outputs') */
static void dim_taps(taps *t, const mt_resample *rs, int d, int64_t in, int64_t out, int64_t o) {
  switch (rs->kind) {
  case MT_RS_AVG_POOL: {
    const int64_t k = rs->a[d], s = rs->b[d], p = rs->c[d];
    int64_t lo = o * s - p, hi = lo + k < in + p ? lo + k : in + p;
    const int64_t padded = hi - lo;
    lo = lo < 0 ? 0 : lo;
    hi = hi > in ? in : hi;
    const double w = rs->flags & MT_RS_SUM ? 1.0 : 1.0 / (double)(rs->flags & MT_RS_COUNT_PAD ? padded : hi - lo);
    for (int64_t i = lo; i < hi; i++) add_tap(t, i, w);
    break;
  }
  case MT_RS_ADAPTIVE_AVG: {
    int64_t lo, hi;
    mt_adaptive_window(o, in, out, &lo, &hi);
    for (int64_t i = lo; i < hi; i++) add_tap(t, i, 1.0 / (double)(hi - lo));
    break;
  }
  case MT_RS_REFLECT: {
    int64_t i = o - rs->b[d];
    i = i < 0 ? -i : i;
    add_tap(t, i < in ? i : 2 * (in - 1) - i, 1);
    break;
  }
  case MT_RS_REPLICATE: {
    const int64_t i = o - rs->b[d];
    add_tap(t, i < 0 ? 0 : (i >= in ? in - 1 : i), 1);
    break;
  }
  case MT_RS_CIRCULAR: {                         /* the kept part starts after the cropped one */
    const int64_t b = rs->b[d], kept = circular_kept(in, b, rs->c[d]);
    const int64_t first = b < 0 ? -b : 0, i = o - (b > 0 ? b : 0);
    add_tap(t, first + (i % kept + kept) % kept, 1);
    break;
  }
  case MT_RS_NEAREST:
    add_tap(t, nearest_source(rs, d, in, out, o), 1);
    break;
  default: {
    const double src = linear_source(rs, d, in, out, o);
    const int64_t i0 = (int64_t)src < in - 1 ? (int64_t)src : in - 1;
    const double l1 = src - (double)i0;
    if (i0 == in - 1) {
      add_tap(t, i0, 1);
    } else {
      add_tap(t, i0, 1 - l1);
      add_tap(t, i0 + 1, l1);
    }
  }
  }
}

static void taps_free(taps *t) {
  if (t->start) mt_free(t->start, t->bytes);
}

static int taps_build(taps *t, const mt_resample *rs, int d, int64_t in, int64_t out) {
  const int64_t cap = tap_bound(rs, d, in, out);
  if (cap < 0) return mt_fail("%s: %lld outputs from %lld inputs need too many taps", op_names[rs->kind],
                              (long long)out, (long long)in);
  t->bytes = sizeof(int64_t) * (size_t)(out + 1 + cap) + sizeof(double) * (size_t)cap;
  if (!(t->start = mt_alloc(t->bytes))) return mt_fail("%s: out of memory", op_names[rs->kind]);
  t->index = t->start + out + 1;
  t->weight = (double *)(t->index + cap);
  t->start[0] = 0;
  for (int64_t o = 0; o < out; o++) {
    t->out = o;
    t->start[o + 1] = t->start[o];
    dim_taps(t, rs, d, in, out, o);
  }
  t->out = out;
  return 0;
}

/* ---- the planes ---- */
#define RESAMPLE_KERNELS(T)                                                                         \
  /* y (oh, ow) from x (h, w); tmp holds (h, ow) */                                                \
  static MT_CLONES void forward_plane_##T(T *y, const T *x, T *tmp, const taps *th, const taps *tw, int64_t h, \
                                int64_t w) {                                                        \
    const int64_t oh = th->out, ow = tw->out;                                                       \
    for (int64_t r = 0; r < h; r++)                                                                 \
      for (int64_t j = 0; j < ow; j++) {                                                            \
        T sum = 0;                                                                                  \
        for (int64_t k = tw->start[j]; k < tw->start[j + 1]; k++)                                   \
          sum += (T)tw->weight[k] * x[r * w + tw->index[k]];                                        \
        tmp[r * ow + j] = sum;                                                                      \
      }                                                                                             \
    for (int64_t i = 0; i < oh; i++) {                                                              \
      T *yi = y + i * ow;                                                                           \
      for (int64_t j = 0; j < ow; j++) yi[j] = 0;                                                   \
      for (int64_t k = th->start[i]; k < th->start[i + 1]; k++) {                                   \
        const T a = (T)th->weight[k], *tr = tmp + th->index[k] * ow;                                \
        for (int64_t j = 0; j < ow; j++) yi[j] += a * tr[j];                                        \
      }                                                                                             \
    }                                                                                               \
  }                                                                                                 \
  /* x (h, w) from y (oh, ow), the transpose; tmp holds (oh, w) */                                 \
  static MT_CLONES void adjoint_plane_##T(T *x, const T *y, T *tmp, const taps *th, const taps *tw, int64_t h, \
                                int64_t w) {                                                        \
    const int64_t oh = th->out, ow = tw->out;                                                       \
    memset(tmp, 0, sizeof(T) * (size_t)(oh * w));                                                  \
    memset(x, 0, sizeof(T) * (size_t)(h * w));                                                      \
    for (int64_t i = 0; i < oh; i++)                                                                \
      for (int64_t j = 0; j < ow; j++)                                                              \
        for (int64_t k = tw->start[j]; k < tw->start[j + 1]; k++)                                   \
          tmp[i * w + tw->index[k]] += (T)tw->weight[k] * y[i * ow + j];                            \
    for (int64_t i = 0; i < oh; i++)                                                                \
      for (int64_t k = th->start[i]; k < th->start[i + 1]; k++) {                                   \
        const T a = (T)th->weight[k], *ti = tmp + i * w;                                            \
        T *xr = x + th->index[k] * w;                                                               \
        for (int64_t c = 0; c < w; c++) xr[c] += a * ti[c];                                         \
      }                                                                                             \
  }
RESAMPLE_KERNELS(float)
RESAMPLE_KERNELS(double)

typedef struct {
  const char *xd;
  char *rd, *scratch;     /* scratch: one tmp plane per thread slot */
  const taps *th, *tw;
  int64_t h, w, in_plane, out_plane, tmp_size;
  size_t es;
  int dtype, adjoint;
} resample_job;

static void resample_planes(void *job, int64_t begin, int64_t end) {
  const resample_job *j = job;
  char *tmp = j->scratch + j->es * (size_t)(j->tmp_size * mt_parallel_slot());
  for (int64_t q = begin; q < end; q++) {
    const char *xq = j->xd + j->es * (size_t)(q * j->in_plane);
    char *rq = j->rd + j->es * (size_t)(q * j->out_plane);
    if (j->dtype == MT_FLOAT32 && !j->adjoint)
      forward_plane_float((float *)rq, (const float *)xq, (float *)tmp, j->th, j->tw, j->h, j->w);
    else if (j->dtype == MT_FLOAT32)
      adjoint_plane_float((float *)rq, (const float *)xq, (float *)tmp, j->th, j->tw, j->h, j->w);
    else if (!j->adjoint)
      forward_plane_double((double *)rq, (const double *)xq, (double *)tmp, j->th, j->tw, j->h, j->w);
    else
      adjoint_plane_double((double *)rq, (const double *)xq, (double *)tmp, j->th, j->tw, j->h, j->w);
  }
}

/* The taps of t's transpose: for each of the n inputs, the outputs that
   read it and their weights (the adjoint as a map of its own, for devices
   that gather rather than scatter). */
static int taps_transpose(taps *tt, const taps *t, int64_t n, const char *op) {
  const int64_t nnz = t->start[t->out];
  int over = 0;
  const int64_t words = mt_size_add(mt_size_add(n, 1, &over), mt_size_mul(nnz, 2, &over), &over);   /* doubles too */
  if (over || words > MT_MAX_NUMEL) return mt_fail("%s: %lld taps over %lld inputs are too many", op,
                                                   (long long)nnz, (long long)n);
  tt->bytes = sizeof(int64_t) * (size_t)words;
  if (!(tt->start = mt_alloc(tt->bytes))) return mt_fail("%s: out of memory", op);
  tt->index = tt->start + n + 1;
  tt->weight = (double *)(tt->index + nnz);
  tt->out = n;
  memset(tt->start, 0, sizeof(int64_t) * (size_t)(n + 1));
  for (int64_t k = 0; k < nnz; k++) tt->start[t->index[k] + 1]++;
  for (int64_t i = 0; i < n; i++) tt->start[i + 1] += tt->start[i];
  int64_t *fill = mt_alloc(sizeof(int64_t) * (size_t)(n + 1));
  if (!fill) { taps_free(tt); return mt_fail("%s: out of memory", op); }
  memcpy(fill, tt->start, sizeof(int64_t) * (size_t)(n + 1));
  for (int64_t o = 0; o < t->out; o++)                      /* outputs in order: each row stays sorted */
    for (int64_t k = t->start[o]; k < t->start[o + 1]; k++) {
      const int64_t at = fill[t->index[k]]++;
      tt->index[at] = o;
      tt->weight[at] = t->weight[k];
    }
  mt_free(fill, sizeof(int64_t) * (size_t)(n + 1));
  return 0;
}

/* Off the CPU: the device's separable map, forward or (with the taps
   transposed here) adjoint. */
static __attribute__((noinline)) int resample_off_cpu(mt_tensor *r, const mt_tensor *xc, const taps *th,
                                                      const taps *tw, int adjoint, int64_t h, int64_t w,
                                                      const char *op) {
  const mt_device_extra *k = mt_extra_for(op, xc, NULL, NULL);
  if (!k) return -1;
  if (!k->separable) return mt_fail("%s: no kernel for this device yet (move the tensors with :cpu())", op);
  if (!adjoint) {
    const mt_taps mh = {th->start, th->index, th->weight, th->out, h}, mw = {tw->start, tw->index, tw->weight, tw->out, w};
    return k->separable(r, xc, &mh, &mw);
  }
  taps ah = {0}, aw = {0};
  int rc = taps_transpose(&ah, th, h, op) || taps_transpose(&aw, tw, w, op);
  if (rc == 0) {
    const mt_taps mh = {ah.start, ah.index, ah.weight, h, th->out}, mw = {aw.start, aw.index, aw.weight, w, tw->out};
    rc = k->separable(r, xc, &mh, &mw);
  }
  taps_free(&ah);
  taps_free(&aw);
  return rc ? -1 : 0;
}

int mt_resample_apply(mt_tensor *r, const mt_tensor *x, const mt_resample *rs, int adjoint, const int64_t *in) {
  const char *op = op_names[rs->kind];
  char b[128];
  if (x->ndim < 2) return mt_fail("%s: expected an input of at least 2 dims, got size %s", op, mt_shape_str(x, b, sizeof b));
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail("%s: expected float32 or float64, got %s", op, mt_dtypes[x->dtype].name);
  const int64_t *plane = x->shape + x->ndim - 2;
  int64_t src[2] = {plane[0], plane[1]}, dst[2];
  if (adjoint) src[0] = in[0], src[1] = in[1];
  if (mt_resample_size(rs, src, dst)) return -1;
  if (adjoint && (dst[0] != plane[0] || dst[1] != plane[1]))
    return mt_fail("%s backward: gradient of size %s for an output plane of %lldx%lld", op,
                   mt_shape_str(x, b, sizeof b), (long long)dst[0], (long long)dst[1]);
  int64_t shape[MT_MAX_DIMS];
  memcpy(shape, x->shape, sizeof(int64_t) * (size_t)x->ndim);
  shape[x->ndim - 2] = adjoint ? src[0] : dst[0];
  shape[x->ndim - 1] = adjoint ? src[1] : dst[1];
  taps th = {0}, tw = {0};
  mt_tensor xc = {0};
  if (mt_contiguous_as(&xc, x, x->dtype)) return -1;
  int rc = mt_tensor_init_like(r, x->dtype, x->ndim, shape, x);
  if (rc == 0) rc = taps_build(&th, rs, 0, src[0], dst[0]);
  if (rc == 0) rc = taps_build(&tw, rs, 1, src[1], dst[1]);
  const int64_t h = src[0], w = src[1], oh = dst[0], ow = dst[1];
  if (mt_device_of(x) != MT_CPU) {
    if (rc == 0) rc = resample_off_cpu(r, &xc, &th, &tw, adjoint, h, w, op);
    if (rc) mt_tensor_release(r);
    taps_free(&th);
    taps_free(&tw);
    mt_tensor_release(&xc);
    return rc ? -1 : 0;
  }
  const int64_t planes = plane[0] * plane[1] > 0 ? mt_numel(x) / (plane[0] * plane[1]) : 0;
  const int nt = mt_parallel_slots();
  int overflow = 0;
  const int64_t tmp_size = adjoint ? mt_size_mul(oh, w, &overflow) : mt_size_mul(h, ow, &overflow);
  const size_t es = mt_dtypes[x->dtype].size;
  const size_t scratch_bytes = (size_t)mt_size_mul(mt_size_mul(tmp_size, nt, &overflow), (int64_t)es, &overflow);
  if (rc == 0 && overflow) rc = mt_fail("%s: planes of %lldx%lld to %lldx%lld are too large", op, (long long)h,
                                        (long long)w, (long long)oh, (long long)ow);
  char *scratch = rc == 0 && mt_numel(x) ? mt_alloc(scratch_bytes) : NULL;
  if (rc == 0 && mt_numel(x) && !scratch) rc = mt_fail("%s: out of memory", op);
  if (rc == 0 && scratch) {
    resample_job job = {mt_data(&xc), mt_data(r), scratch, &th, &tw, h, w,
                        adjoint ? oh * ow : h * w, adjoint ? h * w : oh * ow, tmp_size, es, x->dtype, adjoint};
    mt_parallel_for(planes, mt_parallel_items(MT_ITER_GRAIN / 2, h * w + oh * ow, 1), resample_planes, &job);
  }
  if (scratch) mt_free(scratch, scratch_bytes);
  taps_free(&th);
  taps_free(&tw);
  mt_tensor_release(&xc);
  return rc;
}
