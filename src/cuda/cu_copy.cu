/* cu_copy.cu: copies into, out of and on the GPU, with dtype conversion
   (the C casts of the CPU's copy), and fill (cu.h). */
#include "cu_loop.cuh"

#define COPY_OP "copy_"

/* ---- on one device: the converting kernel ---- */
/* out = in converted from dtype ES to ED over g (the pair's kernel) */
template <int ES> static int convert_from(int ed, const cu_geom *g, char *out, const char *in, int index) {
  typedef typename cu_dt<ES>::ct ct;
  cu_scalars<ct> none = {};
  switch (ed) {
#define CU_CONVERT_CASE(E, T, N, TN, K) \
  case MT_##E: return cu_launch<cu_identity, ES, MT_##E, 1>(COPY_OP, g, out, in, NULL, none, ct(), index);
    MT_DTYPES(CU_CONVERT_CASE)
#undef CU_CONVERT_CASE
  }
  return mt_fail(COPY_OP ": unknown dtype %d", ed);
}

/* A same-dtype copy moves bits: through the integer type of the element's
   size, so that NaN payloads and -0 pass unchanged and 10 dtypes need 4
   kernels. */
static int bits_dtype(int dtype) {
  switch (mt_dtypes[dtype].size) {
  case 1: return MT_UINT8;
  case 2: return MT_INT16;
  case 4: return MT_INT32;
  default: return MT_INT64;
  }
}

/* dst = src, both on device index (the current one) */
static int convert(mt_tensor *dst, const mt_tensor *src, int index) {
  const mt_tensor *ops[2] = {dst, src};
  cu_geom g;
  cu_geom_init(&g, 2, ops);
  int es = src->dtype, ed = dst->dtype;
  if (es == ed) es = ed = bits_dtype(ed);
  char *out = mt_data(dst);
  const char *in = mt_data(src);
  switch (es) {
#define CU_FROM_CASE(E, T, N, TN, K) \
  case MT_##E: return convert_from<MT_##E>(ed, &g, out, in, index);
    MT_DTYPES(CU_FROM_CASE)
#undef CU_FROM_CASE
  }
  return mt_fail(COPY_OP ": unknown dtype %d", es);
}

/* The byte range [lo, hi) of its storage a non-empty view reaches. */
static void byte_range(const mt_tensor *t, int64_t *lo, int64_t *hi) {
  int64_t first = t->offset, last = t->offset;
  for (int d = 0; d < t->ndim; d++) {
    int64_t span = (t->shape[d] - 1) * t->stride[d];
    if (span < 0) first += span;
    else last += span;
  }
  const int64_t es = mt_dtypes[t->dtype].size;
  *lo = first * es;
  *hi = (last + 1) * es;
}

static int overlaps(const mt_tensor *a, const mt_tensor *b) {
  if (a->storage != b->storage) return 0;
  int64_t alo, ahi, blo, bhi;
  byte_range(a, &alo, &ahi);
  byte_range(b, &blo, &bhi);
  return alo < bhi && blo < ahi;
}

static int same_view(const mt_tensor *a, const mt_tensor *b) {
  return a->storage == b->storage && a->dtype == b->dtype && a->offset == b->offset && a->ndim == b->ndim &&
         !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) &&
         !memcmp(a->stride, b->stride, sizeof(int64_t) * (size_t)a->ndim);
}

/* dst = src on one device. Threads run in no order, so a source that
   overlaps the destination (x[{{2, n}}]:copy(x[{{1, n - 1}}])) is copied
   aside first. */
