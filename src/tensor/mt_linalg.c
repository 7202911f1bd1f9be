/* mt_linalg.c: matrix products. Every op reduces to one batched product,
   bgemm, which hands each matrix to OpenBLAS in the layout it already has
   (row- or column-major with any leading dim) and copies only otherwise. */
#include <limits.h>
#include <math.h>
#include <cblas.h>
#include "mt_linalg.h"
#include "mt_kernel.h"
#include "mt_ops.h"
#include "mt_parallel.h"
#include "mt_sgemm.h"

/* OpenBLAS always runs on one thread (mt_parallel.c); the pool spreads the
   work instead. A product of at least 2 * MT_LINALG_BLOCK_GRAIN multiply-adds
   is cut into blocks of columns (or rows, when it has more rows), one BLAS
   call per block, at most one block per core (block_cap): below that a
   block loses more to the call and to packing its shared operand again than
   the second thread gains. Blocks are whole multiples of
   MT_LINALG_BLOCK_ALIGN, a vector register's worth. */
#define MT_LINALG_BLOCK_GRAIN 524288
#define MT_LINALG_BLOCK_ALIGN 16
/* Smaller products of a batch go one per chunk, chunks of at least this
   many multiply-adds (batched small products, the integer loop). */
#define MT_LINALG_GRAIN 1000000

/* One product of a batch: c (m x n) = beta * c + alpha * a (m x k) @ b (k x n),
   strides in elements. */
typedef struct {
  int64_t m, n, k;
  int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
  double alpha;
} gemm_geom;

typedef void (*gemm_kernel)(const gemm_geom *g, char *c, const char *a, const char *b, double beta);

/* How BLAS can read a rows x cols matrix with strides rs, cs: row-major
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

/* ---- kernels: BLAS for float32/float64 ---- */
/* Vectors (m or n of 1) go to gemv or dot; a vector's increment is its
   matrix's stride along it, which blas_layout has checked is >= 1. */
#define MT_BLAS_DTYPES(X) X(FLOAT32, float, s) X(FLOAT64, double, d)

/* float32 products go to moontorch's own kernels where the CPU has them
   (mt_sgemm.c); 0 when done, else OpenBLAS does it */
static int own_gemm_FLOAT32(const gemm_geom *g, float *c, const float *a, const float *b, float beta) {
  return mt_sgemm(g->m, g->n, g->k, (float)g->alpha, a, g->a_rs, g->a_cs, b, g->b_rs, g->b_cs, beta, c, g->c_rs,
                  g->c_cs);
}
static int own_gemm_FLOAT64(const gemm_geom *g, double *c, const double *a, const double *b, double beta) {
  (void)g; (void)c; (void)a; (void)b; (void)beta;
  return -1;
}

#define BLAS_KERNEL(E, T, P)                                                       \
  static void blas_##E(const gemm_geom *g, char *c, const char *a, const char *b,  \
                       double beta) {                                              \
    const int m = (int)g->m, n = (int)g->n, k = (int)g->k;                         \
    const T alpha = (T)g->alpha, bt = (T)beta;                                     \
    const T *ap = (const T *)a, *bp = (const T *)b;                                \
    T *cp = (T *)c;                                                                \
    const int inc_a = k > 1 ? (int)g->a_cs : 1, inc_b = k > 1 ? (int)g->b_rs : 1;  \
    int64_t lda = 0, ldb = 0, ldc = 0;                                             \
    int ra = blas_layout(m, k, g->a_rs, g->a_cs, &lda);                            \
    int rb = blas_layout(k, n, g->b_rs, g->b_cs, &ldb);                            \
    int rc = blas_layout(m, n, g->c_rs, g->c_cs, &ldc);                            \
    if (m == 1 && n == 1) {                                                        \
      T d = cblas_##P##dot(k, ap, inc_a, bp, inc_b);                               \
      *cp = bt == 0 ? alpha * d : alpha * d + bt * *cp;                            \
    } else if (n == 1 || m == 1) {                                                 \
      int len = n == 1 ? m : n, inc_c = len > 1 ? (int)(n == 1 ? g->c_rs : g->c_cs) : 1; \
      if (bt == 0) /* newer OpenBLAS may let NaN in y survive beta 0 */            \
        for (int i = 0; i < len; i++) cp[(int64_t)i * inc_c] = 0;                  \
      if (n == 1)                                                                  \
        cblas_##P##gemv(ra ? CblasRowMajor : CblasColMajor, CblasNoTrans, m, k,    \
                        alpha, ap, (int)lda, bp, inc_b, bt, cp, inc_c);            \
      else                                                                         \
        cblas_##P##gemv(rb ? CblasRowMajor : CblasColMajor, CblasTrans, k, n,      \
                        alpha, bp, (int)ldb, ap, inc_a, bt, cp, inc_c);            \
    } else if (own_gemm_##E(g, cp, ap, bp, bt) != 0) {                             \
      cblas_##P##gemm(rc ? CblasRowMajor : CblasColMajor,                          \
                      ra == rc ? CblasNoTrans : CblasTrans,                        \
                      rb == rc ? CblasNoTrans : CblasTrans, m, n, k, alpha, ap,    \
                      (int)lda, bp, (int)ldb, bt, cp, (int)ldc);                   \
    }                                                                              \
  }
