/* mt_lapack.c: the LAPACK kernels of mt_lapack.h, one batch loop each over
   column-major copies of the inputs, calling OpenBLAS's Fortran routines. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "mt_lapack.h"
#include "mt_alloc.h"

/* ---- the Fortran routines ----
   Declared here rather than through lapacke.h: every argument by pointer,
   the hidden length of each character argument last (size_t, which every
   Fortran ABI we meet accepts). Real arrays are void *, so that the s and d
   routines share one type and one code path serves both dtypes. */
typedef const int cint;
typedef const char cchar;
#define DECLARE(name, params) void s##name##_ params; void d##name##_ params;
DECLARE(getrf, (cint *m, cint *n, void *a, cint *lda, int *ipiv, int *info))
DECLARE(gesv, (cint *n, cint *nrhs, void *a, cint *lda, int *ipiv, void *b, cint *ldb, int *info))
DECLARE(trtrs, (cchar *uplo, cchar *trans, cchar *diag, cint *n, cint *nrhs, const void *a, cint *lda, void *b,
                cint *ldb, int *info, size_t, size_t, size_t))
DECLARE(gels, (cchar *trans, cint *m, cint *n, cint *nrhs, void *a, cint *lda, void *b, cint *ldb, void *work,
               cint *lwork, int *info, size_t))
DECLARE(syevd, (cchar *jobz, cchar *uplo, cint *n, void *a, cint *lda, void *w, void *work, cint *lwork, int *iwork,
                cint *liwork, int *info, size_t, size_t))
DECLARE(geev, (cchar *jobvl, cchar *jobvr, cint *n, void *a, cint *lda, void *wr, void *wi, void *vl, cint *ldvl,
               void *vr, cint *ldvr, void *work, cint *lwork, int *info, size_t, size_t))
DECLARE(gesdd, (cchar *jobz, cint *m, cint *n, void *a, cint *lda, void *s, void *u, cint *ldu, void *vt,
                cint *ldvt, void *work, cint *lwork, int *iwork, int *info, size_t))
DECLARE(potrf, (cchar *uplo, cint *n, void *a, cint *lda, int *info, size_t))
DECLARE(potrs, (cchar *uplo, cint *n, cint *nrhs, const void *a, cint *lda, void *b, cint *ldb, int *info, size_t))
DECLARE(potri, (cchar *uplo, cint *n, void *a, cint *lda, int *info, size_t))
DECLARE(pstrf, (cchar *uplo, cint *n, void *a, cint *lda, int *piv, int *rank, const void *tol, void *work,
                int *info, size_t))
DECLARE(geqrf, (cint *m, cint *n, void *a, cint *lda, void *tau, void *work, cint *lwork, int *info))
DECLARE(orgqr, (cint *m, cint *n, cint *k, void *a, cint *lda, const void *tau, void *work, cint *lwork, int *info))
DECLARE(ormqr, (cchar *side, cchar *trans, cint *m, cint *n, cint *k, const void *a, cint *lda, const void *tau,
                void *c, cint *ldc, void *work, cint *lwork, int *info, size_t, size_t))
#undef DECLARE

typedef struct {
  __typeof__(sgetrf_) *getrf;
  __typeof__(sgesv_) *gesv;
  __typeof__(strtrs_) *trtrs;
  __typeof__(sgels_) *gels;
  __typeof__(ssyevd_) *syevd;
  __typeof__(sgeev_) *geev;
  __typeof__(sgesdd_) *gesdd;
  __typeof__(spotrf_) *potrf;
  __typeof__(spotrs_) *potrs;
  __typeof__(spotri_) *potri;
  __typeof__(spstrf_) *pstrf;
  __typeof__(sgeqrf_) *geqrf;
  __typeof__(sorgqr_) *orgqr;
  __typeof__(sormqr_) *ormqr;
} routines;

