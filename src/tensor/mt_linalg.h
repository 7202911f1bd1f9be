/* mt_linalg.h: matrix products (mm, mv, dot, bmm, matmul, outer and the
   add* forms), float32/float64 on OpenBLAS, half through float32, integers
   by a plain loop. Results are fresh contiguous tensors unless in place. */
#ifndef MT_LINALG_H
#define MT_LINALG_H

#include "mt_tensor.h"
#include "mt_ops.h"

/* The registry's products by op (src/ops/registry.h, the kernel column):
   the CPU's kernels in the dispatcher's table. mt_add_product is
   r = beta * input + alpha * product, as the add* functions below. */
int mt_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op);
int mt_add_product(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b, mt_op op,
                   double beta, double alpha, int inplace);

/* r: (M, N) = a (M, K) @ b (K, N) */
int mt_mm(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);
/* r: (M) = a (M, K) @ x (K) */
int mt_mv(mt_tensor *r, const mt_tensor *a, const mt_tensor *x);
/* r: 0-dim = sum(a * b), a and b 1-D of one size */
int mt_dot(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);
/* r: (B, M, N) = a (B, M, K) @ b (B, K, N) */
int mt_bmm(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);
/* PyTorch's matmul: dot, mv, mm, vector-matrix, or batched with the batch
   dims broadcast. */
int mt_matmul(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);
/* r: (M, N) = a (M) outer b (N) */
int mt_outer(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);

/* r = beta * input + alpha * product. Out of place, r is empty and input
   broadcasts to the product's shape; in place, r is input and must have
   the product's shape. With beta 0, input's values are ignored (NaN too).
   addmm: a (M, K), b (K, N); addmv: a (M, K), b (K); addr: a (M), b (N);
   baddbmm: a (B, M, K), b (B, K, N); addbmm: the same, summed over B. */
int mt_addmm(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
             double beta, double alpha, int inplace);
int mt_addmv(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
             double beta, double alpha, int inplace);
int mt_addr(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
            double beta, double alpha, int inplace);
int mt_baddbmm(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
               double beta, double alpha, int inplace);
int mt_addbmm(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
              double beta, double alpha, int inplace);

#endif