MT_BLAS_DTYPES(BLAS_KERNEL)

/* ---- kernels: a plain loop for integer dtypes ---- */
/* Instantiates its argument for integer dtypes only (kind 1 in MT_DTYPES). */
#define KIND_0(...)
#define KIND_1(...) __VA_ARGS__
#define KIND_2(...)
#define IF_INT(K, ...) KIND_##K(__VA_ARGS__)

/* Multiply-adds of an a x b x c product, saturating: only compared with
   grain sizes. */
static int64_t macs(int64_t a, int64_t b, int64_t c) {
  int64_t ab, abc;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc)) return INT64_MAX;
  return abc;
}

typedef struct {
  const gemm_geom *g;
  char *c;
  const char *a, *b;
  double beta;
} naive_job;

/* Sums wrap modulo 2^64, then the store truncates: the same result as
   wrapping in the dtype at every step, with no signed overflow. */
#define NAIVE_KERNEL(E, T, NAME, TN, K)                                             \
  IF_INT(K, static void naive_row_##E(const gemm_geom *g, char *c, const char *a,  \
                                      const char *b, double beta, int64_t i) {     \
    const int64_t es = (int64_t)sizeof(T);                                         \
    const uint64_t alpha = (uint64_t)(int64_t)g->alpha, bt = (uint64_t)(int64_t)beta; \
    for (int64_t j = 0; j < g->n; j++) {                                           \
      const char *pa = a + i * g->a_rs * es, *pb = b + j * g->b_cs * es;           \
      uint64_t acc = 0;                                                            \
      for (int64_t p = 0; p < g->k; p++)                                           \
        acc += (uint64_t)(int64_t)MT_LOAD_##E(pa + p * g->a_cs * es) *             \
               (uint64_t)(int64_t)MT_LOAD_##E(pb + p * g->b_rs * es);              \
      char *pc = c + (i * g->c_rs + j * g->c_cs) * es;                             \
      uint64_t v = alpha * acc;                                                    \
      if (beta != 0) v += bt * (uint64_t)(int64_t)MT_LOAD_##E(pc);                 \
      MT_STORE_##E(pc, (int64_t)v);                                                \
    }                                                                              \
  }                                                                                \
  static void naive_rows_##E(void *job, int64_t begin, int64_t end) {              \
    const naive_job *j = job;                                                      \
    for (int64_t i = begin; i < end; i++) naive_row_##E(j->g, j->c, j->a, j->b, j->beta, i); \
  }                                                                                \
  static void naive_##E(const gemm_geom *g, char *c, const char *a, const char *b, \
                        double beta) {                                             \
    naive_job job = {g, c, a, b, beta};                                            \
    mt_parallel_for(g->m, mt_parallel_items(MT_LINALG_GRAIN, macs(g->n, g->k, 1), 1), naive_rows_##E, &job); \
  })
MT_DTYPES(NAIVE_KERNEL)

#define BLAS_ENTRY(E, T, P) [MT_##E] = blas_##E,
#define NAIVE_ENTRY(E, T, NAME, TN, K) IF_INT(K, [MT_##E] = naive_##E,)
static const gemm_kernel kernels[MT_NDTYPES] = {MT_BLAS_DTYPES(BLAS_ENTRY) MT_DTYPES(NAIVE_ENTRY)};

/* ---- helpers ---- */
static int is_blas_dtype(int dtype) { return dtype == MT_FLOAT32 || dtype == MT_FLOAT64; }