#define ROUTINES(P)                                                                                          \
  {P##getrf_, P##gesv_, P##trtrs_, P##gels_, P##syevd_, P##geev_, P##gesdd_, P##potrf_, P##potrs_, P##potri_, \
   P##pstrf_, P##geqrf_, P##orgqr_, P##ormqr_}
static const routines single_routines = ROUTINES(s), double_routines = ROUTINES(d);

static const routines *lapack(int dtype) { return dtype == MT_FLOAT32 ? &single_routines : &double_routines; }

/* One real of either dtype: a workspace size LAPACK reports, pstrf's tol. */
typedef union { float f; double d; } real;

static double real_value(int dtype, const real *v) { return dtype == MT_FLOAT32 ? v->f : v->d; }

/* ---- inputs ---- */

/* a is a matrix or a batch of them, float32 or float64 (of dtype when that
   is not -1), on the CPU, with sizes LAPACK's int indexes. */
static int check_matrix(const char *op, const mt_tensor *a, const char *what, int dtype) {
  char b[128];
  if (mt_device_of(a) != MT_CPU) return mt_fail("%s: %s must be on the CPU", op, what);
  if (a->dtype != MT_FLOAT32 && a->dtype != MT_FLOAT64)
    return mt_fail("%s: %s must be a float32 or float64 tensor, got %s", op, what, mt_dtypes[a->dtype].name);
  if (dtype >= 0 && a->dtype != dtype)
    return mt_fail("%s: %s is %s but the matrix is %s: both must have one dtype", op, what,
                   mt_dtypes[a->dtype].name, mt_dtypes[dtype].name);
  if (a->ndim < 2)
    return mt_fail("%s: %s must have at least 2 dims (a matrix or a batch of them), got %s", op, what,
                   mt_shape_str(a, b, sizeof b));
  if (a->shape[a->ndim - 1] > INT_MAX || a->shape[a->ndim - 2] > INT_MAX)
    return mt_fail("%s: %s of size %s is too large for LAPACK (at most %d rows and columns)", op, what,
                   mt_shape_str(a, b, sizeof b), INT_MAX);
  return 0;
}

static int rows(const mt_tensor *a) { return (int)a->shape[a->ndim - 2]; }
static int cols(const mt_tensor *a) { return (int)a->shape[a->ndim - 1]; }

static int check_square(const char *op, const mt_tensor *a, const char *what) {
  char b[128];
  if (check_matrix(op, a, what, -1)) return -1;
  if (rows(a) != cols(a))
    return mt_fail("%s: %s must be square (or a batch of square matrices), got %s", op, what,
                   mt_shape_str(a, b, sizeof b));
  return 0;
}

/* b's batch dims are a's (the caller broadcasts them) */
static int check_same_batch(const char *op, const mt_tensor *a, const mt_tensor *b, int bdims) {
  char sa[128], sb[128];
  int same = a->ndim - 2 == b->ndim - bdims;
  for (int d = 0; same && d < a->ndim - 2; d++) same = a->shape[d] == b->shape[d];
  if (!same)
    return mt_fail("%s: the batch dims of %s and %s differ", op, mt_shape_str(a, sa, sizeof sa),
                   mt_shape_str(b, sb, sizeof sb));
  return 0;
}

/* a (..., m, k) and b (..., m, n): the right-hand side b has a's rows */
static int check_rhs(const char *op, const mt_tensor *a, const mt_tensor *b, const char *what) {
  char sa[128], sb[128];
  if (check_matrix(op, b, what, a->dtype) || check_same_batch(op, a, b, 2)) return -1;
  if (rows(b) != rows(a))
    return mt_fail("%s: %s %s must have as many rows as the matrix %s", op, what, mt_shape_str(b, sb, sizeof sb),
                   mt_shape_str(a, sa, sizeof sa));
  return 0;
}

static int check_char(const char *op, const char *what, char c, const char *allowed) {
  if (!c || !strchr(allowed, c)) return mt_fail("%s: %s must be one of '%s', got '%c'", op, what, allowed, c ? c : '?');
  return 0;
}

static int64_t batch_of(const mt_tensor *a) {
  int64_t n = 1;
  for (int d = 0; d < a->ndim - 2; d++) n *= a->shape[d];      /* within numel: no overflow */
  return n;
}

/* ---- results ---- */

/* r: fresh column-major matrices (..., m, n) with a's batch dims: the
   transposes of contiguous (..., n, m), as LAPACK writes them. */
static int colmajor_new(const char *op, mt_tensor *r, const mt_tensor *a, int dtype, int64_t m, int64_t n) {
  int64_t shape[MT_MAX_DIMS];
  int nd = a->ndim;
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)(nd - 2));
  shape[nd - 2] = n;
  shape[nd - 1] = m;
  if (mt_tensor_init_op(op, r, dtype, nd, shape)) return -1;
  int64_t s = r->stride[nd - 1];
  r->shape[nd - 2] = m; r->shape[nd - 1] = n;
  r->stride[nd - 1] = r->stride[nd - 2]; r->stride[nd - 2] = s;
  return 0;
}

