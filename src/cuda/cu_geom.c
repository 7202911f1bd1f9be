/* cu_geom.c: the elementwise geometry of cu.h, built on the host. */
#include <string.h>
#include "cu.h"

int cu_fail(const char *op, cudaError_t e) {
  if (e == cudaSuccess) return 0;
  return mt_fail("%s: CUDA error: %s", op, cudaGetErrorString(e));
}

/* Dims are merged where every operand steps across them as one run (the
   inner dim's extent times its stride is the outer's stride); size-1 dims
   are dropped. A 0-dim or empty geometry keeps one dim. */
void cu_geom_init(cu_geom *g, int n, const mt_tensor *const *ops) {
  memset(g, 0, sizeof *g);
  g->nops = n;
  const mt_tensor *t0 = ops[0];
  g->numel = mt_numel(t0);
  int nd = 0;
  for (int d = 0; d < t0->ndim; d++) {
    if (t0->shape[d] == 1) continue;
    int merge = nd > 0;
    for (int k = 0; k < n && merge; k++) {
      int64_t es = mt_dtypes[ops[k]->dtype].size;
      merge = g->stride[k][nd - 1] == t0->shape[d] * ops[k]->stride[d] * es;
    }
    if (merge) {
      g->shape[nd - 1] *= t0->shape[d];
      for (int k = 0; k < n; k++) g->stride[k][nd - 1] = ops[k]->stride[d] * mt_dtypes[ops[k]->dtype].size;
    } else {
      g->shape[nd] = t0->shape[d];
      for (int k = 0; k < n; k++) g->stride[k][nd] = ops[k]->stride[d] * mt_dtypes[ops[k]->dtype].size;
      nd++;
    }
  }
  if (g->numel == 0) {                 /* nothing to walk */
    g->shape[0] = 0;
    nd = 1;
  } else if (nd == 0) {                /* one element */
    g->shape[0] = 1;
    nd = 1;
  }
  g->ndim = nd;
}
