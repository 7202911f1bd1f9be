/* cu_resample.cu: the separable linear maps of mt_resample.c on the GPU --
   average and adaptive average pooling, reflect, replicate and circular
   padding, nearest and bilinear interpolation, and their adjoints (their
   backward passes) -- and unfold / fold. mt_resample.c checks the call and builds each dim's taps
   on the host (the adjoint's transposed, so that every output gathers);
   here they are copied over and every output element sums its taps. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cu_loop.cuh"

/* one dim's taps on the device: start[out + 1], then index[nnz], weight[nnz] */
typedef struct {
  const int64_t *start, *index;
  const double *weight;
} cu_taps;

template <class T>
__global__ void __launch_bounds__(CU_THREADS)
    cu_separable_kernel(T *r, const T *x, int64_t total, int64_t oh, int64_t ow, int64_t h, int64_t w, cu_taps th,
                        cu_taps tw) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t j = e % ow, i = (e / ow) % oh, q = e / (ow * oh);
    const T *xq = x + q * h * w;
    T sum = 0;
    for (int64_t a = th.start[i]; a < th.start[i + 1]; a++) {
      const T *row = xq + th.index[a] * w;
      T part = 0;
      for (int64_t b = tw.start[j]; b < tw.start[j + 1]; b++) part += (T)tw.weight[b] * row[tw.index[b]];
      sum += (T)th.weight[a] * part;
    }
    r[e] = sum;
  }
}

/* bytes of one dim's tables (start, index, weight: 8 bytes each), -1 when
   they overflow; and their copy into host */
static int64_t cu_taps_bytes(const mt_taps *t) {
  int over = 0;
  const int64_t words = mt_size_add(mt_size_add(t->out, 1, &over), mt_size_mul(t->start[t->out], 2, &over), &over);
  const int64_t bytes = mt_size_mul(words, 8, &over);
  return over ? -1 : bytes;
}
static void cu_taps_pack(char *host, const mt_taps *t) {
  const int64_t nnz = t->start[t->out];
  memcpy(host, t->start, sizeof(int64_t) * (size_t)(t->out + 1));
  memcpy(host + sizeof(int64_t) * (size_t)(t->out + 1), t->index, sizeof(int64_t) * (size_t)nnz);
  memcpy(host + sizeof(int64_t) * (size_t)(t->out + 1 + nnz), t->weight, sizeof(double) * (size_t)nnz);
}
static cu_taps cu_taps_at(const char *dev, const mt_taps *t) {
  const int64_t nnz = t->start[t->out];
  cu_taps c;
  c.start = (const int64_t *)dev;
  c.index = c.start + t->out + 1;
  c.weight = (const double *)(c.index + nnz);
  return c;
}

CU_EXTERN int cu_separable(mt_tensor *r, const mt_tensor *x, const mt_taps *th, const mt_taps *tw) {
  const char *op = "resample";
  if (x->dtype != MT_FLOAT32 && x->dtype != MT_FLOAT64)
    return mt_fail("%s: expected float32 or float64, got %s", op, mt_dtypes[x->dtype].name);
  if (!mt_is_contiguous(x) || !mt_is_contiguous(r) || r->dtype != x->dtype)
    return mt_fail("%s: the device map takes contiguous tensors of one dtype", op);
  const int index = mt_device_index_of(x);
  if (cu_set_device(op, index)) return -1;
  const int64_t total = mt_numel(r);
  if (total == 0) return 0;
  const int64_t bh = cu_taps_bytes(th), bw = cu_taps_bytes(tw);
  int over = bh < 0 || bw < 0;
  const int64_t bytes = mt_size_add(bh, bw, &over);
  if (over) return mt_fail("%s: the taps' tables are too large", op);
  char *host = (char *)malloc((size_t)bytes);
  if (!host) return mt_fail("%s: out of memory", op);
  cu_taps_pack(host, th);
  cu_taps_pack(host + bh, tw);
  mt_tensor tables = {};
  cudaStream_t s = cu_stream(index);
  int rc = mt_tensor_init_on(op, &tables, MT_UINT8, 1, &bytes, MT_CUDA, index);
  if (!rc) rc = cu_fail(op, cudaMemcpyAsync(mt_data(&tables), host, (size_t)bytes, cudaMemcpyHostToDevice, s));
  if (!rc) rc = cu_fail(op, cudaStreamSynchronize(s));      /* the host copy is freed below */
  free(host);
  if (!rc) {
    const char *dev = (const char *)mt_data(&tables);
    const cu_taps dh = cu_taps_at(dev, th), dw = cu_taps_at(dev + bh, tw);
    int64_t blocks = (total + CU_THREADS - 1) / CU_THREADS;
    if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
    if (x->dtype == MT_FLOAT32)
      cu_separable_kernel<float><<<(unsigned)blocks, CU_THREADS, 0, s>>>(
          (float *)mt_data(r), (const float *)mt_data(x), total, th->out, tw->out, th->in, tw->in, dh, dw);
    else
      cu_separable_kernel<double><<<(unsigned)blocks, CU_THREADS, 0, s>>>(
          (double *)mt_data(r), (const double *)mt_data(x), total, th->out, tw->out, th->in, tw->in, dh, dw);
    rc = CU_LAUNCHED(op);
  }
  mt_tensor_release(&tables);       /* the allocator reuses it only on this stream, after the kernel */
  return rc;
}

