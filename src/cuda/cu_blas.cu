/* cu_blas.cu: the registry's products (mm, mv, dot, bmm, matmul, outer)
   and the add* forms on the GPU, with the semantics of mt_linalg.c: the
   same checks and messages, result shapes and dtypes, beta 0 ignoring
   input's values (NaN too). Every op ends in one batched product, gemm:
   float32/float64/float16/bfloat16 on cuBLAS (cublasGemmStridedBatchedEx,
   the half types accumulating in float, float32 in TF32 only when
   cu_set_allow_tf32 asks), integers by a plain kernel (cuBLAS has none).
   Each matrix goes to cuBLAS in the layout it has (row- or column-major
   with a leading dim, the transpose flag picking which), and is copied
   contiguous only otherwise. */
#include <cublas_v2.h>
#include <climits>
#include <cmath>
#include "cu.h"

extern "C" {
#include "../tensor/mt_linalg.h"
}

/* ---- torch.backends.cuda.matmul.allow_tf32 (off, as PyTorch's) ---- */
static int allow_tf32;
CU_EXTERN void cu_set_allow_tf32(int on) { allow_tf32 = on != 0; }
CU_EXTERN int cu_get_allow_tf32(void) { return allow_tf32; }

/* ---- handles: one per device, made on first use ---- */
#define CU_BLAS_MAX_DEVICES 64
static cublasHandle_t handles[CU_BLAS_MAX_DEVICES];

static int blas_fail(const char *op, cublasStatus_t s) {
  return mt_fail("%s: cuBLAS error: %s", op, cublasGetStatusName(s));
}

/* device index's handle, on its current stream (the device is current) */
static int blas_handle(const char *op, int index, cublasHandle_t *h) {
  if (index < 0 || index >= CU_BLAS_MAX_DEVICES)
    return mt_fail("%s: device index %d is out of range for cuBLAS", op, index);
  cublasStatus_t s;
  if (!handles[index] && (s = cublasCreate(&handles[index])) != CUBLAS_STATUS_SUCCESS) {
    handles[index] = NULL;
    return blas_fail(op, s);
  }
  if ((s = cublasSetStream(handles[index], cu_stream(index))) != CUBLAS_STATUS_SUCCESS) return blas_fail(op, s);
  *h = handles[index];
  return 0;
}

/* ---- layouts (mt_linalg.c's) ---- */
/* How cuBLAS can read a rows x cols matrix with strides rs, cs: row-major
   (1), column-major (0) or not at all (-1); *ld gets the leading dim. A
   dim of size 1 has no meaningful stride, so its stride is chosen to fit. */
static int blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, int64_t *ld) {
  int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
  int layout = -1;
  if ((cols <= 1 || cs == 1) && (rows <= 1 || rs >= c1)) {
    *ld = rows <= 1 ? c1 : rs;
    layout = 1;
  } else if ((rows <= 1 || rs == 1) && (cols <= 1 || cs >= r1)) {
    *ld = cols <= 1 ? r1 : cs;
    layout = 0;
  }
  return layout >= 0 && *ld <= INT_MAX ? layout : -1;
}

static int matrix_layout(const mt_tensor *t, int64_t *ld) {
  int n = t->ndim;
  return blas_layout(t->shape[n - 2], t->shape[n - 1], t->stride[n - 2], t->stride[n - 1], ld);
}

static int is_blas_dtype(int dtype) {
  return dtype == MT_FLOAT32 || dtype == MT_FLOAT64 || dtype == MT_FLOAT16 || dtype == MT_BFLOAT16;
}

/* A borrowed 2-D view of t's storage (not retained: never released). */
static mt_tensor mat_view(const mt_tensor *t, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  mt_tensor v = *t;
  v.ndim = 2;
  v.shape[0] = rows; v.shape[1] = cols;
  v.stride[0] = rs; v.stride[1] = cs;
  return v;
}

/* ---- integers: a thread per element of c ---- */
typedef struct {
  const char *a, *b;
  char *c;
  long long m, n, k;
  long long a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;   /* elements */
  int nbd;                                       /* batch dims */
  long long nbatch;
  long long bshape[MT_MAX_DIMS], sa[MT_MAX_DIMS], sb[MT_MAX_DIMS], sc[MT_MAX_DIMS];
  int sum_batches;                               /* the whole batch sums into one c */
  int use_beta;                                  /* beta != 0: c is read */
  unsigned long long alpha, beta;
} int_gemm_args;