/* r: a's values in fresh column-major matrices */
static int colmajor_copy(const char *op, mt_tensor *r, const mt_tensor *a) {
  return colmajor_new(op, r, a, a->dtype, rows(a), cols(a)) || mt_copy(r, a) ? -1 : 0;
}

/* r: fresh contiguous (..., n) with a's batch dims (extra n2 > 0: (..., n, n2)) */
static int vectors_new(const char *op, mt_tensor *r, const mt_tensor *a, int dtype, int64_t n, int64_t n2) {
  int64_t shape[MT_MAX_DIMS];
  int nd = a->ndim - 1;
  memcpy(shape, a->shape, sizeof(int64_t) * (size_t)(nd - 1));
  shape[nd - 1] = n;
  if (n2 > 0) shape[nd++] = n2;
  return mt_tensor_init_op(op, r, dtype, nd, shape);
}

/* matrix (or vector) i of a batch of contiguous ones of per elements each */
static char *item(const mt_tensor *t, int64_t i, int64_t per) {
  return mt_data(t) + i * per * mt_dtypes[t->dtype].size;
}

static int64_t per_matrix(const mt_tensor *t) { return t->shape[t->ndim - 1] * t->shape[t->ndim - 2]; }

static int ld(int64_t m) { return m > 1 ? (int)m : 1; }

/* ---- workspaces ---- */

typedef struct {
  void *p;
  size_t nbytes;
} buffer;

static int buffer_new(const char *op, buffer *b, int64_t count, int esize) {
  int64_t nbytes;
  if (count < 1) count = 1;
  if (mt_mul_size(op, count, esize, &nbytes)) return -1;
  b->nbytes = (size_t)nbytes;
  b->p = mt_alloc(b->nbytes);
  if (!b->p) return mt_fail("%s: out of memory (a LAPACK workspace of %lld bytes)", op, (long long)nbytes);
  return 0;
}

static void buffer_free(buffer *b) {
  if (b->p) mt_free(b->p, b->nbytes);
  b->p = NULL;
}

/* The workspace a query (lwork = -1) asked for: its size, as a real, is
   rounded up (a float32 count loses the low bits of a large one). */
static int workspace_new(const char *op, buffer *b, int *lwork, int dtype, const real *query) {
  double want = real_value(dtype, query);
  want = want * (1 + 1e-6) + 1;
  if (want > INT_MAX) return mt_fail("%s: the LAPACK workspace is too large (%.0f elements)", op, want);
  *lwork = (int)want;
  return buffer_new(op, b, *lwork, mt_dtypes[dtype].size);
}

/* ---- errors ---- */

/* info < 0: an argument LAPACK refused, which the checks above should have
   caught; info > 0: what the routine reports, in what (one %d: info) */
static int lapack_error(const char *op, const char *routine, int info, const mt_tensor *a, int64_t i,
                        const char *what) {
  char text[256], b[128];
  if (info < 0)
    return mt_fail("%s: LAPACK's %s refused its argument %d (matrix %s)", op, routine, -info,
                   mt_shape_str(a, b, sizeof b));
  snprintf(text, sizeof text, what, info);
  if (batch_of(a) > 1) return mt_fail("%s: %s (batch element %lld)", op, text, (long long)i + 1);
  return mt_fail("%s: %s", op, text);
}

/* Zeros the triangle of column-major n x n m that uplo's factor leaves
   unused (LAPACK leaves the input's values there). */
static void clear_other_triangle(char *m, int n, int esize, char uplo) {
  for (int c = 0; c < n; c++) {
    char *col = m + (size_t)c * (size_t)n * (size_t)esize;
    if (uplo == 'U') memset(col + (size_t)(c + 1) * (size_t)esize, 0, (size_t)(n - c - 1) * (size_t)esize);
    else memset(col, 0, (size_t)c * (size_t)esize);
  }
}

/* Copies the uplo triangle of column-major n x n m onto the other. */
static void mirror_triangle(char *m, int n, int esize, char uplo) {
  for (int c = 0; c < n; c++)
    for (int r = c + 1; r < n; r++) {
      size_t lower = ((size_t)c * (size_t)n + (size_t)r) * (size_t)esize;
      size_t upper = ((size_t)r * (size_t)n + (size_t)c) * (size_t)esize;
      if (uplo == 'U') memcpy(m + lower, m + upper, (size_t)esize);
      else memcpy(m + upper, m + lower, (size_t)esize);
    }
}

