/* mt_loss.c: the class negative log-likelihood of Torch7's ClassNLLCriterion
   without class weights, in closed form: the loss in one pass over the labels
   (checking them on the way) and its gradient in one more, where the general
   path (gather, reductions, a scatter, each a call of its own) takes a dozen.
   CPU only: the Lua side takes the general path for anything these decline. */
#include "mt_loss.h"
#include <math.h>
#include <string.h>

/* label i of target (1-based, as a double: whole or not) */
static double label_at(const mt_tensor *target, int64_t i) {
  const char *p = mt_data(target);
  switch (target->dtype) {
    case MT_INT64: return (double)((const int64_t *)p)[i];
    case MT_FLOAT32: return ((const float *)p)[i];
    default: return ((const double *)p)[i];
  }
}

/* sample i's class, 0-based, when the closed form takes its label: a whole number in
   1..c that is not the ignored class; -1 otherwise (a fraction, out of range, ignored:
   the general path says which) */
static int64_t class_of(const mt_tensor *target, int64_t i, int64_t c, int64_t ignore) {
  const double y = label_at(target, i);
  if (!(y >= 1 && y <= (double)c) || y != floor(y) || y == (double)ignore) return -1;
  return (int64_t)y - 1;
}

/* Whether these tensors are what the closed form reads: logp (N, C) of
   float32 or float64 and N labels of int64, float32 or float64, contiguous,
   both on the CPU. */
static int takes(const mt_tensor *logp, const mt_tensor *target) {
  return logp->ndim == 2 && logp->storage && target->storage && logp->storage->device == MT_CPU &&
         target->storage->device == MT_CPU && (logp->dtype == MT_FLOAT32 || logp->dtype == MT_FLOAT64) &&
         (target->dtype == MT_INT64 || target->dtype == MT_FLOAT32 || target->dtype == MT_FLOAT64) &&
         mt_numel(target) == logp->shape[0] && mt_is_contiguous(target);
}

int mt_class_nll(const mt_tensor *logp, const mt_tensor *target, int64_t ignore, int mean, double *loss) {
  if (!takes(logp, target)) return 0;
  const int64_t n = logp->shape[0], c = logp->shape[1], s0 = logp->stride[0], s1 = logp->stride[1];
  const char *base = mt_data(logp);
  double sum = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t k = class_of(target, i, c, ignore);
    if (k < 0) return 0;
    const int64_t at = i * s0 + k * s1;                   /* an element of logp: in bounds */
    sum += logp->dtype == MT_FLOAT32 ? ((const float *)base)[at] : ((const double *)base)[at];
  }
  *loss = -(mean && n > 0 ? sum / (double)n : sum);
  return 1;
}

int mt_class_nll_grad(mt_tensor *g, const mt_tensor *logp, const mt_tensor *target, int64_t ignore, int mean) {
  if (!takes(logp, target)) return 0;
  const int64_t n = logp->shape[0], c = logp->shape[1];
  for (int64_t i = 0; i < n; i++)                  /* every label checked before any memory is taken */
    if (class_of(target, i, c, ignore) < 0) return 0;
  if (mt_tensor_init(g, logp->dtype, 2, logp->shape)) return -1;
  char *out = mt_data(g);
  if (mt_numel(g) > 0) memset(out, 0, (size_t)mt_numel(g) * mt_dtypes[g->dtype].size);   /* the memory just allocated */
  const double value = mean ? -1.0 / (double)n : -1.0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t at = i * c + class_of(target, i, c, ignore);   /* checked above: in bounds */
    if (g->dtype == MT_FLOAT32) ((float *)out)[at] = (float)value;
    else ((double *)out)[at] = value;
  }
  return 1;
}