/* Sums wrap modulo 2^64, then the store truncates: the same result as
   wrapping in the dtype at every step (mt_linalg.c's naive kernel). */
template <typename T> __global__ void int_gemm(int_gemm_args g) {
  const T *a = (const T *)g.a, *b = (const T *)g.b;
  T *c = (T *)g.c;
  const long long mn = g.m * g.n, total = g.sum_batches ? mn : g.nbatch * mn;
  for (long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x; e < total;
       e += (long long)gridDim.x * blockDim.x) {
    long long q = e / mn, i = (e % mn) / g.n, j = e % g.n;
    long long first = g.sum_batches ? 0 : q, last = g.sum_batches ? g.nbatch : q + 1, co = 0;
    unsigned long long acc = 0;
    for (long long bi = first; bi < last; bi++) {
      long long ao = 0, bo = 0, rest = bi;
      co = 0;
      for (int d = g.nbd - 1; d >= 0; d--) {
        long long x = rest % g.bshape[d];
        rest /= g.bshape[d];
        ao += x * g.sa[d];
        bo += x * g.sb[d];
        co += x * g.sc[d];
      }
      const T *pa = a + ao + i * g.a_rs, *pb = b + bo + j * g.b_cs;
      for (long long p = 0; p < g.k; p++)
        acc += (unsigned long long)(long long)pa[p * g.a_cs] * (unsigned long long)(long long)pb[p * g.b_rs];
    }
    T *pc = c + (g.sum_batches ? 0 : co) + i * g.c_rs + j * g.c_cs;
    unsigned long long v = g.alpha * acc;
    if (g.use_beta) v += g.beta * (unsigned long long)(long long)*pc;
    *pc = (T)(long long)v;
  }
}

/* ---- the batched product ---- */
/* c = beta * c, for products with nothing to sum (k or the batch is 0). */
static int scale(mt_tensor *c, double beta) {
  if (beta == 1) return 0;
  if (beta == 0) return mt_fill(c, 0);
  mt_operand self = {c, 0, 0}, factor = {NULL, beta, beta == floor(beta)};
  return cu_binary(c, &self, &factor, MT_OP_mul, 1, 1, MT_FLOAT32);
}

/* r: t with matrices cuBLAS can read -- t itself (aliased) when it already
   is (or for an integer dtype, whose kernel reads any strides), else a
   contiguous copy on t's device. Batch dims of stride 0 (broadcast) stay
   broadcast, so an expanded operand is not materialised. */
static int prep_operand(const char *op, mt_tensor *r, const mt_tensor *t, int index) {
  int64_t ld;
  if (!is_blas_dtype(t->dtype) || matrix_layout(t, &ld) >= 0) {
    mt_tensor_alias(r, t);
    return 0;
  }
  mt_tensor compact = *t, copy = {};   /* compact is borrowed */
  for (int i = 0; i < t->ndim - 2; i++)
    if (t->stride[i] == 0) compact.shape[i] = 1;
  int rc = mt_tensor_init_on(op, &copy, t->dtype, t->ndim, compact.shape, MT_CUDA, index);
  if (rc == 0) rc = mt_copy(&copy, &compact);
  if (rc == 0) rc = mt_expand(r, &copy, t->ndim, t->shape);
  mt_tensor_release(&copy);
  return rc;
}

static cudaDataType_t blas_type(int dtype) {
  switch (dtype) {
  case MT_FLOAT64: return CUDA_R_64F;
  case MT_FLOAT16: return CUDA_R_16F;
  case MT_BFLOAT16: return CUDA_R_16BF;
  default: return CUDA_R_32F;
  }
}

/* The products of pa and pb into c on cuBLAS: the batch dims are merged
   from the inside while all three step across them as one run, the
   merged run goes to one strided-batched call, the dims outside it are
   looped here. With sum_batches every product is its own call, all but the
   first adding into c (beta 1). */
