/* mt_optim_op.c: the registry's optimizer steps (MT_OPTIM_OPS in
   src/ops/registry.h): the entry point the dispatcher calls, expanded from
   the kernel column; the updates are in mt_optim.c. */
#include "mt_ops.h"

int mt_optim_op(mt_op op, const mt_optim_args *a) {
  switch (op) {
#define OPTIM(call, binding) call
#define OPC(name, kernel, E, ...) case MT_OP_##name: return kernel;
    MT_OPTIM_OPS(OPC, _)
#undef OPC
#undef OPTIM
  default: break;
  }
  return mt_fail("mt_optim_op: %s is not an optimizer step", op >= 0 && op < MT_NUM_OPS ? mt_op_names[op] : "?");
}
