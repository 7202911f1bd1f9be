/* mt_optim_op.c: the registry's optimizer steps (MT_OPTIM_OPS in
   src/ops/registry.h): the entry point the dispatcher calls, expanded from
   the kernel column; the updates are in mt_optim.c. */
#include "mt_ops.h"

int mt_optim_op(mt_op op, const mt_optim_args *a) {
  switch (op) {
#define OPTIM(call, binding) call
    MT_OPTIM_OPS(MT_KERNEL_CASE, _)
#undef OPTIM
  default: break;
  }
  return mt_not_in_family("mt_optim_op", op, "an optimizer step");
}
