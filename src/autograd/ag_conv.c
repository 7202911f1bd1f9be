/* ag_conv.c: the derivatives of conv2d, conv_transpose2d (its input
   adjoint) and conv2d_weight (its weight adjoint), each written with the
   other two, called through the dispatcher (recorded under create_graph);
   and the same for conv3d, conv_transpose3d and conv3d_weight.

   With C the convolution, CT its input adjoint and CW its weight adjoint:
     y = C(x, w):   dx = CT(g, w)    dw = CW(x, g)
     z = CT(u, w):  du = C(g, w)     dw = CW(g, u)
     v = CW(x, u):  dx = CT(u, g)    du = C(x, g)
   and a bias (o for C, c for CT) gets g summed over batch and space.

   Node fields used: op, extra[0..6] (stride, padding before, dilation,
   groups; 3-D: extra[0..9], each t, h, w). The rest of the geometry comes
   back from the saved operands' shapes and the incoming gradient's. */
#include <string.h>
#include "ag_nn.h"
#include "ag_expr.h"
#include "../ops/dispatch.h"

enum { P_SH, P_SW, P_PH, P_PW, P_DH, P_DW, P_GROUPS };
enum { Q_S = 0, Q_P = 3, Q_D = 6, Q_GROUPS = 9 };   /* the 3-D ones: stride, padding, dilation (t, h, w) */

static int is_3d(int op) { return op == MT_OP_conv3d || op == MT_OP_conv_transpose3d || op == MT_OP_conv3d_weight; }

void ag_conv_pack(mt_node *n, const mt_nn_args *a) {
  if (is_3d(n->op)) {
    const mt_conv3d_geom *g = a->conv3;
    const int64_t params[] = {g->st, g->sh, g->sw, g->pt, g->ph, g->pw, g->dt, g->dh, g->dw, g->groups};
    memcpy(n->extra, params, sizeof params);
    return;
  }
  const mt_conv_geom *g = a->conv;
  const int64_t params[] = {g->sh, g->sw, g->ph, g->pw, g->dh, g->dw, g->groups};
  memcpy(n->extra, params, sizeof params);
}

/* the geometry from x (n, c, h, w), w (o, c / groups, kh, kw), y (n, o, oh, ow) */
static mt_conv_geom geom_of(const mt_node *n, const int64_t *x, const int64_t *w, const int64_t *y) {
  const int64_t *p = n->extra;
  return (mt_conv_geom){x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], p[P_SH], p[P_SW], p[P_PH], p[P_PW],
                        p[P_DH], p[P_DW], p[P_GROUPS]};
}

/* the 3-D geometry from x (n, c, t, h, w), w (o, c / groups, kt, kh, kw), y (n, o, ot, oh, ow) */
static mt_conv3d_geom geom3_of(const mt_node *n, const int64_t *x, const int64_t *w, const int64_t *y) {
  const int64_t *p = n->extra;
  return (mt_conv3d_geom){x[0], x[1], x[2], x[3], x[4], w[0], w[2], w[3], w[4], y[2], y[3], y[4],
                          p[Q_S], p[Q_S + 1], p[Q_S + 2], p[Q_P], p[Q_P + 1], p[Q_P + 2],
                          p[Q_D], p[Q_D + 1], p[Q_D + 2], p[Q_GROUPS]};
}

/* one of the geometries: g for the 2-D ops, g3 for the 3-D ones */
typedef struct {
  const mt_conv_geom *g;
  const mt_conv3d_geom *g3;
} any_geom;

/* op (a, b) without bias, through the dispatcher */
static mt_tensor ag_conv(mt_op op, const mt_tensor *a, const mt_tensor *b, const any_geom *geo) {
  mt_tensor r = {0};
  if (ag_failed || !a->storage || !b->storage) { ag_failed = 1; return r; }
  const mt_nn_args args = {.x = a, .w = b, .conv = geo->g, .conv3 = geo->g3};
  if (mt_call_nn(&r, op, &args)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}

/* a gradient arriving in another dtype is cast to the operands' first */
static mt_tensor as_dtype(const mt_tensor *g, int dtype) {
  mt_tensor r = {0};
  if (g->dtype == dtype) mt_ag_alias(&r, g);
  else r = ag_cast(g, dtype);
  return r;
}

int ag_conv_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *a, *b;
  if (mt_ag_saved(n, 0, &a) || mt_ag_saved(n, 1, &b)) return -1;
  ag_failed = 0;
  mt_tensor g = as_dtype(grad, a->dtype), da = {0}, db = {0}, dbias = {0};
  const int three = is_3d(n->op);
  /* the family's forward, input adjoint and weight adjoint */
  const mt_op forward = three ? MT_OP_conv3d : MT_OP_conv2d;
  const mt_op transpose = three ? MT_OP_conv_transpose3d : MT_OP_conv_transpose2d;
  const mt_op weight = three ? MT_OP_conv3d_weight : MT_OP_conv2d_weight;
  mt_conv_geom geo2;
  mt_conv3d_geom geo3;
  const any_geom geo = {three ? NULL : &geo2, three ? &geo3 : NULL};
  /* x, w and y's shapes set the geometry */
#define SET_GEOM(x, w, y) (three ? (void)(geo3 = geom3_of(n, x, w, y)) : (void)(geo2 = geom_of(n, x, w, y)))
  if (!ag_failed) {
    if (n->op == (int)forward) {                     /* a = x, b = w, g like y */
      SET_GEOM(a->shape, b->shape, g.shape);
      if (n->next[0].node) da = ag_conv(transpose, &g, b, &geo);
      const int want_bias = n->nedges > 2 && n->next[2].node;
      if (n->next[1].node && want_bias && !ag_failed &&
          !(mt_ag_grad_enabled() && (mt_ag_requires_grad(a) || mt_ag_requires_grad(&g)))) {
        /* nothing to record: the weight and bias gradients in one pass over g */
        const mt_nn_args args = {.x = a, .w = &g, .conv = geo.g, .conv3 = geo.g3, .aux = &dbias};
        if (mt_call_nn(&db, weight, &args)) ag_failed = 1;
      } else if (n->next[1].node) {
        db = ag_conv(weight, a, &g, &geo);
      }
    } else if (n->op == (int)transpose) {            /* a = u (like y), b = w, g like x */
      SET_GEOM(g.shape, b->shape, a->shape);
      if (n->next[0].node) da = ag_conv(forward, &g, b, &geo);
      if (n->next[1].node) db = ag_conv(weight, &g, a, &geo);
    } else {                                      /* a = x, b = u (like y), g like w */
      SET_GEOM(a->shape, g.shape, b->shape);
      if (n->next[0].node) da = ag_conv(transpose, b, &g, &geo);
      if (n->next[1].node) db = ag_conv(forward, a, &g, &geo);
    }
#undef SET_GEOM
    /* the bias: g summed over the batch and every spatial dim */
    const uint32_t dims = three ? 1u << 0 | 1u << 2 | 1u << 3 | 1u << 4 : 1u << 0 | 1u << 2 | 1u << 3;
    if (n->nedges > 2 && n->next[2].node && !dbias.storage && !ag_failed) dbias = ag_sum(&g, dims, 0);
  }
  ag_drop(&g);
  if (ag_failed) {
    ag_drop(&da); ag_drop(&db); ag_drop(&dbias);
    return ag_done();
  }
  if (da.storage) ag_finish(n, 0, &da, &gi[0]);
  if (db.storage) ag_finish(n, 1, &db, &gi[1]);
  if (dbias.storage) ag_finish(n, 2, &dbias, &gi[2]);
  return ag_done();
}
