/* ag_linalg.h: derivatives of the registry's products (src/ops/registry.h):
   what the dispatcher calls after the kernel, when an input carries
   autograd metadata. */
#ifndef MT_AG_LINALG_H
#define MT_AG_LINALG_H

#include "ag.h"

/* r = op(a, b), a product (mm, mv, dot, bmm, matmul, outer); matmul
   records as the product its shapes make it */
int mt_ag_record_product(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, mt_op op);
/* r = beta * input + alpha * op's product of a and b, out of place */
int mt_ag_record_add_product(mt_tensor *r, const mt_tensor *input, const mt_tensor *a, const mt_tensor *b,
                             mt_op op, double beta, double alpha);

#endif
