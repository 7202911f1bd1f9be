/* mt_create.h: tensors made from a rule rather than data: the identity,
   arithmetic sequences (arange, range), linspace and logspace. */
#ifndef MT_CREATE_H
#define MT_CREATE_H

#include "mt_tensor.h"

/* n x m identity (ones on the main diagonal) */
int mt_eye(mt_tensor *r, int64_t n, int64_t m, int dtype);
/* start, start + step, ... up to end excluded (PyTorch's arange) */
int mt_arange(mt_tensor *r, double start, double end, double step, int dtype);
/* start, start + step, ... up to end included (Torch7's range) */
int mt_range(mt_tensor *r, double start, double end, double step, int dtype);
/* steps values evenly spaced from start to end, both included */
int mt_linspace(mt_tensor *r, double start, double end, int64_t steps, int dtype);
/* base ^ linspace(start, end, steps) */
int mt_logspace(mt_tensor *r, double start, double end, int64_t steps, double base, int dtype);

#endif