/* ---- LU ---- */

int mt_lapack_getrf(const char *op, mt_tensor *lu, mt_tensor *piv, mt_tensor *info, const mt_tensor *a) {
  if (check_square(op, a, "A") || colmajor_copy(op, lu, a)) return -1;
  int n = cols(a), lda = ld(n);
  int64_t batch = batch_of(a), per = per_matrix(lu);
  buffer ipiv = {0};
  if (vectors_new(op, piv, a, MT_INT64, n, 0) || mt_tensor_init_op(op, info, MT_INT64, a->ndim - 2, a->shape) ||
      buffer_new(op, &ipiv, n, sizeof(int)))
    return -1;
  const routines *f = lapack(a->dtype);
  int64_t *p = (int64_t *)mt_data(piv), *status = (int64_t *)mt_data(info);
  for (int64_t i = 0; i < batch; i++) {
    int err;
    f->getrf(&n, &n, item(lu, i, per), &lda, ipiv.p, &err);
    if (err < 0) { buffer_free(&ipiv); return lapack_error(op, "getrf", err, a, i, ""); }
    status[i] = err;
    for (int k = 0; k < n; k++) p[i * n + k] = ((int *)ipiv.p)[k];
  }
  buffer_free(&ipiv);
  return 0;
}

int mt_lapack_gesv(const char *op, mt_tensor *x, mt_tensor *lu, mt_tensor *piv, const mt_tensor *a,
                   const mt_tensor *b) {
  mt_tensor own_lu = {0}, own_piv = {0};
  if (!lu) lu = &own_lu;
  if (!piv) piv = &own_piv;
  if (check_square(op, a, "A") || check_rhs(op, a, b, "B") || colmajor_copy(op, lu, a) || colmajor_copy(op, x, b))
    return -1;
  int n = cols(a), k = cols(b), lda = ld(n), err = 0;
  int64_t batch = batch_of(a), per_a = per_matrix(lu), per_b = per_matrix(x);
  buffer ipiv = {0};
  if (vectors_new(op, piv, a, MT_INT64, n, 0) || buffer_new(op, &ipiv, n, sizeof(int))) return -1;
  const routines *f = lapack(a->dtype);
  int64_t *p = (int64_t *)mt_data(piv);
  for (int64_t i = 0; i < batch && err == 0; i++) {
    f->gesv(&n, &k, item(lu, i, per_a), &lda, ipiv.p, item(x, i, per_b), &lda, &err);
    if (err) err = lapack_error(op, "gesv", err, a, i, "the matrix is singular (diagonal element %d of its LU "
                                "factor U is zero)");
    for (int j = 0; j < n; j++) p[i * n + j] = ((int *)ipiv.p)[j];
  }
  buffer_free(&ipiv);
  mt_tensor_release(&own_lu);
  mt_tensor_release(&own_piv);
  return err;
}

int mt_lapack_trtrs(const char *op, mt_tensor *x, const mt_tensor *a, const mt_tensor *b, char uplo, char trans,
                    char diag) {
  mt_tensor ac = {0};
  if (check_char(op, "uplo", uplo, "UL") || check_char(op, "trans", trans, "NT") ||
      check_char(op, "diag", diag, "NU") || check_square(op, a, "A") || check_rhs(op, a, b, "B") ||
      colmajor_copy(op, &ac, a) || colmajor_copy(op, x, b))
    return -1;
  int n = cols(a), k = cols(b), lda = ld(n), err = 0;
  int64_t batch = batch_of(a), per_a = per_matrix(&ac), per_b = per_matrix(x);
  const routines *f = lapack(a->dtype);
  for (int64_t i = 0; i < batch && err == 0; i++) {
    f->trtrs(&uplo, &trans, &diag, &n, &k, item(&ac, i, per_a), &lda, item(x, i, per_b), &lda, &err, 1, 1, 1);
    if (err) err = lapack_error(op, "trtrs", err, a, i, "the triangular matrix is singular (diagonal element %d is "
                                "zero)");
  }
  mt_tensor_release(&ac);
  return err;
}

/* ---- least squares ---- */

