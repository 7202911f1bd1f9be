/* mt_loss.h: closed forms of losses that Torch7's criteria compute in one
   pass (mt_loss.c). */
#ifndef MT_LOSS_H
#define MT_LOSS_H
#include "mt_tensor.h"

/* Torch7's ClassNLLCriterion without class weights: *loss = -(sum or mean
   over i) logp[i, target[i]] for log-probabilities logp (N, C) and 1-based
   labels target (N elements). Returns 1 with *loss set; 0 when the closed
   form does not take these (off the CPU, other dtypes or layouts, a label
   that is a fraction, out of 1..C or equal to ignore: the general path
   handles or refuses them); never fails. */
int mt_class_nll(const mt_tensor *logp, const mt_tensor *target, int64_t ignore, int mean, double *loss);
/* Its gradient: g (N, C) of logp's dtype, zero but -1/N (mean) or -1 at each
   sample's label. Returns 1 with g made; 0 when it does not take these (as
   mt_class_nll: nothing is made); -1 out of memory. */
int mt_class_nll_grad(mt_tensor *g, const mt_tensor *logp, const mt_tensor *target, int64_t ignore, int mean);

#endif
