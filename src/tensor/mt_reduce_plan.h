/* mt_reduce_plan.h: the words of the registry's reduction entries
   (RED(first, second, fin, result, signature) in src/ops/registry.h) and the
   table made from them, shared by the CPU's reductions (mt_reduce.c) and a
   device's (src/cuda/cu_reduce.cu), which read one table rather than each
   keeping a copy. Included by those two files only: the names are short. */
#ifndef MT_REDUCE_PLAN_H
#define MT_REDUCE_PLAN_H

#include "mt_ops.h"

/* The passes: the first six serve every dtype, the next four float dtypes;
   MAXABS and MINABS (norm's +-inf orders as one pass) are a device's only,
   the CPU picks them from MAX and MIN of |x|. MEDIAN, NORM and NONE are
   not passes: the selection of every element, norm's passes by its order,
   no second pass. */
enum {
  K_MEDIAN = -3, K_NORM = -2, K_NONE = -1,
  K_SUM, K_NANSUM, K_PROD, K_NONZERO, K_MAX, K_MIN,
  K_SQDEV, K_ABSSUM, K_POWSUM, K_EXPSUM,
  K_MAXABS, K_MINABS
};
/* what the first pass hands the second: nothing, the mean, the max (shift) */
enum { PARAM_NONE, PARAM_MEAN, PARAM_SHIFT };
/* how a state becomes a value */
enum { FIN_SAME, FIN_MEAN, FIN_VAR, FIN_STD, FIN_SQRT, FIN_ROOT, FIN_LSE, FIN_ANY, FIN_ALL };
/* the result's dtype, and the Lua call forms */
enum { OUT_SAME, OUT_WIDEN, OUT_FLOAT, OUT_TO_FLOAT, OUT_BOOL, OUT_INT64 };
enum { SIG_DIMS, SIG_VAR, SIG_NORM, SIG_NONE };

/* one reduction of the registry: its passes, its finish, its result and signature */
typedef struct { signed char first, second, fin, out, sig; } mt_red_entry;

/* the entry of reduction op (mt_op_is_reduce(op)) */
#ifdef __cplusplus
extern "C"
#endif
const mt_red_entry *mt_red_entry_of(mt_op op);

#endif