int mt_lapack_gels(const char *op, mt_tensor *x, const mt_tensor *a, const mt_tensor *b) {
  mt_tensor ac = {0}, bc = {0}, top = {0};
  if (check_matrix(op, a, "A", -1) || check_rhs(op, a, b, "B") || colmajor_copy(op, &ac, a)) return -1;
  int m = rows(a), n = cols(a), k = cols(b), lda = ld(m), ldb = ld(m > n ? m : n), err = 0, lwork;
  /* b in the first m rows of a (max(m, n), k) buffer; x is its first n */
  int rc = colmajor_new(op, &bc, b, b->dtype, m > n ? m : n, k) || mt_fill(&bc, 0) ||
           mt_narrow(&top, &bc, bc.ndim - 2, 0, m) || mt_copy(&top, b);
  mt_tensor_release(&top);
  if (rc) goto done;
  const routines *f = lapack(a->dtype);
  real query;
  buffer work = {0};
  f->gels("N", &m, &n, &k, mt_data(&ac), &lda, mt_data(&bc), &ldb, &query, &(int){-1}, &err, 1);
  if ((rc = workspace_new(op, &work, &lwork, a->dtype, &query)) != 0) goto done;
  int64_t batch = batch_of(a), per_a = per_matrix(&ac), per_b = per_matrix(&bc);
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->gels("N", &m, &n, &k, item(&ac, i, per_a), &lda, item(&bc, i, per_b), &ldb, work.p, &lwork, &err, 1);
    if (err) rc = lapack_error(op, "gels", err, a, i, "the matrix does not have full rank (diagonal element %d of "
                               "its triangular factor is zero)");
  }
  buffer_free(&work);
  if (rc == 0) rc = mt_narrow(x, &bc, bc.ndim - 2, 0, n);
done:
  mt_tensor_release(&ac);
  mt_tensor_release(&bc);
  return rc ? -1 : 0;
}

/* ---- eigenvalues ---- */

int mt_lapack_syevd(const char *op, mt_tensor *w, mt_tensor *v, const mt_tensor *a, char jobz, char uplo) {
  if (check_char(op, "jobz", jobz, "NV") || check_char(op, "uplo", uplo, "UL") || check_square(op, a, "A") ||
      colmajor_copy(op, v, a))
    return -1;
  int n = cols(a), lda = ld(n), err = 0, lwork, liwork, iquery;
  if (vectors_new(op, w, a, a->dtype, n, 0)) return -1;
  const routines *f = lapack(a->dtype);
  real query;
  buffer work = {0}, iwork = {0};
  f->syevd(&jobz, &uplo, &n, mt_data(v), &lda, mt_data(w), &query, &(int){-1}, &iquery, &(int){-1}, &err, 1, 1);
  liwork = iquery > 1 ? iquery : 1;
  if (workspace_new(op, &work, &lwork, a->dtype, &query) || buffer_new(op, &iwork, liwork, sizeof(int))) {
    buffer_free(&work);
    return -1;
  }
  int64_t batch = batch_of(a), per = per_matrix(v), rc = 0;
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->syevd(&jobz, &uplo, &n, item(v, i, per), &lda, item(w, i, n), work.p, &lwork, iwork.p, &liwork, &err, 1, 1);
    if (err) rc = lapack_error(op, "syevd", err, a, i, "the eigenvalue algorithm failed to converge (%d elements "
                               "of an intermediate form did not reach zero)");
  }
  buffer_free(&work);
  buffer_free(&iwork);
  return rc ? -1 : 0;
}