/* ---- unfold and fold (mt_conv.c's im2col and col2im) ----
   cols (n, c * kh * kw, oh * ow) holds at row (ci * kh + a) * kw + b, column
   i * ow + j the input element (ci, i * sh - ph + a * dh, j * sw - pw + b *
   dw), or 0 in the padding. fold is its adjoint: each input element gathers
   the columns that read it. */
template <class T>
__global__ void __launch_bounds__(CU_THREADS) cu_im2col_kernel(T *cols, const T *x, int64_t total, mt_conv_geom g) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x, len = g.oh * g.ow;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t col = e % len, row = (e / len) % (g.c * g.kh * g.kw), n = e / (len * g.c * g.kh * g.kw);
    const int64_t i = col / g.ow, j = col % g.ow, b = row % g.kw, a = (row / g.kw) % g.kh, ci = row / (g.kw * g.kh);
    const int64_t r = i * g.sh - g.ph + a * g.dh, c = j * g.sw - g.pw + b * g.dw;
    cols[e] = r >= 0 && r < g.h && c >= 0 && c < g.w ? x[((n * g.c + ci) * g.h + r) * g.w + c] : (T)0;
  }
}

template <class T>
__global__ void __launch_bounds__(CU_THREADS) cu_col2im_kernel(T *x, const T *cols, int64_t total, mt_conv_geom g) {
  const int64_t step = (int64_t)gridDim.x * blockDim.x, len = g.oh * g.ow, kc = g.c * g.kh * g.kw;
  for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t c = e % g.w, r = (e / g.w) % g.h, ci = (e / (g.w * g.h)) % g.c, n = e / (g.w * g.h * g.c);
    T sum = 0;
    for (int64_t a = 0; a < g.kh; a++) {
      const int64_t ty = r + g.ph - a * g.dh;                   /* = i * sh */
      if (ty < 0 || ty % g.sh) continue;
      const int64_t i = ty / g.sh;
      if (i >= g.oh) continue;
      for (int64_t b = 0; b < g.kw; b++) {
        const int64_t tx = c + g.pw - b * g.dw;
        if (tx < 0 || tx % g.sw) continue;
        const int64_t j = tx / g.sw;
        if (j >= g.ow) continue;
        sum += cols[(n * kc + (ci * g.kh + a) * g.kw + b) * len + i * g.ow + j];
      }
    }
    x[e] = sum;
  }
}

template <class T>
static int cu_fold_launch(const char *op, bool unfold, mt_tensor *out, const mt_tensor *in, const mt_conv_geom *g) {
  const int index = mt_device_index_of(in);
  if (cu_set_device(op, index)) return -1;
  const int64_t total = mt_numel(out);
  if (total == 0) return 0;
  int64_t blocks = (total + CU_THREADS - 1) / CU_THREADS;
  if (blocks > CU_MAX_BLOCKS) blocks = CU_MAX_BLOCKS;
  cudaStream_t s = cu_stream(index);
  if (unfold)
    cu_im2col_kernel<T><<<(unsigned)blocks, CU_THREADS, 0, s>>>((T *)mt_data(out), (const T *)mt_data(in), total, *g);
  else
    cu_col2im_kernel<T><<<(unsigned)blocks, CU_THREADS, 0, s>>>((T *)mt_data(out), (const T *)mt_data(in), total, *g);
  return CU_LAUNCHED(op);
}

CU_EXTERN int cu_im2col(mt_tensor *cols, const mt_tensor *x, const mt_conv_geom *g) {
  return x->dtype == MT_FLOAT32 ? cu_fold_launch<float>("unfold", true, cols, x, g)
                                : cu_fold_launch<double>("unfold", true, cols, x, g);
}

CU_EXTERN int cu_col2im(mt_tensor *x, const mt_tensor *cols, const mt_conv_geom *g) {
  return cols->dtype == MT_FLOAT32 ? cu_fold_launch<float>("fold", false, x, cols, g)
                                   : cu_fold_launch<double>("fold", false, x, cols, g);
}
