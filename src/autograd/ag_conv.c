/* ag_conv.c: derivatives of conv2d, conv_transpose2d (the input adjoint)
   and the weight adjoint, each written with the other two as recording ops.

   With C the convolution, CT its input adjoint and CW its weight adjoint:
     y = C(x, w):   dx = CT(g, w)    dw = CW(x, g)
     z = CT(u, w):  du = C(g, w)     dw = CW(g, u)
     v = CW(x, u):  dx = CT(u, g)    du = C(x, g)
   and a bias (o for C, c for CT) gets g summed over batch and space.

   Node fields used: op (the kind), extra[0..6] (stride, padding before,
   dilation, groups). The rest of the geometry comes back from the saved
   operands' shapes and the incoming gradient's. */
#include "ag_conv.h"
#include "ag_expr.h"

enum { P_SH, P_SW, P_PH, P_PW, P_DH, P_DW, P_GROUPS };

static const char *const conv_names[] = {
  [MT_AG_CONV] = "ConvolutionBackward",
  [MT_AG_CONV_INPUT_GRAD] = "ConvTransposeBackward",
  [MT_AG_CONV_WEIGHT_GRAD] = "ConvWeightBackward",
};

/* the kind's kernel, without bias */
static int conv_run(mt_tensor *r, mt_ag_conv_kind kind, const mt_tensor *a, const mt_tensor *b, const mt_conv_geom *g) {
  if (kind == MT_AG_CONV) return mt_conv2d(r, a, b, NULL, g);
  if (kind == MT_AG_CONV_INPUT_GRAD) return mt_conv2d_input_grad(r, a, b, NULL, g);
  return mt_conv2d_weight_grad(r, NULL, a, b, g);
}

/* the geometry from x (n, c, h, w), w (o, c / groups, kh, kw), y (n, o, oh, ow) */
static mt_conv_geom geom_of(const mt_node *n, const int64_t *x, const int64_t *w, const int64_t *y) {
  const int64_t *p = n->extra;
  return (mt_conv_geom){x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], p[P_SH], p[P_SW], p[P_PH], p[P_PW],
                        p[P_DH], p[P_DW], p[P_GROUPS]};
}

/* the kind's op, recorded */
static mt_tensor ag_conv(mt_ag_conv_kind kind, const mt_tensor *a, const mt_tensor *b, const mt_conv_geom *g) {
  mt_tensor r = {0};
  if (ag_failed || !a->storage || !b->storage) { ag_failed = 1; return r; }
  if (conv_run(&r, kind, a, b, g) || mt_ag_record_conv(&r, kind, a, b, NULL, g)) {
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

static int conv_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_tensor *a, *b;
  if (mt_ag_saved(n, 0, &a) || mt_ag_saved(n, 1, &b)) return -1;
  ag_failed = 0;
  mt_tensor g = as_dtype(grad, a->dtype), da = {0}, db = {0}, dbias = {0};
  mt_conv_geom geo;
  if (!ag_failed) {
    if (n->op == MT_AG_CONV) {                    /* a = x, b = w, g like y */
      geo = geom_of(n, a->shape, b->shape, g.shape);
      if (n->next[0].node) da = ag_conv(MT_AG_CONV_INPUT_GRAD, &g, b, &geo);
      const int want_bias = n->nedges > 2 && n->next[2].node;
      if (n->next[1].node && want_bias && !ag_failed &&
          !(mt_ag_grad_enabled() && (mt_ag_requires_grad(a) || mt_ag_requires_grad(&g)))) {
        /* nothing to record: the weight and bias gradients in one pass over g */
        if (mt_conv2d_weight_grad(&db, &dbias, a, &g, &geo)) ag_failed = 1;
      } else if (n->next[1].node) {
        db = ag_conv(MT_AG_CONV_WEIGHT_GRAD, a, &g, &geo);
      }
    } else if (n->op == MT_AG_CONV_INPUT_GRAD) {  /* a = u (like y), b = w, g like x */
      geo = geom_of(n, g.shape, b->shape, a->shape);
      if (n->next[0].node) da = ag_conv(MT_AG_CONV, &g, b, &geo);
      if (n->next[1].node) db = ag_conv(MT_AG_CONV_WEIGHT_GRAD, &g, a, &geo);
    } else {                                      /* a = x, b = u (like y), g like w */
      geo = geom_of(n, a->shape, g.shape, b->shape);
      if (n->next[0].node) da = ag_conv(MT_AG_CONV_INPUT_GRAD, b, &g, &geo);
      if (n->next[1].node) db = ag_conv(MT_AG_CONV, a, &g, &geo);
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

int mt_ag_record_conv(mt_tensor *r, mt_ag_conv_kind kind, const mt_tensor *a, const mt_tensor *b,
                      const mt_tensor *bias, const mt_conv_geom *g) {
  if (!mt_ag_grad_enabled() || !mt_dtype_is_float(r->dtype) ||
      !(mt_ag_requires_grad(a) || mt_ag_requires_grad(b) || (bias && mt_ag_requires_grad(bias))))
    return 0;
  const mt_tensor *in[3] = {a, b, bias};
  const char *name = conv_names[kind];
  const int64_t params[] = {g->sh, g->sw, g->ph, g->pw, g->dh, g->dw, g->groups};
  mt_node *n = mt_ag_new_node_extra(name, conv_backward, bias ? 3 : 2, in, P_GROUPS + 1);
  if (!n) return mt_fail("%s: out of memory recording the graph", name);
  n->op = (int)kind;
  memcpy(n->extra, params, sizeof params);
  mt_ag_save(n, a, 0);
  mt_ag_save(n, b, 0);
  return mt_ag_attach(r, n);
}
