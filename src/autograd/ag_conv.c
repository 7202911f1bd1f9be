/* ag_conv.c: the derivatives of conv2d, conv_transpose2d (its input
   adjoint) and conv2d_weight (its weight adjoint), each written with the
   other two, called through the dispatcher (recorded under create_graph).

   With C the convolution, CT its input adjoint and CW its weight adjoint:
     y = C(x, w):   dx = CT(g, w)    dw = CW(x, g)
     z = CT(u, w):  du = C(g, w)     dw = CW(g, u)
     v = CW(x, u):  dx = CT(u, g)    du = C(x, g)
   and a bias (o for C, c for CT) gets g summed over batch and space.

   Node fields used: op, extra[0..6] (stride, padding before, dilation,
   groups). The rest of the geometry comes back from the saved operands'
   shapes and the incoming gradient's. */
#include <string.h>
#include "ag_nn.h"
#include "ag_expr.h"
#include "../ops/dispatch.h"

enum { P_SH, P_SW, P_PH, P_PW, P_DH, P_DW, P_GROUPS };

void ag_conv_pack(mt_node *n, const mt_nn_args *a) {
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

/* op (a, b) without bias, through the dispatcher */
static mt_tensor ag_conv(mt_op op, const mt_tensor *a, const mt_tensor *b, const mt_conv_geom *g) {
  mt_tensor r = {0};
  if (ag_failed || !a->storage || !b->storage) { ag_failed = 1; return r; }
  const mt_nn_args args = {.x = a, .w = b, .conv = g};
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
  mt_conv_geom geo;
  if (!ag_failed) {
    if (n->op == MT_OP_conv2d) {                    /* a = x, b = w, g like y */
      geo = geom_of(n, a->shape, b->shape, g.shape);
      if (n->next[0].node) da = ag_conv(MT_OP_conv_transpose2d, &g, b, &geo);
      const int want_bias = n->nedges > 2 && n->next[2].node;
      if (n->next[1].node && want_bias && !ag_failed &&
          !(mt_ag_grad_enabled() && (mt_ag_requires_grad(a) || mt_ag_requires_grad(&g)))) {
        /* nothing to record: the weight and bias gradients in one pass over g */
        const mt_nn_args args = {.x = a, .w = &g, .conv = &geo, .aux = &dbias};
        if (mt_call_nn(&db, MT_OP_conv2d_weight, &args)) ag_failed = 1;
      } else if (n->next[1].node) {
        db = ag_conv(MT_OP_conv2d_weight, a, &g, &geo);
      }
    } else if (n->op == MT_OP_conv_transpose2d) {  /* a = u (like y), b = w, g like x */
      geo = geom_of(n, g.shape, b->shape, a->shape);
      if (n->next[0].node) da = ag_conv(MT_OP_conv2d, &g, b, &geo);
      if (n->next[1].node) db = ag_conv(MT_OP_conv2d_weight, &g, a, &geo);
    } else {                                      /* a = x, b = u (like y), g like w */
      geo = geom_of(n, a->shape, g.shape, b->shape);
      if (n->next[0].node) da = ag_conv(MT_OP_conv_transpose2d, b, &g, &geo);
      if (n->next[1].node) db = ag_conv(MT_OP_conv2d, a, &g, &geo);
    }
    if (n->nedges > 2 && n->next[2].node && !dbias.storage && !ag_failed) dbias = ag_sum(&g, 1u << 0 | 1u << 2 | 1u << 3, 0);
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