/* The dtype a product computes in: half and bfloat16 go through float32. */
static int compute_dtype(int dtype) {
  return dtype == MT_FLOAT16 || dtype == MT_BFLOAT16 ? MT_FLOAT32 : dtype;
}

/* A borrowed 2-D view of t's storage (not retained: never released). */
static mt_tensor mat_view(const mt_tensor *t, int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  mt_tensor v = *t;
  v.ndim = 2;
  v.shape[0] = rows; v.shape[1] = cols;
  v.stride[0] = rs; v.stride[1] = cs;
  return v;
}

/* c = beta * c, for products with nothing to sum (k or the batch is 0). */
static int scale(mt_tensor *c, double beta) {
  if (beta == 1) return 0;
  if (beta == 0) return mt_fill(c, 0);
  mt_operand self = {c, 0, 0}, factor = {NULL, beta, beta == floor(beta)};
  return mt_binary(c, &self, &factor, MT_OP_mul, 1, 1, MT_FLOAT32);
}

/* r: t in dtype, with matrices BLAS can read -- t itself (aliased) when it
   already is, else a contiguous copy. Batch dims of stride 0 (broadcast)
   stay broadcast, so an expanded operand is not materialised. */
static int prep_operand(mt_tensor *r, const mt_tensor *t, int dtype) {
  int64_t ld;
  if (t->dtype == dtype && (!is_blas_dtype(dtype) || matrix_layout(t, &ld) >= 0)) {
    mt_tensor_alias(r, t);
    return 0;
  }
  mt_tensor compact = *t, copy = {0};   /* borrowed */
  for (int i = 0; i < t->ndim - 2; i++)
    if (t->stride[i] == 0) compact.shape[i] = 1;
  int rc = mt_tensor_init(&copy, dtype, t->ndim, compact.shape);
  if (rc == 0) rc = mt_copy(&copy, &compact);
  if (rc == 0) rc = mt_expand(r, &copy, t->ndim, t->shape);
  mt_tensor_release(&copy);
  return rc;
}

static int64_t batch_offset(int64_t index, int nbatch_dims, const int64_t *shape, const int64_t *stride) {
  int64_t off = 0;
  for (int i = nbatch_dims - 1; i >= 0; i--) {
    off += (index % shape[i]) * stride[i];
    index /= shape[i];
  }
  return off;
}

/* Product i of a batch: pointers are the first matrices, strides those of
   the batch dims (c_stride NULL when the batch sums into one c). */
typedef struct {
  gemm_geom g;
  gemm_kernel kernel;
  char *a, *b, *c;
  int64_t elem_size;
  int nbatch_dims;
  const int64_t *shape, *a_stride, *b_stride, *c_stride;
  double beta;
} batch_plan;

/* product i's matrices, and its beta (1 past the first when the batch sums into one c) */
static double product_at(const batch_plan *p, int64_t i, const char **a, const char **b, char **c) {
  double beta = p->beta;
  *c = p->c;
  if (p->c_stride) *c += batch_offset(i, p->nbatch_dims, p->shape, p->c_stride) * p->elem_size;
  else if (i > 0) beta = 1;
  *a = p->a + batch_offset(i, p->nbatch_dims, p->shape, p->a_stride) * p->elem_size;
  *b = p->b + batch_offset(i, p->nbatch_dims, p->shape, p->b_stride) * p->elem_size;
  return beta;
}

static void run_product(const batch_plan *p, int64_t i) {
  const char *a, *b;
  char *c;
  const double beta = product_at(p, i, &a, &b, &c);
  p->kernel(&p->g, c, a, b, beta);
}

static void run_products(void *plan, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) run_product(plan, i);
}

typedef struct {
  const batch_plan *plan;
  int64_t product;     /* which product of the batch */
  int by_columns;      /* blocks of columns of c, else of rows */
  int64_t units, parts;
} block_job;

/* Blocks [begin, end) of one product: each a product of its own, a block of
   c from a block of b's columns (or of a's rows) and all of the other. */
/* block `part` of `parts` along a dim of size dim cut in units of MT_LINALG_BLOCK_ALIGN:
   [*first, returned) */