int mt_lapack_geev(const char *op, mt_tensor *w, mt_tensor *v, const mt_tensor *a, char jobv) {
  mt_tensor ac = {0};
  if (check_char(op, "jobvr", jobv, "NV") || check_square(op, a, "A") || colmajor_copy(op, &ac, a)) return -1;
  int n = cols(a), lda = ld(n), ldv = jobv == 'V' ? lda : 1, err = 0, lwork, rc;
  int esize = mt_dtypes[a->dtype].size;
  buffer parts = {0}, work = {0};
  rc = vectors_new(op, w, a, a->dtype, n, 2) || colmajor_new(op, v, a, a->dtype, jobv == 'V' ? n : 0, n) ||
       buffer_new(op, &parts, 2 * (int64_t)n, esize);
  const routines *f = lapack(a->dtype);
  real query, dummy;
  char *wr = parts.p, *wi = wr + (size_t)n * (size_t)esize;
  if (rc == 0) {
    f->geev("N", &jobv, &n, mt_data(&ac), &lda, wr, wi, &dummy, &(int){1}, mt_data(v), &ldv, &query, &(int){-1},
            &err, 1, 1);
    rc = workspace_new(op, &work, &lwork, a->dtype, &query);
  }
  int64_t batch = batch_of(a), per_a = per_matrix(&ac), per_v = per_matrix(v);
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->geev("N", &jobv, &n, item(&ac, i, per_a), &lda, wr, wi, &dummy, &(int){1}, item(v, i, per_v), &ldv, work.p,
            &lwork, &err, 1, 1);
    if (err) rc = lapack_error(op, "geev", err, a, i, "the QR algorithm failed to compute all the eigenvalues "
                               "(only those after %d converged)");
    char *row = item(w, i, 2 * (int64_t)n);
    for (int j = 0; j < n; j++) {
      memcpy(row + (size_t)(2 * j) * (size_t)esize, wr + (size_t)j * (size_t)esize, (size_t)esize);
      memcpy(row + (size_t)(2 * j + 1) * (size_t)esize, wi + (size_t)j * (size_t)esize, (size_t)esize);
    }
  }
  buffer_free(&parts);
  buffer_free(&work);
  mt_tensor_release(&ac);
  return rc ? -1 : 0;
}

/* ---- singular values ---- */

int mt_lapack_gesdd(const char *op, mt_tensor *u, mt_tensor *s, mt_tensor *vt, const mt_tensor *a, char jobz) {
  mt_tensor ac = {0};
  if (check_char(op, "jobz", jobz, "SAN") || check_matrix(op, a, "A", -1) || colmajor_copy(op, &ac, a)) return -1;
  int m = rows(a), n = cols(a), k = m < n ? m : n, lda = ld(m), err = 0, lwork, rc;
  int ucols = jobz == 'A' ? m : jobz == 'S' ? k : 0, vrows = jobz == 'A' ? n : jobz == 'S' ? k : 0;
  int ldu = ld(jobz == 'N' ? 1 : m), ldvt = ld(vrows);
  buffer work = {0}, iwork = {0};
  rc = vectors_new(op, s, a, a->dtype, k, 0) || colmajor_new(op, u, a, a->dtype, m, ucols) ||
       colmajor_new(op, vt, a, a->dtype, vrows, n) || buffer_new(op, &iwork, 8 * (int64_t)k, sizeof(int));
  const routines *f = lapack(a->dtype);
  real query;
  if (rc == 0) {
    f->gesdd(&jobz, &m, &n, mt_data(&ac), &lda, mt_data(s), mt_data(u), &ldu, mt_data(vt), &ldvt, &query,
             &(int){-1}, iwork.p, &err, 1);
    rc = workspace_new(op, &work, &lwork, a->dtype, &query);
  }
  int64_t batch = batch_of(a), per_a = per_matrix(&ac), per_u = per_matrix(u), per_v = per_matrix(vt);
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->gesdd(&jobz, &m, &n, item(&ac, i, per_a), &lda, item(s, i, k), item(u, i, per_u), &ldu, item(vt, i, per_v),
             &ldvt, work.p, &lwork, iwork.p, &err, 1);
    if (err) rc = lapack_error(op, "gesdd", err, a, i, "the SVD failed to converge (error %d)");
  }
  buffer_free(&work);
  buffer_free(&iwork);
  mt_tensor_release(&ac);
  return rc ? -1 : 0;
}

/* ---- Cholesky ---- */

int mt_lapack_potrf(const char *op, mt_tensor *c, const mt_tensor *a, char uplo) {
  if (check_char(op, "uplo", uplo, "UL") || check_square(op, a, "A") || colmajor_copy(op, c, a)) return -1;
  int n = cols(a), lda = ld(n), err = 0, esize = mt_dtypes[a->dtype].size;
  int64_t batch = batch_of(a), per = per_matrix(c);
  const routines *f = lapack(a->dtype);
  for (int64_t i = 0; i < batch; i++) {
    f->potrf(&uplo, &n, item(c, i, per), &lda, &err, 1);
    if (err) return lapack_error(op, "potrf", err, a, i, "the matrix is not positive definite (leading minor %d)");
    clear_other_triangle(item(c, i, per), n, esize, uplo);
  }
  return 0;
}

