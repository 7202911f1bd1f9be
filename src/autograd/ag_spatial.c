/* ag_spatial.c: derivatives of the resampling maps and of unfold / fold,
   each the other of its pair (see ag_spatial.h), recorded again under
   create_graph.

   Node fields used. Resampling: op (kind * 2 + adjoint), extra (flags,
   then a, b, c for h and w), scalar and scalar2 (the scale factors); the
   forward map's input plane is the input's (a map) or the gradient's (an
   adjoint). Unfold / fold: op (fold), extra (kernel, dilation, padding,
   stride, each h then w); the image (n, c, h, w) is the input (unfold) or
   the gradient (fold). */
#include "ag_spatial.h"
#include "ag_expr.h"

/* A one-input node for x -> r, op and its nparams integer parameters in its
   extra words, or NULL with *rc = 0 when nothing is to be recorded. */
static mt_node *new_node(mt_tensor *r, const mt_tensor *x, const char *name, mt_backward_fn fn, int op,
                         const int64_t *params, size_t nparams, int *rc) {
  *rc = 0;
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return NULL;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node_extra(name, fn, 1, in, nparams);
  if (!n) { *rc = mt_fail("%s: out of memory recording the graph", name); return NULL; }
  n->op = op;
  memcpy(n->extra, params, sizeof *params * nparams);
  return n;
}

static mt_resample resample_of(const mt_node *n) {
  const int64_t *p = n->extra;
  return (mt_resample){n->op / 2, (int)p[0], {p[1], p[2]}, {p[3], p[4]}, {p[5], p[6]}, {n->scalar, n->scalar2}};
}

/* the map (adjoint 0) or its transpose for input plane in, recorded */
static mt_tensor ag_resample(const mt_tensor *x, const mt_resample *rs, int adjoint, const int64_t *in) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_resample_apply(&r, x, rs, adjoint, in) || mt_ag_record_resample(&r, x, rs, adjoint)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}

static int resample_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const mt_resample rs = resample_of(n);
  ag_failed = 0;
  mt_tensor d = {0};
  if (n->op % 2) d = ag_resample(grad, &rs, 0, NULL);
  else d = ag_resample(grad, &rs, 1, n->in_shape[0] + n->in_ndim[0] - 2);
  if (!ag_failed) ag_finish(n, 0, &d, &gi[0]);
  return ag_done();
}

int mt_ag_record_resample(mt_tensor *r, const mt_tensor *x, const mt_resample *rs, int adjoint) {
  static const char *const names[] = {
    [MT_RS_AVG_POOL] = "AvgPool2DBackward", [MT_RS_ADAPTIVE_AVG] = "AdaptiveAvgPool2DBackward",
    [MT_RS_REFLECT] = "ReflectionPad2DBackward", [MT_RS_REPLICATE] = "ReplicationPad2DBackward",
    [MT_RS_NEAREST] = "UpsampleNearest2DBackward", [MT_RS_BILINEAR] = "UpsampleBilinear2DBackward",
    [MT_RS_CIRCULAR] = "CircularPad2DBackward",
  };
  const int64_t params[] = {rs->flags, rs->a[0], rs->a[1], rs->b[0], rs->b[1], rs->c[0], rs->c[1]};
  int rc;
  mt_node *n = new_node(r, x, adjoint ? "ResampleAdjointBackward" : names[rs->kind], resample_backward,
                        rs->kind * 2 + (adjoint != 0), params, sizeof params / sizeof *params, &rc);
  if (!n) return rc;
  n->scalar = rs->scale_factor[0];
  n->scalar2 = rs->scale_factor[1];
  return mt_ag_attach(r, n);
}

/* ---- unfold / fold ---- */
enum { P_KH, P_KW, P_DH, P_DW, P_PH, P_PW, P_SH, P_SW };

static mt_tensor ag_im2col(const mt_tensor *x, const mt_conv_geom *g, int fold) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if ((fold ? mt_col2im(&r, x, g) : mt_im2col(&r, x, g)) || mt_ag_record_im2col(&r, x, g, fold)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}

static int im2col_backward(mt_node *n, const mt_tensor *grad, mt_tensor *gi) {
  const int64_t *p = n->extra, k[2] = {p[P_KH], p[P_KW]}, d[2] = {p[P_DH], p[P_DW]};
  const int64_t pad[2] = {p[P_PH], p[P_PW]}, s[2] = {p[P_SH], p[P_SW]};
  mt_conv_geom g;
  if (mt_unfold_geom_make(&g, n->name, n->op ? grad->shape : n->in_shape[0], k, d, pad, s)) return -1;
  ag_failed = 0;
  mt_tensor r = ag_im2col(grad, &g, !n->op);
  if (!ag_failed) ag_finish(n, 0, &r, &gi[0]);
  return ag_done();
}

int mt_ag_record_im2col(mt_tensor *r, const mt_tensor *x, const mt_conv_geom *g, int fold) {
  const int64_t params[] = {g->kh, g->kw, g->dh, g->dw, g->ph, g->pw, g->sh, g->sw};
  int rc;
  mt_node *n = new_node(r, x, fold ? "Col2ImBackward" : "Im2ColBackward", im2col_backward, fold != 0, params,
                        P_SW + 1, &rc);
  return n ? mt_ag_attach(r, n) : rc;
}