static int64_t block_bounds(int64_t units, int64_t parts, int64_t part, int64_t dim, int64_t *first) {
  *first = units * part / parts * MT_LINALG_BLOCK_ALIGN;
  const int64_t last = units * (part + 1) / parts * MT_LINALG_BLOCK_ALIGN;
  return last < dim ? last : dim;
}

static void run_block_range(void *job, int64_t begin, int64_t end) {
  const block_job *j = job;
  for (int64_t part = begin; part < end; part++) {
    batch_plan sub = *j->plan;
    int64_t first;
    const int64_t last = block_bounds(j->units, j->parts, part, j->by_columns ? sub.g.n : sub.g.m, &first);
    if (j->by_columns) {
      sub.g.n = last - first;
      sub.b += first * sub.g.b_cs * sub.elem_size;
      sub.c += first * sub.g.c_cs * sub.elem_size;
    } else {
      sub.g.m = last - first;
      sub.a += first * sub.g.a_rs * sub.elem_size;
      sub.c += first * sub.g.c_rs * sub.elem_size;
    }
    run_product(&sub, j->product);
  }
}

/* How many blocks a product may be cut into: the cores this process may
   run on, read once. Not the pool's width: OpenBLAS's result for a row (or
   a column) can depend on the block's size (its kernels for the edges of a
   block sum in another order), so the blocks are the same at every thread
   count, and a product has the same bits at 1 thread as at 2 (the pool
   runs the blocks one after the other when it has one thread). */
static int block_cap(void) {
  static int cap;
  int c = __atomic_load_n(&cap, __ATOMIC_RELAXED);
  if (!c) {
    c = mt_allowed_cores();
    if (c < 1) c = 1;
    __atomic_store_n(&cap, c, __ATOMIC_RELAXED);
  }
  return c;
}

/* A float32 product whose every block moontorch's own kernel takes: its sums do not depend
   on the blocks (mt_sgemm.c), so with one thread it runs whole, a and b packed once
   instead of once per block, with the same bits as the blocks at any thread count. */
static int own_takes_blocks(const batch_plan *p, int by_columns, int64_t units, int64_t parts) {
  const gemm_geom *g = &p->g;
  if (p->kernel != kernels[MT_FLOAT32]) return 0;
  for (int64_t part = 0; part < parts; part++) {
    int64_t first;
    const int64_t last = block_bounds(units, parts, part, by_columns ? g->n : g->m, &first);
    if (!mt_sgemm_takes(by_columns ? g->m : last - first, by_columns ? last - first : g->n, g->k, g->a_rs, g->a_cs,
                        g->b_rs, g->b_cs, g->c_rs, g->c_cs))
      return 0;
  }
  return 1;
}

static void run_own_whole(const batch_plan *p, int64_t i) {
  const gemm_geom *g = &p->g;
  const char *a, *b;
  char *c;
  const double beta = product_at(p, i, &a, &b, &c);
  int rc = mt_gemm_f32(g->m, g->n, g->k, (float)g->alpha, a, MT_SG_F32, g->a_rs, g->a_cs, b, MT_SG_F32, g->b_rs,
                       g->b_cs, (float)beta, (float *)c, g->c_rs, g->c_cs);
  if (rc != 0) run_product(p, i);              /* no memory for its buffers: the blocks' own way */
}

/* Product i of the plan, cut into one block per core when it is large
   enough to pay for it (BLAS matrix-matrix products only). */
static void run_blocks(const batch_plan *p, int64_t i, int blas) {
  const gemm_geom *g = &p->g;
  int by_columns = g->n >= g->m;
  int64_t dim = by_columns ? g->n : g->m;
  int64_t units = (dim + MT_LINALG_BLOCK_ALIGN - 1) / MT_LINALG_BLOCK_ALIGN;
  int64_t parts = g->m > 1 && g->n > 1 && blas ? macs(g->m, g->n, g->k) / MT_LINALG_BLOCK_GRAIN : 1;
  if (parts > units) parts = units;
  if (parts > block_cap()) parts = block_cap();
  if (parts < 2) {
    run_product(p, i);
    return;
  }
  if (mt_get_num_threads() == 1 && own_takes_blocks(p, by_columns, units, parts)) {
    run_own_whole(p, i);
    return;
  }
  block_job job = {p, i, by_columns, units, parts};
  mt_parallel_for(parts, 1, run_block_range, &job);
}