int mt_lapack_potrs(const char *op, mt_tensor *x, const mt_tensor *b, const mt_tensor *c, char uplo) {
  mt_tensor cc = {0};
  if (check_char(op, "uplo", uplo, "UL") || check_square(op, c, "the Cholesky factor") ||
      check_rhs(op, c, b, "B") || colmajor_copy(op, &cc, c) || colmajor_copy(op, x, b))
    return -1;
  int n = cols(c), k = cols(b), lda = ld(n), err = 0;
  int64_t batch = batch_of(c), per_c = per_matrix(&cc), per_b = per_matrix(x), rc = 0;
  const routines *f = lapack(c->dtype);
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->potrs(&uplo, &n, &k, item(&cc, i, per_c), &lda, item(x, i, per_b), &lda, &err, 1);
    if (err) rc = lapack_error(op, "potrs", err, c, i, "");
  }
  mt_tensor_release(&cc);
  return rc ? -1 : 0;
}

int mt_lapack_potri(const char *op, mt_tensor *r, const mt_tensor *c, char uplo) {
  if (check_char(op, "uplo", uplo, "UL") || check_square(op, c, "the Cholesky factor") || colmajor_copy(op, r, c))
    return -1;
  int n = cols(c), lda = ld(n), err = 0, esize = mt_dtypes[c->dtype].size;
  int64_t batch = batch_of(c), per = per_matrix(r);
  const routines *f = lapack(c->dtype);
  for (int64_t i = 0; i < batch; i++) {
    f->potri(&uplo, &n, item(r, i, per), &lda, &err, 1);
    if (err) return lapack_error(op, "potri", err, c, i, "the Cholesky factor is singular (diagonal element %d is "
                                 "zero)");
    mirror_triangle(item(r, i, per), n, esize, uplo);
  }
  return 0;
}

int mt_lapack_pstrf(const char *op, mt_tensor *c, mt_tensor *piv, const mt_tensor *a, char uplo, double tol) {
  if (check_char(op, "uplo", uplo, "UL") || check_square(op, a, "A") || colmajor_copy(op, c, a)) return -1;
  int n = cols(a), lda = ld(n), err = 0, rank, esize = mt_dtypes[a->dtype].size;
  int64_t batch = batch_of(a), per = per_matrix(c);
  buffer work = {0};
  if (vectors_new(op, piv, a, MT_INT32, n, 0) || buffer_new(op, &work, 2 * (int64_t)n, esize)) return -1;
  real t;
  if (a->dtype == MT_FLOAT32) t.f = (float)tol; else t.d = tol;
  const routines *f = lapack(a->dtype);
  for (int64_t i = 0; i < batch; i++) {
    f->pstrf(&uplo, &n, item(c, i, per), &lda, (int *)item(piv, i, n), &rank, &t, work.p, &err, 1);
    if (err < 0) { buffer_free(&work); return lapack_error(op, "pstrf", err, a, i, ""); }
    if (err) {
      char what[128];
      snprintf(what, sizeof what, "the matrix is rank deficient or not positive semidefinite (rank %%d of %d)", n);
      buffer_free(&work);
      return lapack_error(op, "pstrf", rank, a, i, what);
    }
    clear_other_triangle(item(c, i, per), n, esize, uplo);
  }
  buffer_free(&work);
  return 0;
}

/* ---- QR ---- */

int mt_lapack_geqrf(const char *op, mt_tensor *qr, mt_tensor *tau, const mt_tensor *a) {
  if (check_matrix(op, a, "A", -1) || colmajor_copy(op, qr, a)) return -1;
  int m = rows(a), n = cols(a), k = m < n ? m : n, lda = ld(m), err = 0, lwork;
  if (vectors_new(op, tau, a, a->dtype, k, 0)) return -1;
  const routines *f = lapack(a->dtype);
  real query;
  buffer work = {0};
  f->geqrf(&m, &n, mt_data(qr), &lda, mt_data(tau), &query, &(int){-1}, &err);
  if (workspace_new(op, &work, &lwork, a->dtype, &query)) return -1;
  int64_t batch = batch_of(a), per = per_matrix(qr), rc = 0;
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->geqrf(&m, &n, item(qr, i, per), &lda, item(tau, i, k), work.p, &lwork, &err);
    if (err) rc = lapack_error(op, "geqrf", err, a, i, "");
  }
  buffer_free(&work);
  return rc ? -1 : 0;
}