static int blas_gemm(const char *op, mt_tensor *c, const mt_tensor *pa, const mt_tensor *pb, double alpha,
                     double beta, int sum_batches, int index) {
  const int nd = pa->ndim, nbd = nd - 2;
  const int64_t m = pa->shape[nd - 2], k = pa->shape[nd - 1], n = pb->shape[nd - 1];
  int64_t lda = 0, ldb = 0, ldc = 0;
  const int la = matrix_layout(pa, &lda), lb = matrix_layout(pb, &ldb), lc = matrix_layout(c, &ldc);
  cublasHandle_t h = NULL;
  if (blas_handle(op, index, &h)) return -1;

  /* batch dims of size > 1: sizes and strides in elements */
  int nb = 0;
  long long bs[MT_MAX_DIMS], sa[MT_MAX_DIMS], sb[MT_MAX_DIMS], sc[MT_MAX_DIMS];
  for (int i = 0; i < nbd; i++) {
    if (pa->shape[i] == 1) continue;
    bs[nb] = pa->shape[i];
    sa[nb] = pa->stride[i];
    sb[nb] = pb->stride[i];
    sc[nb] = sum_batches ? 0 : c->stride[i];
    nb++;
  }
  /* the inner run: [outer, nb) */
  long long count = 1, ia = 0, ib = 0, ic = 0;
  int outer = nb;
  if (nb > 0 && !sum_batches) {
    outer = nb - 1;
    count = bs[outer];
    ia = sa[outer]; ib = sb[outer]; ic = sc[outer];
    while (outer > 0 && sa[outer - 1] == ia * count && sb[outer - 1] == ib * count && sc[outer - 1] == ic * count) {
      outer--;
      count *= bs[outer];
    }
  }
  if (count > INT_MAX) return mt_fail("%s: a batch of %lld products is too large for cuBLAS", op, count);
  long long nouter = 1;
  for (int i = 0; i < outer; i++) nouter *= bs[i];

  /* column-major c: C = op(A) op(B); row-major c: C^T = op(B^T) op(A^T) */
  const cudaDataType_t dt = blas_type(c->dtype);
  const size_t es = (size_t)mt_dtype_size((mt_dtype)c->dtype);
  cublasComputeType_t ct = c->dtype == MT_FLOAT64 ? CUBLAS_COMPUTE_64F
                           : c->dtype == MT_FLOAT32 && allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                  : CUBLAS_COMPUTE_32F;
  const char *A = mt_data(pa), *B = mt_data(pb);
  char *C = mt_data(c);
  for (long long q = 0; q < nouter; q++) {
    long long ao = 0, bo = 0, co = 0, rest = q;
    for (int i = outer - 1; i >= 0; i--) {
      long long x = rest % bs[i];
      rest /= bs[i];
      ao += x * sa[i];
      bo += x * sb[i];
      co += x * sc[i];
    }
    const double bq = sum_batches && q > 0 ? 1 : beta;
    const float alpha_f = (float)alpha, beta_f = (float)bq;
    const void *pal = ct == CUBLAS_COMPUTE_64F ? (const void *)&alpha : (const void *)&alpha_f;
    const void *pbe = ct == CUBLAS_COMPUTE_64F ? (const void *)&bq : (const void *)&beta_f;
    const void *ap = A + (size_t)ao * es, *bp = B + (size_t)bo * es;
    void *cp = C + (size_t)co * es;
    cublasStatus_t s;
    if (lc == 0)
      s = cublasGemmStridedBatchedEx(h, la == 0 ? CUBLAS_OP_N : CUBLAS_OP_T, lb == 0 ? CUBLAS_OP_N : CUBLAS_OP_T,
                                     (int)m, (int)n, (int)k, pal, ap, dt, (int)lda, ia, bp, dt, (int)ldb, ib, pbe,
                                     cp, dt, (int)ldc, ic, (int)count, ct, CUBLAS_GEMM_DEFAULT);
    else
      s = cublasGemmStridedBatchedEx(h, lb == 1 ? CUBLAS_OP_N : CUBLAS_OP_T, la == 1 ? CUBLAS_OP_N : CUBLAS_OP_T,
                                     (int)n, (int)m, (int)k, pal, bp, dt, (int)ldb, ib, ap, dt, (int)lda, ia, pbe,
                                     cp, dt, (int)ldc, ic, (int)count, ct, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) return blas_fail(op, s);
  }
  return 0;
}

