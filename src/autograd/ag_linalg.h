/* ag_linalg.h: derivatives of the matrix products (matmul in all its forms,
   mm, mv, dot, bmm, outer and the add* family). Call after the op computed
   r, only when an input has grad_meta. */
#ifndef MT_AG_LINALG_H
#define MT_AG_LINALG_H

#include "ag.h"

/* r = matmul(a, b) with PyTorch's rules (dot, mv, mm, vector @ matrix,
   batched with broadcast batch dims); also mv, dot and bmm, which are
   matmul on their shapes. */
int mt_ag_record_matmul(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);
/* r = outer(a, b) (ger) */
int mt_ag_record_outer(mt_tensor *r, const mt_tensor *a, const mt_tensor *b);

/* r = beta * input + alpha * product(a, b), out of place */
typedef enum { MT_AG_ADDMM, MT_AG_ADDMV, MT_AG_ADDR, MT_AG_BADDBMM, MT_AG_ADDBMM } mt_ag_addprod;
int mt_ag_record_addprod(mt_tensor *r, mt_ag_addprod kind, const mt_tensor *input, const mt_tensor *a,
                         const mt_tensor *b, double beta, double alpha);

#endif