/* tau (..., k) with a's batch dims, k at most limit */
static int check_tau(const char *op, const mt_tensor *a, const mt_tensor *tau, int64_t limit, const char *limit_what) {
  char b[128];
  if (mt_device_of(tau) != MT_CPU || tau->dtype != a->dtype)
    return mt_fail("%s: tau must be a CPU tensor of the matrix's dtype (%s)", op, mt_dtypes[a->dtype].name);
  if (check_same_batch(op, a, tau, 1)) return -1;
  if (tau->shape[tau->ndim - 1] > limit)
    return mt_fail("%s: tau %s has more entries than %s (%lld)", op, mt_shape_str(tau, b, sizeof b), limit_what,
                   (long long)limit);
  return 0;
}

int mt_lapack_orgqr(const char *op, mt_tensor *q, const mt_tensor *a, const mt_tensor *tau) {
  mt_tensor tc = {0};
  char b[128];
  if (check_matrix(op, a, "A", -1) || check_tau(op, a, tau, cols(a), "A has columns")) return -1;
  if (rows(a) < cols(a))
    return mt_fail("%s: A %s must have at least as many rows as columns", op, mt_shape_str(a, b, sizeof b));
  if (colmajor_copy(op, q, a) || mt_contiguous(&tc, tau)) return -1;
  int m = rows(a), n = cols(a), k = (int)tau->shape[tau->ndim - 1], lda = ld(m), err = 0, lwork;
  const routines *f = lapack(a->dtype);
  real query;
  buffer work = {0};
  int64_t batch = batch_of(a), per = per_matrix(q), rc = 0;
  f->orgqr(&m, &n, &k, mt_data(q), &lda, mt_data(&tc), &query, &(int){-1}, &err);
  rc = workspace_new(op, &work, &lwork, a->dtype, &query);
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->orgqr(&m, &n, &k, item(q, i, per), &lda, item(&tc, i, k), work.p, &lwork, &err);
    if (err) rc = lapack_error(op, "orgqr", err, a, i, "");
  }
  buffer_free(&work);
  mt_tensor_release(&tc);
  return rc ? -1 : 0;
}

int mt_lapack_ormqr(const char *op, mt_tensor *r, const mt_tensor *a, const mt_tensor *tau, const mt_tensor *c,
                    char side, char trans) {
  mt_tensor ac = {0}, tc = {0};
  char sa[128], sc[128];
  if (check_char(op, "side", side, "LR") || check_char(op, "trans", trans, "NT") || check_matrix(op, a, "A", -1) ||
      check_matrix(op, c, "C", a->dtype) || check_same_batch(op, a, c, 2))
    return -1;
  int m = rows(c), n = cols(c), nq = side == 'L' ? m : n;
  if (rows(a) != nq)
    return mt_fail("%s: the reflectors %s must have %d rows to multiply %s from the %s", op,
                   mt_shape_str(a, sa, sizeof sa), nq, mt_shape_str(c, sc, sizeof sc), side == 'L' ? "left" : "right");
  if (check_tau(op, a, tau, cols(a) < nq ? cols(a) : nq, "the reflectors")) return -1;
  if (colmajor_copy(op, &ac, a) || mt_contiguous(&tc, tau) || colmajor_copy(op, r, c)) return -1;
  int k = (int)tau->shape[tau->ndim - 1], lda = ld(nq), ldc = ld(m), err = 0, lwork;
  const routines *f = lapack(a->dtype);
  real query;
  buffer work = {0};
  int64_t batch = batch_of(a), per_a = per_matrix(&ac), per_c = per_matrix(r), rc = 0;
  f->ormqr(&side, &trans, &m, &n, &k, mt_data(&ac), &lda, mt_data(&tc), mt_data(r), &ldc, &query, &(int){-1}, &err,
           1, 1);
  rc = workspace_new(op, &work, &lwork, a->dtype, &query);
  for (int64_t i = 0; i < batch && rc == 0; i++) {
    f->ormqr(&side, &trans, &m, &n, &k, item(&ac, i, per_a), &lda, item(&tc, i, k), item(r, i, per_c), &ldc, work.p,
             &lwork, &err, 1, 1);
    if (err) rc = lapack_error(op, "ormqr", err, a, i, "");
  }
  buffer_free(&work);
  mt_tensor_release(&ac);
  mt_tensor_release(&tc);
  return rc ? -1 : 0;
}