static int int_gemm_run(const char *op, mt_tensor *c, const mt_tensor *pa, const mt_tensor *pb, double alpha,
                        double beta, int sum_batches, int index) {
  const int nd = pa->ndim, nbd = nd - 2;
  int_gemm_args g;
  memset(&g, 0, sizeof g);
  g.a = mt_data(pa);
  g.b = mt_data(pb);
  g.c = mt_data(c);
  g.m = pa->shape[nd - 2];
  g.k = pa->shape[nd - 1];
  g.n = pb->shape[nd - 1];
  g.a_rs = pa->stride[nd - 2]; g.a_cs = pa->stride[nd - 1];
  g.b_rs = pb->stride[nd - 2]; g.b_cs = pb->stride[nd - 1];
  g.c_rs = c->stride[c->ndim - 2]; g.c_cs = c->stride[c->ndim - 1];
  g.nbd = nbd;
  g.nbatch = 1;
  for (int i = 0; i < nbd; i++) {
    g.bshape[i] = pa->shape[i];
    g.sa[i] = pa->stride[i];
    g.sb[i] = pb->stride[i];
    g.sc[i] = sum_batches ? 0 : c->stride[i];
    g.nbatch *= pa->shape[i];
  }
  g.sum_batches = sum_batches;
  g.use_beta = beta != 0;
  g.alpha = (unsigned long long)(long long)alpha;
  g.beta = (unsigned long long)(long long)beta;
  long long total = sum_batches ? g.m * g.n : g.nbatch * g.m * g.n;
  long long blocks = (total + 255) / 256;
  unsigned grid = (unsigned)(blocks < 65536 ? blocks : 65536);
  cudaStream_t st = cu_stream(index);
  switch (c->dtype) {
  case MT_INT8: int_gemm<int8_t><<<grid, 256, 0, st>>>(g); break;
  case MT_UINT8: int_gemm<uint8_t><<<grid, 256, 0, st>>>(g); break;
  case MT_INT16: int_gemm<int16_t><<<grid, 256, 0, st>>>(g); break;
  case MT_INT32: int_gemm<int32_t><<<grid, 256, 0, st>>>(g); break;
  case MT_INT64: int_gemm<int64_t><<<grid, 256, 0, st>>>(g); break;
  default: return mt_fail("%s: not implemented for %s tensors", op, mt_dtypes[c->dtype].name);
  }
  return CU_LAUNCHED(op);
}

/* The batched product every op ends in (mt_linalg.c's bgemm): c = beta * c
   + alpha * a @ b, with a (..., M, K), b (..., K, N) of one batch shape and
   c (..., M, N) of the same, or, with sum_batches, c (M, N) accumulating the
   whole batch. c is written in place; it is computed in a scratch buffer
   only when cuBLAS cannot write it (odd strides) or it shares memory with
   an input. */
static int gemm(const char *op, mt_tensor *c, const mt_tensor *a, const mt_tensor *b, double alpha, double beta,
                int sum_batches) {
  const int nd = a->ndim, nbd = nd - 2;
  const int64_t m = a->shape[nd - 2], k = a->shape[nd - 1], n = b->shape[nd - 1];
  const int index = mt_device_index_of(c);
  int64_t nbatch = 1, ld;
  for (int i = 0; i < nbd; i++) nbatch *= a->shape[i];
  if (mt_numel(c) == 0) return 0;
  if (cu_set_device(op, index)) return -1;
  if (k == 0 || nbatch == 0) return scale(c, beta);
  const int blas = is_blas_dtype(c->dtype);
  if (blas && (m > INT_MAX || n > INT_MAX || k > INT_MAX))
    return mt_fail("%s: matrices too large for BLAS (%lldx%lld by %lldx%lld)", op, (long long)m, (long long)k,
                   (long long)k, (long long)n);
  if ((blas && matrix_layout(c, &ld) < 0) || c->storage == a->storage || c->storage == b->storage) {
    mt_tensor scratch = {};
    int rc = mt_tensor_init_on(op, &scratch, c->dtype, c->ndim, c->shape, MT_CUDA, index);
    if (rc == 0 && beta != 0) rc = mt_copy(&scratch, c);
    if (rc == 0) rc = gemm(op, &scratch, a, b, alpha, beta, sum_batches);
    if (rc == 0) rc = mt_copy(c, &scratch);
    mt_tensor_release(&scratch);
    return rc;
  }
  mt_tensor pa = {}, pb = {};
  if (prep_operand(op, &pa, a, index) || prep_operand(op, &pb, b, index)) {
    mt_tensor_release(&pa);
    return -1;
  }
  int rc = blas ? blas_gemm(op, c, &pa, &pb, alpha, beta, sum_batches, index)
                : int_gemm_run(op, c, &pa, &pb, alpha, beta, sum_batches, index);
  if (rc == 0) c->storage->version++;
  mt_tensor_release(&pa);
  mt_tensor_release(&pb);
  return rc;
}