/* ---- half and bfloat16 operands on the own kernel: widened as they are packed ---- */
typedef struct {
  const char *a, *b;
  float *c;
  int et;
  int64_t m, n, k, a_rs, a_cs, b_rs, b_cs, c_rs, units, parts;
  float alpha, beta;
  int failed;          /* a block the kernel could not run (no memory for its buffers) */
} half_job;

static void half_blocks(void *job, int64_t begin, int64_t end) {
  const half_job *j = job;
  for (int64_t part = begin; part < end; part++) {
    const int64_t first = j->units * part / j->parts * 32;
    const int64_t last = part == j->parts - 1 ? j->n : j->units * (part + 1) / j->parts * 32;
    if (mt_gemm_f32(j->m, last - first, j->k, j->alpha, j->a, j->et, j->a_rs, j->a_cs, j->b + first * j->b_cs * 2,
                    j->et, j->b_rs, j->b_cs, j->beta, j->c + first, j->c_rs, 1))
      __atomic_store_n(&((half_job *)job)->failed, 1, __ATOMIC_RELAXED);
  }
}

/* c (float32, each matrix row-major) = beta * c + alpha * a @ b for a and b bfloat16 or
   float16 of BLAS-readable matrices, on mt_sgemm.c's kernel, which widens them as it packs
   them (no float32 copies); 1 when it does not take the product (the caller goes on), -1
   on failure */
static int half_bgemm(const char *op, mt_tensor *c, const mt_tensor *a, const mt_tensor *b, double alpha,
                      double beta, int sum_batches) {
  const int nd = a->ndim, nbd = nd - 2;
  const int64_t m = a->shape[nd - 2], k = a->shape[nd - 1], n = b->shape[nd - 1];
  int64_t lda, ldb, ldc, nbatch = 1;
  for (int i = 0; i < nbd; i++) nbatch *= a->shape[i];
  if (a->dtype != b->dtype || (a->dtype != MT_BFLOAT16 && a->dtype != MT_FLOAT16) || c->dtype != MT_FLOAT32 ||
      !mt_gemm_f32_takes(m, n, k) || matrix_layout(a, &lda) < 0 || matrix_layout(b, &ldb) < 0 ||
      matrix_layout(c, &ldc) != 1 || c->stride[c->ndim - 1] != 1)
    return 1;
  const int64_t units = n / 32;
  int64_t parts = macs(m, n, k) / MT_LINALG_BLOCK_GRAIN;
  if (parts > units) parts = units;
  if (parts > block_cap()) parts = block_cap();
  if (parts < 1) parts = 1;
  for (int64_t i = 0; i < nbatch; i++) {
    half_job job = {
      (const char *)mt_data(a) + batch_offset(i, nbd, a->shape, a->stride) * 2,
      (const char *)mt_data(b) + batch_offset(i, nbd, a->shape, b->stride) * 2,
      (float *)mt_data(c) + (sum_batches ? 0 : batch_offset(i, nbd, a->shape, c->stride)),
      a->dtype == MT_BFLOAT16 ? MT_SG_BF16 : MT_SG_F16,
      m, n, k, a->stride[nd - 2], a->stride[nd - 1], b->stride[nd - 2], b->stride[nd - 1],
      c->stride[c->ndim - 2], units, parts, (float)alpha, (float)(sum_batches && i > 0 ? 1 : beta), 0};
    if (parts > 1) mt_parallel_for(parts, 1, half_blocks, &job);
    else half_blocks(&job, 0, 1);
    if (job.failed) return mt_fail("%s: out of memory for the product's packing buffers", op);
  }
  c->storage->version++;
  return 0;
}

/* The batched product every op ends in: c = beta * c + alpha * a @ b, with
   a (..., M, K), b (..., K, N) of one batch shape and c (..., M, N) of the
   same, or, with sum_batches, c (M, N) accumulating the whole batch. c is
   written in place; it is computed in a scratch buffer only when BLAS
   cannot write it (half dtypes, odd strides) or it shares memory with an
   input. */