static int copy_on_device(mt_tensor *dst, const mt_tensor *src, int index) {
  if (same_view(dst, src)) return 0;
  cudaStream_t s = cu_stream(index);
  if (overlaps(dst, src)) {
    mt_tensor aside = {};
    int rc = mt_clone(&aside, src) || convert(dst, &aside, index);
    mt_tensor_release(&aside);
    return rc ? -1 : 0;
  }
  if (dst->dtype == src->dtype && mt_is_contiguous(dst) && mt_is_contiguous(src)) {
    CU_TRY(COPY_OP, cudaMemcpyAsync(mt_data(dst), mt_data(src), (size_t)mt_numel(dst) * mt_dtypes[dst->dtype].size,
                                    cudaMemcpyDeviceToDevice, s));
    return 0;
  }
  return convert(dst, src, index);
}

/* *r = src as a contiguous tensor of dtype on its device (index): src
   itself when it is one, else a converted copy. */
static int contiguous_on_device(mt_tensor *r, const mt_tensor *src, int dtype, int index) {
  if (src->dtype == dtype && mt_is_contiguous(src)) {
    mt_tensor_alias(r, src);
    return 0;
  }
  if (mt_tensor_init_on(COPY_OP, r, dtype, src->ndim, src->shape, MT_CUDA, index)) return -1;
  return convert(r, src, index);
}

/* ---- between the CPU and a device ---- */
/* The host side is made contiguous in dst's dtype on the CPU, then one
   transfer: into dst when it is contiguous, else into a temporary that a
   device copy spreads into dst's strides. A host temporary is waited for
   before it is freed. */
static int host_to_device(mt_tensor *dst, const mt_tensor *src) {
  const int index = mt_device_index_of(dst);
  if (cu_set_device(COPY_OP, index)) return -1;
  cudaStream_t s = cu_stream(index);
  mt_tensor host = {}, staged = {};
  if (mt_contiguous_as(&host, src, dst->dtype)) return -1;
  const size_t nbytes = (size_t)mt_numel(dst) * mt_dtypes[dst->dtype].size;
  mt_tensor *target = dst;
  int rc = 0;
  if (!mt_is_contiguous(dst)) {
    rc = mt_tensor_init_on(COPY_OP, &staged, dst->dtype, dst->ndim, dst->shape, MT_CUDA, index);
    target = &staged;
  }
  if (!rc) rc = cu_fail(COPY_OP, cudaMemcpyAsync(mt_data(target), mt_data(&host), nbytes, cudaMemcpyHostToDevice, s));
  if (!rc && target == &staged) rc = convert(dst, &staged, index);
  if (!rc && host.storage != src->storage) rc = cu_fail(COPY_OP, cudaStreamSynchronize(s));
  mt_tensor_release(&staged);
  mt_tensor_release(&host);
  return rc;
}

/* The device side is made contiguous in dst's dtype on the device, then one
   transfer, waited for: into dst when it is contiguous, else into a host
   temporary that the CPU's copy spreads into dst's strides. */
static int device_to_host(mt_tensor *dst, const mt_tensor *src) {
  const int index = mt_device_index_of(src);
  if (cu_set_device(COPY_OP, index)) return -1;
  cudaStream_t s = cu_stream(index);
  mt_tensor dev = {}, host = {};
  if (contiguous_on_device(&dev, src, dst->dtype, index)) return -1;
  const size_t nbytes = (size_t)mt_numel(dst) * mt_dtypes[dst->dtype].size;
  mt_tensor *target = dst;
  int rc = 0;
  if (!mt_is_contiguous(dst)) {
    rc = mt_tensor_init(&host, dst->dtype, dst->ndim, dst->shape);
    target = &host;
  }
  if (!rc) rc = cu_fail(COPY_OP, cudaMemcpyAsync(mt_data(target), mt_data(&dev), nbytes, cudaMemcpyDeviceToHost, s));
  if (!rc) rc = cu_fail(COPY_OP, cudaStreamSynchronize(s));
  if (!rc && target == &host) rc = mt_copy(dst, &host);
  mt_tensor_release(&host);
  mt_tensor_release(&dev);
  return rc;
}

/* Between two GPUs: contiguous in dst's dtype on the source device, a peer
   transfer on the destination's stream (after the source's stream is done),
   spread into dst's strides there when it is not contiguous. The transfer
   is waited for, as the source side's buffer returns to its device's cache. */