/* ---- checks (mt_linalg.c's) ---- */
static int check_dtypes(const char *op, const mt_tensor *a, const mt_tensor *b) {
  if (a->dtype != b->dtype)
    return mt_fail("%s: expected both %s, got %s and %s", op, mt_dtypes[a->dtype].name,
                   mt_dtypes[a->dtype].name, mt_dtypes[b->dtype].name);
  if (a->dtype == MT_BOOL) return mt_fail("%s: not implemented for bool tensors", op);
  return 0;
}

static int check_dims(const char *op, const mt_tensor *a, const mt_tensor *b, int na, int nb, const char *what) {
  if (a->ndim != na || b->ndim != nb)
    return mt_fail("%s: expected %s, got %d-D and %d-D", op, what, a->ndim, b->ndim);
  return check_dtypes(op, a, b);
}

static int fail_shapes(const char *op, const mt_tensor *a, const mt_tensor *b) {
  char b1[128], b2[128];
  return mt_fail("%s: cannot multiply %s by %s", op, mt_shape_str(a, b1, sizeof b1), mt_shape_str(b, b2, sizeof b2));
}

/* The (..., M, N) product of a and b viewed in r, which holds the product
   with its vector dims dropped (the same elements, contiguous). */
static mt_tensor product_view(const mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  mt_tensor c = *r;   /* borrowed */
  c.ndim = a->ndim;
  for (int i = 0; i < a->ndim - 1; i++) c.shape[i] = a->shape[i];
  c.shape[a->ndim - 1] = b->shape[b->ndim - 1];
  mt_contiguous_strides(c.ndim, c.shape, c.stride);
  return c;
}

/* r (new, shape out, on a's device) = a @ b. */
static int product(const char *op, mt_tensor *r, const mt_tensor *a, const mt_tensor *b, int out_ndim,
                   const int64_t *out_shape) {
  if (mt_tensor_init_on(op, r, a->dtype, out_ndim, out_shape, MT_CUDA, mt_device_index_of(a))) return -1;
  mt_tensor c = product_view(r, a, b);
  if (gemm(op, &c, a, b, 1, 0, 0)) { mt_tensor_release(r); return -1; }
  return 0;
}

/* matmul (mt_linalg.c's): 1-D operands become a row (a) or a column (b)
   and lose that dim in the result; batch dims broadcast. A stack times one
   matrix folds the stack into the rows when a's layout allows. */
