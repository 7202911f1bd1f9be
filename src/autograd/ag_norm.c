/* ag_norm.c: the derivative of the fused normalisations. A plain backward
   runs the fused kernel (mt_norm_backward); under create_graph the same
   closed form is written with recording ops, so its own derivatives follow:

     xhat = (x - mean) * invstd, gh = gy * w, sums over one statistic's elements
     dx = invstd * (gh - mean(gh) - xhat * mean(gh * xhat))   (dx = invstd * gh
          when the statistics are constants)
     dw = sum over n and s of gy * xhat, db = sum over n and s of gy

   Node fields used: extra (the geometry (n, c, s, groups), whether the
   statistics are fixed, whether there is a weight), scalar (eps). Saved: x,
   the weight when there is one, the statistics (2, count): the registry's
   STATS. */
#include <string.h>
#include "ag_nn.h"
#include "ag_expr.h"

enum { P_N, P_C, P_S, P_GROUPS, P_FIXED, P_HAS_WEIGHT };

/* the temporaries of one composed backward, dropped together */
typedef struct {
  mt_tensor t[32];
  int n;
} temps;

static const mt_tensor *keep(temps *a, mt_tensor t) {
  a->t[a->n] = t;
  return &a->t[a->n++];
}

/* row i of the statistics, shaped (1, c, 1); no history */
static mt_tensor stat_row(const mt_tensor *stats, int64_t i, const int64_t *shape) {
  mt_tensor row = {0}, r = {0};
  if (ag_failed) return r;
  if (mt_select(&row, stats, 0, i) || mt_reshape(&r, &row, 3, shape)) ag_failed = 1;
  mt_tensor_release(&row);
  return r;
}

/* dx, dw, db (each when its pointer is not NULL) with recording ops; dw and
   db come out of size c */
static void composed(const mt_node *nd, const mt_tensor *g, const mt_tensor *x, const mt_tensor *w,
                     const mt_tensor *stats, mt_tensor *dx, mt_tensor *dw, mt_tensor *db) {
  const int64_t *p = nd->extra;
  const int64_t n = p[P_N], c = p[P_C], s = p[P_S], groups = p[P_GROUPS];
  const int64_t chan[3] = {n, c, s}, wshape[3] = {1, c, 1};
  /* x seen so that the dims in mask hold one statistic's elements */
  const int64_t grouped[3] = {n, groups ? groups : c, groups ? c / groups * s : s};
  const uint32_t chan_mask = 1u << 0 | 1u << 2, mask = groups ? 1u << 2 : chan_mask;
  const double size = (double)(groups ? c / groups * s : n * s);
  temps t = {.n = 0};
  const mt_tensor *xv = keep(&t, ag_as(x, 3, grouped)), *xc, *inv;
  if (p[P_FIXED]) {
    const mt_tensor *mean = keep(&t, stat_row(stats, 0, wshape));
    inv = keep(&t, stat_row(stats, 1, wshape));
    xc = keep(&t, ag_bin(MT_OP_sub, xv, mean));
  } else {
    const mt_tensor *mean = keep(&t, ag_bins(MT_OP_mul, keep(&t, ag_sum(xv, mask, 1)), 1 / size));
    xc = keep(&t, ag_bin(MT_OP_sub, xv, mean));
    const mt_tensor *var = keep(&t, ag_bins(MT_OP_mul, keep(&t, ag_sum(keep(&t, ag_bin(MT_OP_mul, xc, xc)), mask, 1)), 1 / size));
    inv = keep(&t, ag_un(MT_OP_rsqrt, keep(&t, ag_bins(MT_OP_add, var, nd->scalar))));
  }
  const mt_tensor *xhat = keep(&t, ag_bin(MT_OP_mul, xc, inv));
  const mt_tensor *gc = keep(&t, ag_as(g, 3, chan));
  if (dx) {
    const mt_tensor *gh = w ? keep(&t, ag_as(keep(&t, ag_bin(MT_OP_mul, gc, keep(&t, ag_as(w, 3, wshape)))), 3, grouped))
                            : keep(&t, ag_as(gc, 3, grouped));
    const mt_tensor *d = gh;
    if (!p[P_FIXED]) {
      const mt_tensor *mg = keep(&t, ag_bins(MT_OP_mul, keep(&t, ag_sum(gh, mask, 1)), 1 / size));
      const mt_tensor *ghx = keep(&t, ag_bin(MT_OP_mul, gh, xhat));
      const mt_tensor *mgx = keep(&t, ag_bins(MT_OP_mul, keep(&t, ag_sum(ghx, mask, 1)), 1 / size));
      d = keep(&t, ag_bin(MT_OP_sub, keep(&t, ag_bin(MT_OP_sub, gh, mg)), keep(&t, ag_bin(MT_OP_mul, xhat, mgx))));
    }
    *dx = ag_as(keep(&t, ag_bin(MT_OP_mul, d, inv)), x->ndim, x->shape);
  }
  if (dw) *dw = ag_sum(keep(&t, ag_bin(MT_OP_mul, gc, keep(&t, ag_as(xhat, 3, chan)))), chan_mask, 0);
  if (db) *db = ag_sum(gc, chan_mask, 0);
  for (int i = 0; i < t.n; i++) ag_drop(&t.t[i]);
}

int ag_norm_backward(mt_node *nd, const mt_tensor *grad, mt_tensor *gi) {
  const int64_t *p = nd->extra;
  const mt_tensor *x, *w = NULL, *stats;
  if (mt_ag_saved(nd, 0, &x) || (p[P_HAS_WEIGHT] && mt_ag_saved(nd, 1, &w)) ||
      mt_ag_saved(nd, p[P_HAS_WEIGHT] ? 2 : 1, &stats))
    return -1;
  ag_failed = 0;
  mt_tensor g = ag_cast(grad, x->dtype), d[3] = {{0}};
  mt_tensor *want[3];
  for (int i = 0; i < 3; i++) want[i] = nd->next[i].node ? &d[i] : NULL;
  if (mt_ag_grad_enabled()) {
    composed(nd, &g, x, w, stats, want[0], want[1], want[2]);
  } else if (!ag_failed) {
    const mt_norm_geom geo = {nd->name, p[P_N], p[P_C], p[P_S], p[P_GROUPS]};
    if (mt_norm_backward(want[0], want[1], want[2], &g, x, stats, w, &geo, (int)p[P_FIXED])) ag_failed = 1;
  }
  ag_drop(&g);
  for (int i = 0; i < 3; i++) {
    if (!want[i]) continue;
    /* dw and db (c) go back to the weight's and bias's own shapes */
    mt_tensor r = i ? ag_as(&d[i], nd->in_ndim[i], nd->in_shape[i]) : d[i];
    if (i) ag_drop(&d[i]);
    if (ag_failed) ag_drop(&r);
    else ag_finish(nd, i, &r, &gi[i]);
  }
  return ag_done();
}

void ag_norm_pack(mt_node *n, const mt_nn_args *a) {
  const mt_norm_geom *g = a->norm;
  /* batch norm out of training normalises with constants, the running statistics */
  const int64_t params[] = {g->n, g->c, g->s, g->groups, !g->groups && !a->flag, a->w != NULL};
  memcpy(n->extra, params, sizeof params);
  n->scalar = a->eps;
}