static int device_to_device(mt_tensor *dst, const mt_tensor *src) {
  const int from = mt_device_index_of(src), to = mt_device_index_of(dst);
  mt_tensor dev = {}, staged = {};
  if (cu_set_device(COPY_OP, from) || contiguous_on_device(&dev, src, dst->dtype, from)) return -1;
  int rc = cu_fail(COPY_OP, cudaStreamSynchronize(cu_stream(from)));
  if (!rc) rc = cu_set_device(COPY_OP, to);
  mt_tensor *target = dst;
  if (!rc && !mt_is_contiguous(dst)) {
    rc = mt_tensor_init_on(COPY_OP, &staged, dst->dtype, dst->ndim, dst->shape, MT_CUDA, to);
    target = &staged;
  }
  const size_t nbytes = (size_t)mt_numel(dst) * mt_dtypes[dst->dtype].size;
  cudaStream_t s = cu_stream(to);
  if (!rc) rc = cu_fail(COPY_OP, cudaMemcpyPeerAsync(mt_data(target), to, mt_data(&dev), from, nbytes, s));
  if (!rc && target == &staged) rc = convert(dst, &staged, to);
  if (!rc) rc = cu_fail(COPY_OP, cudaStreamSynchronize(s));
  mt_tensor_release(&staged);
  mt_tensor_release(&dev);
  return rc;
}

CU_EXTERN int cu_copy(mt_tensor *dst, const mt_tensor *src) {
  if (mt_numel(dst) == 0) return 0;
  const int on_dst = mt_device_of(dst) == MT_CUDA, on_src = mt_device_of(src) == MT_CUDA;
  if (on_dst && on_src) {
    const int index = mt_device_index_of(dst);
    if (mt_device_index_of(src) != index) return device_to_device(dst, src);
    if (cu_set_device(COPY_OP, index)) return -1;
    return copy_on_device(dst, src, index);
  }
  return on_dst ? host_to_device(dst, src) : device_to_host(dst, src);
}

/* ---- fill ---- */
/* The value is converted on the CPU (mt_set_f64, as the CPU's fill), then its
   bits are stored: cudaMemset when every byte is the same (zeros), else the
   elementwise kernel with the value as a number. */
CU_EXTERN int cu_fill(mt_tensor *t, double v) {
  const int64_t n = mt_numel(t);
  if (n == 0) return 0;
  const int index = mt_device_index_of(t);
  if (cu_set_device("fill_", index)) return -1;
  const int es = mt_dtypes[t->dtype].size;
  unsigned char bits[8] = {0};
  mt_set_f64(t->dtype, bits, v);
  int same_bytes = 1;
  for (int i = 1; i < es; i++) same_bytes &= bits[i] == bits[0];
  if (same_bytes && mt_is_contiguous(t)) {
    CU_TRY("fill_", cudaMemsetAsync(mt_data(t), bits[0], (size_t)n * es, cu_stream(index)));
    return 0;
  }
  const mt_tensor *ops[1] = {t};
  cu_geom g;
  cu_geom_init(&g, 1, ops);
  char *out = mt_data(t);
  switch (es) {
#define CU_FILL_CASE(SIZE, E)                                                                   \
  case SIZE: {                                                                                  \
    cu_scalars<cu_dt<E>::ct> value = {};                                                        \
    memcpy(&value.value[0], bits, SIZE);                                                        \
    value.mask = 1;                                                                             \
    return cu_launch<cu_identity, E, E, 1>("fill_", &g, out, NULL, NULL, value, 0, index);      \
  }
    CU_FILL_CASE(1, MT_UINT8)
    CU_FILL_CASE(2, MT_INT16)
    CU_FILL_CASE(4, MT_INT32)
    CU_FILL_CASE(8, MT_INT64)
#undef CU_FILL_CASE
  }
  return mt_fail("fill_: unknown dtype %d", t->dtype);
}