static int matmul(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  if (a->ndim == 0 || b->ndim == 0)
    return mt_fail("matmul: both arguments need at least 1 dim, got %d-D and %d-D", a->ndim, b->ndim);
  if (check_dtypes("matmul", a, b)) return -1;
  const mt_tensor a2 = a->ndim == 1 ? mat_view(a, 1, a->shape[0], 1, a->stride[0]) : *a;
  const mt_tensor b2 = b->ndim == 1 ? mat_view(b, b->shape[0], 1, b->stride[0], 1) : *b;
  const int64_t m = a2.shape[a2.ndim - 2], k = a2.shape[a2.ndim - 1], n = b2.shape[b2.ndim - 1];
  if (k != b2.shape[b2.ndim - 2]) return fail_shapes("matmul", a, b);
  int nbatch;
  int64_t shape[MT_MAX_DIMS];
  if (mt_broadcast_shapes("matmul", a2.ndim - 2, a2.shape, b2.ndim - 2, b2.shape, &nbatch, shape)) {
    char b1[128], b2s[128];
    return mt_fail("matmul: cannot multiply %s by %s: batch dims do not broadcast", mt_shape_str(a, b1, sizeof b1),
                   mt_shape_str(b, b2s, sizeof b2s));
  }
  int out_ndim = nbatch;
  if (a->ndim > 1) shape[out_ndim++] = m;
  if (b->ndim > 1) shape[out_ndim++] = n;
  if (b2.ndim == 2) {   /* also covers dot, mv, mm and vector @ matrix */
    int64_t rows = m;
    for (int i = 0; i < nbatch; i++) rows *= a2.shape[i];
    const int64_t flat[2] = {rows, k};
    mt_tensor folded = {};
    if (a2.ndim == 2 || mt_view(&folded, &a2, 2, flat) == 0) {
      int rc = product("matmul", r, a2.ndim == 2 ? &a2 : &folded, &b2, out_ndim, shape);
      mt_tensor_release(&folded);
      return rc;
    }
  }
  int64_t ashape[MT_MAX_DIMS], bshape[MT_MAX_DIMS];
  memcpy(ashape, shape, sizeof(int64_t) * (size_t)nbatch);
  memcpy(bshape, shape, sizeof(int64_t) * (size_t)nbatch);
  ashape[nbatch] = m; ashape[nbatch + 1] = k;
  bshape[nbatch] = k; bshape[nbatch + 1] = n;
  mt_tensor ae = {}, be = {};
  int rc = mt_expand(&ae, &a2, nbatch + 2, ashape);
  if (rc == 0) rc = mt_expand(&be, &b2, nbatch + 2, bshape);
  if (rc == 0) rc = product("matmul", r, &ae, &be, out_ndim, shape);
  mt_tensor_release(&ae);
  mt_tensor_release(&be);
  return rc;
}