static int bgemm(const char *op, mt_tensor *c, const mt_tensor *a, const mt_tensor *b,
                 double alpha, double beta, int sum_batches) {
  const int nd = a->ndim, nbd = nd - 2;
  const int64_t m = a->shape[nd - 2], k = a->shape[nd - 1], n = b->shape[nd - 1];
  int64_t nbatch = 1, ld;
  for (int i = 0; i < nbd; i++) nbatch *= a->shape[i];
  if (mt_numel(c) == 0) return 0;
  if (k == 0 || nbatch == 0) return scale(c, beta);
  const int dtype = compute_dtype(c->dtype), blas = is_blas_dtype(dtype);
  if (blas && (m > INT_MAX || n > INT_MAX || k > INT_MAX))
    return mt_fail("%s: matrices too large for BLAS (%lldx%lld by %lldx%lld)", op,
                   (long long)m, (long long)k, (long long)k, (long long)n);
  if (dtype != c->dtype || (blas && matrix_layout(c, &ld) < 0) ||
      c->storage == a->storage || c->storage == b->storage) {
    mt_tensor scratch = {0};
    int rc = mt_tensor_init(&scratch, dtype, c->ndim, c->shape);
    if (rc == 0 && beta != 0) rc = mt_copy(&scratch, c);
    if (rc == 0) rc = bgemm(op, &scratch, a, b, alpha, beta, sum_batches);
    if (rc == 0) rc = mt_copy(c, &scratch);
    mt_tensor_release(&scratch);
    return rc;
  }
  if (dtype == MT_FLOAT32) {
    const int rc = half_bgemm(op, c, a, b, alpha, beta, sum_batches);
    if (rc <= 0) return rc;
  }
  mt_tensor pa = {0}, pb = {0};
  if (prep_operand(&pa, a, dtype) || prep_operand(&pb, b, dtype)) {
    mt_tensor_release(&pa);
    return -1;
  }
  const batch_plan plan = {
    {m, n, k, pa.stride[nd - 2], pa.stride[nd - 1], pb.stride[nd - 2], pb.stride[nd - 1],
     c->stride[c->ndim - 2], c->stride[c->ndim - 1], alpha},
    kernels[dtype], mt_data(&pa), mt_data(&pb), mt_data(c), mt_dtype_size(dtype), nbd,
    a->shape, pa.stride, pb.stride, sum_batches ? NULL : c->stride, beta};
  if (blas && !sum_batches && nbatch > 1 && macs(m, n, k) < 2 * MT_LINALG_BLOCK_GRAIN) {
    mt_parallel_for(nbatch, mt_parallel_items(MT_LINALG_GRAIN, macs(m, n, k), 1), run_products, (void *)&plan);
  } else {
    for (int64_t i = 0; i < nbatch; i++) run_blocks(&plan, i, blas);
  }
  c->storage->version++;
  mt_tensor_release(&pa);
  mt_tensor_release(&pb);
  return 0;
}

/* ---- checks ---- */
static int check_dtypes(const char *op, const mt_tensor *a, const mt_tensor *b) {
  if (a->dtype != b->dtype)
    return mt_fail("%s: expected both %s, got %s and %s", op, mt_dtypes[a->dtype].name,
                   mt_dtypes[a->dtype].name, mt_dtypes[b->dtype].name);
  if (a->dtype == MT_BOOL) return mt_fail("%s: not implemented for bool tensors", op);
  return 0;
}

static int check_dims(const char *op, const mt_tensor *a, const mt_tensor *b, int na, int nb,
                      const char *what) {
  if (a->ndim != na || b->ndim != nb)
    return mt_fail("%s: expected %s, got %d-D and %d-D", op, what, a->ndim, b->ndim);
  return check_dtypes(op, a, b);
}

