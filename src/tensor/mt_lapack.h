/* mt_lapack.h: factorizations, solves and decompositions of float32 and
   float64 matrices through LAPACK (OpenBLAS's s* and d* routines).
   Every kernel takes matrices in the last two dims of its inputs, a batch of
   them in the leading dims (the same batch dims for every input: the caller
   broadcasts), and fills empty result tensors on the CPU. Matrices come back
   in LAPACK's column-major layout (each one's transpose is contiguous), as
   Torch7's and PyTorch's do. Errors name op (the Lua function called) and,
   in a batch, the matrix at fault; a result the math forbids (a singular
   matrix for a solve, an indefinite one for Cholesky) is an error, never
   garbage. Derivatives live in Lua (lib/torch/linalg.lua), composed from
   the registry's differentiable ops. */
#ifndef MT_LAPACK_H
#define MT_LAPACK_H

#include "mt_tensor.h"

/* lu (..., n, n) packed L (unit diagonal) and U of a = P L U; piv (..., n)
   int64, 1-based rows swapped; info (batch) int64: 0, or the 1-based index
   of U's first zero diagonal element (a singular matrix is not an error
   here: its determinant is 0). */
int mt_lapack_getrf(const char *op, mt_tensor *lu, mt_tensor *piv, mt_tensor *info, const mt_tensor *a);
/* x (..., n, k) solving a x = b for a square a (..., n, n); lu and piv as
   getrf's (either may be NULL). */
int mt_lapack_gesv(const char *op, mt_tensor *x, mt_tensor *lu, mt_tensor *piv, const mt_tensor *a,
                   const mt_tensor *b);
/* x solving op(a) x = b for a triangular a: uplo 'U'/'L' (the triangle
   read), trans 'N'/'T', diag 'N'/'U' (unit diagonal, not read). */
int mt_lapack_trtrs(const char *op, mt_tensor *x, const mt_tensor *a, const mt_tensor *b, char uplo, char trans,
                    char diag);
/* x (..., n, k): least squares for a (..., m, n) of full rank with m >= n,
   the least-norm solution when m < n; b (..., m, k). */
int mt_lapack_gels(const char *op, mt_tensor *x, const mt_tensor *a, const mt_tensor *b);
/* The eigenvalues w (..., n), ascending, of the symmetric a (its uplo
   triangle read) and, for jobz 'V', the eigenvectors v (..., n, n) as
   columns (v may be NULL for 'N'). */
int mt_lapack_syevd(const char *op, mt_tensor *w, mt_tensor *v, const mt_tensor *a, char jobz, char uplo);
/* The eigenvalues of a general square a (n, n): w (n, 2), real and
   imaginary parts; for jobv 'V' the right eigenvectors v (n, n) in LAPACK's
   real form (a complex pair in two columns: real part, imaginary part). */
int mt_lapack_geev(const char *op, mt_tensor *w, mt_tensor *v, const mt_tensor *a, char jobv);
/* a (..., m, n) = u diag(s) vt, k = min(m, n): jobz 'S' gives u (m, k) and
   vt (k, n), 'A' u (m, m) and vt (n, n), 'N' s alone (u, vt unused). */
int mt_lapack_gesdd(const char *op, mt_tensor *u, mt_tensor *s, mt_tensor *vt, const mt_tensor *a, char jobz);
/* The Cholesky factor of a symmetric positive-definite a (its uplo triangle
   read): upper u with a = u' u, or lower l with a = l l'; the other
   triangle zero. */
int mt_lapack_potrf(const char *op, mt_tensor *c, const mt_tensor *a, char uplo);
/* x solving a x = b from a's Cholesky factor c (uplo says which). */
int mt_lapack_potrs(const char *op, mt_tensor *x, const mt_tensor *b, const mt_tensor *c, char uplo);
/* a's inverse from its Cholesky factor c, both triangles filled. */
int mt_lapack_potri(const char *op, mt_tensor *r, const mt_tensor *c, char uplo);
/* Cholesky with complete pivoting of a positive semidefinite a (n, n):
   p' a p = u' u (or l l'), piv (n) int32 1-based (p[piv[k]][k] = 1); tol <
   0 lets LAPACK choose. A rank below n is an error, as Torch7's. */
int mt_lapack_pstrf(const char *op, mt_tensor *c, mt_tensor *piv, const mt_tensor *a, char uplo, double tol);
/* a (..., m, n) as LAPACK's QR: r on and above the diagonal, the
   reflectors below it, and their scales tau (..., min(m, n)). */
int mt_lapack_geqrf(const char *op, mt_tensor *qr, mt_tensor *tau, const mt_tensor *a);
/* The (..., m, n) matrix of orthonormal columns that geqrf's reflectors
   (the first k = tau's length) make, m >= n >= k. */
int mt_lapack_orgqr(const char *op, mt_tensor *q, const mt_tensor *a, const mt_tensor *tau);
/* q c, q' c (side 'L') or c q, c q' (side 'R', trans 'T' for q'), q from
   geqrf's a (m, k) and tau (k) without forming it. */
int mt_lapack_ormqr(const char *op, mt_tensor *r, const mt_tensor *a, const mt_tensor *tau, const mt_tensor *c,
                    char side, char trans);

#endif