CU_EXTERN int cu_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op) {
  switch (op) {
  case MT_OP_mm: {
    if (check_dims("mm", a, b, 2, 2, "2-D tensors")) return -1;
    if (a->shape[1] != b->shape[0]) return fail_shapes("mm", a, b);
    const int64_t shape[2] = {a->shape[0], b->shape[1]};
    return product("mm", r, a, b, 2, shape);
  }
  case MT_OP_mv: {
    if (check_dims("mv", a, b, 2, 1, "a 2-D matrix and a 1-D vector")) return -1;
    if (a->shape[1] != b->shape[0]) return fail_shapes("mv", a, b);
    const mt_tensor xm = mat_view(b, b->shape[0], 1, b->stride[0], 1);
    return product("mv", r, a, &xm, 1, a->shape);
  }
  case MT_OP_dot: {
    if (check_dims("dot", a, b, 1, 1, "1-D tensors")) return -1;
    if (a->shape[0] != b->shape[0])
      return mt_fail("dot: tensors have different sizes %lld and %lld", (long long)a->shape[0],
                     (long long)b->shape[0]);
    const mt_tensor am = mat_view(a, 1, a->shape[0], 1, a->stride[0]);
    const mt_tensor bm = mat_view(b, b->shape[0], 1, b->stride[0], 1);
    const int64_t no_dims[1] = {0};
    return product("dot", r, &am, &bm, 0, no_dims);
  }
  case MT_OP_outer: {
    if (check_dims("outer", a, b, 1, 1, "1-D tensors")) return -1;
    const mt_tensor am = mat_view(a, a->shape[0], 1, a->stride[0], 1);
    const mt_tensor bm = mat_view(b, 1, b->shape[0], 1, b->stride[0]);
    const int64_t shape[2] = {a->shape[0], b->shape[0]};
    return product("outer", r, &am, &bm, 2, shape);
  }
  case MT_OP_bmm: {
    if (check_dims("bmm", a, b, 3, 3, "3-D tensors")) return -1;
    if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return fail_shapes("bmm", a, b);
    const int64_t shape[3] = {a->shape[0], a->shape[1], b->shape[2]};
    return product("bmm", r, a, b, 3, shape);
  }
  case MT_OP_matmul: return matmul(r, a, b);
  default:
    return mt_fail("cu_product: %s is not a product", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
  }
}

/* ---- beta * input + alpha * product ---- */
static int is_integral(double v) { return v == floor(v) && fabs(v) < 9.2e18; }

/* r = beta * input + alpha * a @ b (mt_linalg.c's add_product), where a and
   b are the operands as matrices (or stacks) and (out_ndim, out_shape) the
   product's shape as the op returns it; a 1-D result is the column of an
   (M, 1) product. */
static int add_product(const char *op, mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
                       int out_ndim, const int64_t *out_shape, double beta, double alpha, int inplace,
                       int sum_batches) {
  char b1[128], b2[128];
  mt_tensor out = {};   /* the product's shape, for checks and messages */
  out.ndim = out_ndim;
  memcpy(out.shape, out_shape, sizeof(int64_t) * (size_t)out_ndim);
  if (input->dtype != a->dtype)
    return mt_fail("%s: input is %s but the product is %s", op, mt_dtypes[input->dtype].name,
                   mt_dtypes[a->dtype].name);
  if (mt_dtype_is_int((mt_dtype)a->dtype) && (!is_integral(alpha) || !is_integral(beta)))
    return mt_fail("%s: beta and alpha must be integers for %s tensors, got %g and %g", op,
                   mt_dtypes[a->dtype].name, beta, alpha);
  mt_tensor expanded = {};
  if (mt_expand(&expanded, input, out_ndim, out_shape))
    return mt_fail("%s: input of size %s cannot broadcast to the product's size %s", op,
                   mt_shape_str(input, b1, sizeof b1), mt_shape_str(&out, b2, sizeof b2));
  mt_tensor_release(&expanded);
  if (inplace) {
    if (!mt_same_shape(input, &out))
      return mt_fail("%s_: self has size %s but the product has size %s", op, mt_shape_str(input, b1, sizeof b1),
                     mt_shape_str(&out, b2, sizeof b2));
    if (mt_check_writable(op, input)) return -1;
  } else {
    if (mt_tensor_init_on(op, r, a->dtype, out_ndim, out_shape, MT_CUDA, mt_device_index_of(a))) return -1;
    if (beta != 0 && mt_copy(r, input)) { mt_tensor_release(r); return -1; }
  }
  mt_tensor c = out_ndim == 1 ? mat_view(r, r->shape[0], 1, r->stride[0], 1) : *r;
  if (gemm(op, &c, a, b, alpha, beta, sum_batches)) {
    if (!inplace) mt_tensor_release(r);
    return -1;
  }
  return 0;
}

CU_EXTERN int cu_add_product(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b, mt_op op,
                             double beta, double alpha, int inplace) {
  switch (op) {
  case MT_OP_addmm: {
    if (check_dims("addmm", a, b, 2, 2, "2-D tensors")) return -1;
    if (a->shape[1] != b->shape[0]) return fail_shapes("addmm", a, b);
    const int64_t shape[2] = {a->shape[0], b->shape[1]};
    return add_product("addmm", r, input, a, b, 2, shape, beta, alpha, inplace, 0);
  }
  case MT_OP_addmv: {
    if (check_dims("addmv", a, b, 2, 1, "a 2-D matrix and a 1-D vector")) return -1;
    if (a->shape[1] != b->shape[0]) return fail_shapes("addmv", a, b);
    const mt_tensor bm = mat_view(b, b->shape[0], 1, b->stride[0], 1);
    return add_product("addmv", r, input, a, &bm, 1, a->shape, beta, alpha, inplace, 0);
  }
  case MT_OP_addr: {
    if (check_dims("addr", a, b, 1, 1, "1-D vectors")) return -1;
    const mt_tensor am = mat_view(a, a->shape[0], 1, a->stride[0], 1);
    const mt_tensor bm = mat_view(b, 1, b->shape[0], 1, b->stride[0]);
    const int64_t shape[2] = {a->shape[0], b->shape[0]};
    return add_product("addr", r, input, &am, &bm, 2, shape, beta, alpha, inplace, 0);
  }
  case MT_OP_baddbmm: {
    if (check_dims("baddbmm", a, b, 3, 3, "3-D tensors")) return -1;
    if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return fail_shapes("baddbmm", a, b);
    const int64_t shape[3] = {a->shape[0], a->shape[1], b->shape[2]};
    return add_product("baddbmm", r, input, a, b, 3, shape, beta, alpha, inplace, 0);
  }
  case MT_OP_addbmm: {
    if (check_dims("addbmm", a, b, 3, 3, "3-D tensors")) return -1;
    if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return fail_shapes("addbmm", a, b);
    const int64_t shape[2] = {a->shape[1], b->shape[2]};
    return add_product("addbmm", r, input, a, b, 2, shape, beta, alpha, inplace, 1);
  }
  default:
    return mt_fail("cu_add_product: %s is not an add product", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
  }
}
