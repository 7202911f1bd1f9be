/* ag_spatial.c: the derivatives of the resampling maps, of im2col /
   col2im (unfold / fold) and of avg_pool3d / its adjoint: a map's derivative is its adjoint and the
   adjoint's the map, called through the dispatcher, so that create_graph
   records the pair again and higher orders follow.

   Node fields used. Resampling: op, extra (the kind, the flags, then a, b,
   c for h and w), scalar and scalar2 (the scale factors); the forward map's
   input plane is the input's (a map) or the gradient's (the adjoint).
   im2col / col2im: op, extra (kernel, dilation, padding, stride, each h then
   w); the image (n, c, h, w) is the input (im2col) or the gradient
   (col2im). */
#include <string.h>
#include "ag_nn.h"
#include "ag_expr.h"
#include "../ops/dispatch.h"

/* ---- the resampling maps ---- */
enum { R_KIND, R_FLAGS, R_A, R_B = R_A + 2, R_C = R_B + 2 };

void ag_resample_pack(mt_node *n, const mt_nn_args *a) {
  const mt_resample *rs = a->rs;
  const int64_t params[] = {rs->kind, rs->flags, rs->a[0], rs->a[1], rs->b[0], rs->b[1], rs->c[0], rs->c[1]};
  memcpy(n->extra, params, sizeof params);
  n->scalar = rs->scale_factor[0];
  n->scalar2 = rs->scale_factor[1];
}

static mt_resample resample_of(const mt_node *n) {
  const int64_t *p = n->extra;
  return (mt_resample){(int)p[R_KIND], (int)p[R_FLAGS], {p[R_A], p[R_A + 1]}, {p[R_B], p[R_B + 1]},
                       {p[R_C], p[R_C + 1]}, {n->scalar, n->scalar2}};
}

int ag_resample_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_resample rs = resample_of(n);
  const int adjoint = n->op != MT_OP_resample_adjoint;   /* a map's gradient is its adjoint */
  if (rs.kind < 0 || rs.kind > MT_RS_CIRCULAR)
    return mt_fail("%s: bad resampling kind %d", n->name, rs.kind);
  const mt_nn_args args = {.x = grad, .rs = &rs, .pool = adjoint ? n->in_shape[0] + n->in_ndim[0] - 2 : NULL};
  mt_tensor d = {0};
  if (mt_call_nn(&d, adjoint ? MT_OP_resample_adjoint : mt_resample_ops[rs.kind], &args)) {
    ag_drop(&d);
    return -1;
  }
  ag_failed = 0;
  ag_finish(n, 0, &d, &gi[0]);
  return ag_done();
}

/* ---- im2col / col2im ---- */
enum { P_KH, P_KW, P_DH, P_DW, P_PH, P_PW, P_SH, P_SW };

void ag_im2col_pack(mt_node *n, const mt_nn_args *a) {
  const mt_conv_geom *g = a->conv;
  const int64_t params[] = {g->kh, g->kw, g->dh, g->dw, g->ph, g->pw, g->sh, g->sw};
  memcpy(n->extra, params, sizeof params);
}

int ag_im2col_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const int64_t *p = n->extra, k[2] = {p[P_KH], p[P_KW]}, d[2] = {p[P_DH], p[P_DW]};
  const int64_t pad[2] = {p[P_PH], p[P_PW]}, s[2] = {p[P_SH], p[P_SW]};
  const int fold = n->op == MT_OP_col2im;
  mt_conv_geom g;
  if (mt_unfold_geom_make(&g, n->name, fold ? grad->shape : n->in_shape[0], k, d, pad, s)) return -1;
  const mt_nn_args args = {.x = grad, .conv = &g};
  mt_tensor r = {0};
  if (mt_call_nn(&r, fold ? MT_OP_im2col : MT_OP_col2im, &args)) {
    ag_drop(&r);
    return -1;
  }
  ag_failed = 0;
  ag_finish(n, 0, &r, &gi[0]);
  return ag_done();
}

/* ---- avg_pool3d and its adjoint ---- */
enum { V_POOL, V_IN = 9, V_FLAGS = 12 };   /* kernel, stride, padding; the input volume; the flags */

void ag_avg_pool3d_pack(mt_node *n, const mt_nn_args *a) {
  int64_t *p = n->extra;
  memcpy(p, a->pool, sizeof(int64_t) * 9);
  /* the input volume: the forward's input's, or the one the adjoint was given */
  const int64_t *in = n->op == MT_OP_avg_pool3d ? a->x->shape + 2 : a->pool + 9;
  memcpy(p + V_IN, in, sizeof(int64_t) * 3);
  p[V_FLAGS] = a->flag;
}

int ag_avg_pool3d_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const int64_t *p = n->extra;
  const int adjoint = n->op == MT_OP_avg_pool3d;   /* the map's gradient is its adjoint, and back */
  const mt_nn_args args = {.x = grad, .pool = p, .flag = (int)p[V_FLAGS]};
  mt_tensor d = {0};
  if (mt_call_nn(&d, adjoint ? MT_OP_avg_pool3d_adjoint : MT_OP_avg_pool3d, &args)) {
    ag_drop(&d);
    return -1;
  }
  ag_failed = 0;
  ag_finish(n, 0, &d, &gi[0]);
  return ag_done();
}
