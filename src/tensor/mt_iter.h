/* mt_iter.h: the one broadcasting iterator every elementwise op goes through.
   Operands share one shape (inputs are expanded views); dims are collapsed
   where memory allows, and the inner loop gets a flat run with byte strides. */
#ifndef MT_ITER_H
#define MT_ITER_H

#include "mt_tensor.h"

#define MT_ITER_MAX_OPERANDS 4
/* Below this many elements a loop stays on one thread: waking a team costs
   more than a few microseconds of work. */
#define MT_ITER_GRAIN 32768

/* data[i] points at operand i's first element of the run; strides[i] is its
   byte step; n the run length. */
typedef void (*mt_loop_fn)(char **data, const int64_t *strides, int64_t n, void *ctx);

typedef struct {
  int ndim;                                   /* after collapsing; dim 0 innermost */
  int noperands;
  int64_t numel;
  int64_t shape[MT_MAX_DIMS];
  int64_t strides[MT_MAX_DIMS][MT_ITER_MAX_OPERANDS];   /* bytes */
  char *base[MT_ITER_MAX_OPERANDS];
} mt_iter;

/* ops[0] is usually the output; all must have ops[0]'s shape. */
void mt_iter_init(mt_iter *it, int n, const mt_tensor *const *ops);
/* Runs fn over every element, splitting across threads above the grain
   unless serial is set (for kernels with state such as random draws). */
void mt_iter_run(const mt_iter *it, mt_loop_fn fn, void *ctx, int serial);

/* The same walk in square tiles of the two innermost dims (it->ndim >= 2):
   for copies between layouts that disagree on which dim is fastest, such as
   a transpose made contiguous. */
void mt_iter_run_tiled(const mt_iter *it, mt_loop_fn fn, void *ctx);

#endif