static int fail_shapes(const char *op, const mt_tensor *a, const mt_tensor *b) {
  char b1[128], b2[128];
  return mt_fail("%s: cannot multiply %s by %s", op, mt_shape_str(a, b1, sizeof b1),
                 mt_shape_str(b, b2, sizeof b2));
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

/* r (new, shape out) = a @ b. */
static int product(const char *op, mt_tensor *r, const mt_tensor *a, const mt_tensor *b,
                   int out_ndim, const int64_t *out_shape) {
  if (mt_tensor_init(r, a->dtype, out_ndim, out_shape)) return -1;
  mt_tensor c = product_view(r, a, b);
  return bgemm(op, &c, a, b, 1, 0, 0);
}

/* ---- the products ---- */
int mt_mm(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  if (check_dims("mm", a, b, 2, 2, "2-D tensors")) return -1;
  if (a->shape[1] != b->shape[0]) return fail_shapes("mm", a, b);
  const int64_t shape[2] = {a->shape[0], b->shape[1]};
  return product("mm", r, a, b, 2, shape);
}

int mt_mv(mt_tensor *r, const mt_tensor *a, const mt_tensor *x) {
  if (check_dims("mv", a, x, 2, 1, "a 2-D matrix and a 1-D vector")) return -1;
  if (a->shape[1] != x->shape[0]) return fail_shapes("mv", a, x);
  const mt_tensor xm = mat_view(x, x->shape[0], 1, x->stride[0], 1);
  return product("mv", r, a, &xm, 1, a->shape);
}

int mt_dot(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  if (check_dims("dot", a, b, 1, 1, "1-D tensors")) return -1;
  if (a->shape[0] != b->shape[0])
    return mt_fail("dot: tensors have different sizes %lld and %lld", (long long)a->shape[0],
                   (long long)b->shape[0]);
  const mt_tensor am = mat_view(a, 1, a->shape[0], 1, a->stride[0]);
  const mt_tensor bm = mat_view(b, b->shape[0], 1, b->stride[0], 1);
  const int64_t no_dims[1] = {0};
  return product("dot", r, &am, &bm, 0, no_dims);
}

int mt_outer(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  if (check_dims("outer", a, b, 1, 1, "1-D tensors")) return -1;
  const mt_tensor am = mat_view(a, a->shape[0], 1, a->stride[0], 1);
  const mt_tensor bm = mat_view(b, 1, b->shape[0], 1, b->stride[0]);
  const int64_t shape[2] = {a->shape[0], b->shape[0]};
  return product("outer", r, &am, &bm, 2, shape);
}

int mt_bmm(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
  if (check_dims("bmm", a, b, 3, 3, "3-D tensors")) return -1;
  if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return fail_shapes("bmm", a, b);
  const int64_t shape[3] = {a->shape[0], a->shape[1], b->shape[2]};
  return product("bmm", r, a, b, 3, shape);
}

/* matmul: 1-D operands become a row (a) or a column (b) and lose that dim
   in the result; batch dims broadcast. A stack times one matrix folds the
   stack into the rows when a's layout allows: one large gemm. */
int mt_matmul(mt_tensor *r, const mt_tensor *a, const mt_tensor *b) {
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
    return mt_fail("matmul: cannot multiply %s by %s: batch dims do not broadcast",
                   mt_shape_str(a, b1, sizeof b1), mt_shape_str(b, b2s, sizeof b2s));
  }
  int out_ndim = nbatch;
  if (a->ndim > 1) shape[out_ndim++] = m;
  if (b->ndim > 1) shape[out_ndim++] = n;
  if (b2.ndim == 2) {   /* also covers dot, mv, mm and vector @ matrix */
    int64_t rows = m;
    for (int i = 0; i < nbatch; i++) rows *= a2.shape[i];
    const int64_t flat[2] = {rows, k};
    mt_tensor folded = {0};
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
  mt_tensor ae = {0}, be = {0};
  int rc = mt_expand(&ae, &a2, nbatch + 2, ashape);
  if (rc == 0) rc = mt_expand(&be, &b2, nbatch + 2, bshape);
  if (rc == 0) rc = product("matmul", r, &ae, &be, out_ndim, shape);
  mt_tensor_release(&ae);
  mt_tensor_release(&be);
  return rc;
}

/* ---- beta * input + alpha * product ---- */
static int is_integral(double v) { return v == floor(v) && fabs(v) < 9.2e18; }

/* r = beta * input + alpha * a @ b, where a and b are the operands as
   matrices (or stacks) and (out_ndim, out_shape) the product's shape as the
   op returns it; a 1-D result is the column of an (M, 1) product. */
static int add_product(const char *op, mt_tensor *r, const mt_tensor *input, const mt_tensor *a,
                       const mt_tensor *b, int out_ndim, const int64_t *out_shape, double beta,
                       double alpha, int inplace, int sum_batches) {
  char b1[128], b2[128];
  mt_tensor out = {.ndim = out_ndim};   /* the product's shape, for checks and messages */
  memcpy(out.shape, out_shape, sizeof(int64_t) * (size_t)out_ndim);
  if (input->dtype != a->dtype)
    return mt_fail("%s: input is %s but the product is %s", op, mt_dtypes[input->dtype].name,
                   mt_dtypes[a->dtype].name);
  if (mt_dtype_is_int(a->dtype) && (!is_integral(alpha) || !is_integral(beta)))
    return mt_fail("%s: beta and alpha must be integers for %s tensors, got %g and %g", op,
                   mt_dtypes[a->dtype].name, beta, alpha);
  mt_tensor expanded = {0};
  if (mt_expand(&expanded, input, out_ndim, out_shape))
    return mt_fail("%s: input of size %s cannot broadcast to the product's size %s", op,
                   mt_shape_str(input, b1, sizeof b1), mt_shape_str(&out, b2, sizeof b2));
  mt_tensor_release(&expanded);
  if (inplace) {
    if (!mt_same_shape(input, &out))
      return mt_fail("%s_: self has size %s but the product has size %s", op,
                     mt_shape_str(input, b1, sizeof b1), mt_shape_str(&out, b2, sizeof b2));
    if (mt_check_writable(op, input)) return -1;
  } else {
    if (mt_tensor_init(r, a->dtype, out_ndim, out_shape)) return -1;
    if (beta != 0 && mt_copy(r, input)) return -1;
  }
  mt_tensor c = out_ndim == 1 ? mat_view(r, r->shape[0], 1, r->stride[0], 1) : *r;
  return bgemm(op, &c, a, b, alpha, beta, sum_batches);
}

int mt_addmm(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
             double beta, double alpha, int inplace) {
  if (check_dims("addmm", a, b, 2, 2, "2-D tensors")) return -1;
  if (a->shape[1] != b->shape[0]) return fail_shapes("addmm", a, b);
  const int64_t shape[2] = {a->shape[0], b->shape[1]};
  return add_product("addmm", r, input, a, b, 2, shape, beta, alpha, inplace, 0);
}

int mt_addmv(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
             double beta, double alpha, int inplace) {
  if (check_dims("addmv", a, b, 2, 1, "a 2-D matrix and a 1-D vector")) return -1;
  if (a->shape[1] != b->shape[0]) return fail_shapes("addmv", a, b);
  const mt_tensor bm = mat_view(b, b->shape[0], 1, b->stride[0], 1);
  return add_product("addmv", r, input, a, &bm, 1, a->shape, beta, alpha, inplace, 0);
}

int mt_addr(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
            double beta, double alpha, int inplace) {
  if (check_dims("addr", a, b, 1, 1, "1-D vectors")) return -1;
  const mt_tensor am = mat_view(a, a->shape[0], 1, a->stride[0], 1);
  const mt_tensor bm = mat_view(b, 1, b->shape[0], 1, b->stride[0]);
  const int64_t shape[2] = {a->shape[0], b->shape[0]};
  return add_product("addr", r, input, &am, &bm, 2, shape, beta, alpha, inplace, 0);
}

int mt_baddbmm(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
               double beta, double alpha, int inplace) {
  if (check_dims("baddbmm", a, b, 3, 3, "3-D tensors")) return -1;
  if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return fail_shapes("baddbmm", a, b);
  const int64_t shape[3] = {a->shape[0], a->shape[1], b->shape[2]};
  return add_product("baddbmm", r, input, a, b, 3, shape, beta, alpha, inplace, 0);
}

int mt_addbmm(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
              double beta, double alpha, int inplace) {
  if (check_dims("addbmm", a, b, 3, 3, "3-D tensors")) return -1;
  if (a->shape[0] != b->shape[0] || a->shape[2] != b->shape[1]) return fail_shapes("addbmm", a, b);
  const int64_t shape[2] = {a->shape[1], b->shape[2]};
  return add_product("addbmm", r, input, a, b, 2, shape, beta, alpha, inplace, 1);
}

/* ---- the registry's products, by op ---- */
#define PRODUCT(call, shapes) return call;
#define ADD_PRODUCT(call, shapes) return call;
#define OPC(name, kernel, ...) case MT_OP_##name: kernel
int mt_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op) {
  switch (op) {
    MT_PRODUCT_OPS(OPC, _)
  default: return mt_fail("mt_product: %s is not a product", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
  }
}

int mt_add_product(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b, mt_op op,
                   double beta, double alpha, int inplace) {
  switch (op) {
    MT_ADD_PRODUCT_OPS(OPC, _)
  default:
    return mt_fail("mt_add_product: %s is not an add product", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
  }
}
#undef OPC
#undef ADD_PRODUCT
#undef PRODUCT
