/* ag_ops.c: the recording ops that derivatives are written with (ag_expr.h),
   and the derivatives of views, expand, casts and mm. The
   derivatives are written with recording ops, so with create_graph the
   backward pass builds a graph of its own and higher-order gradients come
   for free. The elementwise ops' derivatives are in the registry
   (src/ops/registry.h), expanded by ag_pointwise.c. */
#include <math.h>
#include <string.h>
#include "ag.h"
#include "ag_shape.h"
#include "ag_expr.h"
#include "../ops/dispatch.h"
#include "../tensor/mt_reduce.h"

/* ---- recording ops for derivative formulas ----
   Each returns a fresh tensor; after a failure every later one is empty
   and the backward function reports the first error. */
_Thread_local int ag_failed;

void ag_drop(mt_tensor *t) {
  mt_ag_meta_release(t->grad_meta);
  t->grad_meta = NULL;
  mt_tensor_release(t);
}

int ag_any_requires_grad(const mt_tensor *a, const mt_tensor *b) {
  return mt_ag_grad_enabled() && ((a && mt_ag_requires_grad(a)) || (b && mt_ag_requires_grad(b)));
}

mt_tensor ag_binop(mt_op op, const mt_operand *a, const mt_operand *b) {
  mt_tensor r = {0};
  if (ag_failed || (a->t && !a->t->storage) || (b->t && !b->t->storage)) { ag_failed = 1; return r; }
  if (mt_call_binary(&r, a, b, op, 1, 0, MT_FLOAT32)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}
mt_tensor ag_bin(mt_op op, const mt_tensor *a, const mt_tensor *b) {
  mt_operand oa = {a, 0, 0}, ob = {b, 0, 0};
  return ag_binop(op, &oa, &ob);
}
mt_tensor ag_bins(mt_op op, const mt_tensor *a, double s) {   /* a op s */
  mt_operand oa = {a, 0, 0}, ob = {NULL, s, 0};
  return ag_binop(op, &oa, &ob);
}
mt_tensor ag_sbin(mt_op op, double s, const mt_tensor *b) {   /* s op b */
  mt_operand oa = {NULL, s, 0}, ob = {b, 0, 0};
  return ag_binop(op, &oa, &ob);
}
mt_tensor ag_un(mt_op op, const mt_tensor *x) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_call_unary(&r, (mt_tensor *)x, op, 0, MT_FLOAT32)) { ag_drop(&r); ag_failed = 1; }
  return r;
}
mt_tensor ag_reshape(const mt_tensor *x, int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_reshape(&r, x, ndim, shape) || mt_ag_record_view(&r, x)) { ag_drop(&r); ag_failed = 1; }
  return r;
}
mt_tensor ag_transpose(const mt_tensor *x, int d0, int d1) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_transpose(&r, x, d0, d1) || mt_ag_record_transpose(&r, x, d0, d1)) { ag_drop(&r); ag_failed = 1; }
  return r;
}
mt_tensor ag_reduce(mt_op op, const mt_tensor *x, uint32_t mask, int keepdim, double param) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_call_reduce(&r, x, op, mask, keepdim, -1, param, MT_FLOAT32)) {
    ag_drop(&r);
    ag_failed = 1;
  }
  return r;
}
mt_tensor ag_sum(const mt_tensor *x, uint32_t mask, int keepdim) { return ag_reduce(MT_OP_sum, x, mask, keepdim, 0); }
mt_tensor ag_cast(const mt_tensor *x, int dtype) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (x->dtype == dtype) { mt_ag_alias(&r, x); return r; }
  if (mt_call_cast(&r, x, dtype)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

mt_tensor ag_expand(const mt_tensor *x, int ndim, const int64_t *shape) {
  mt_tensor r = {0};
  if (ag_failed || !x->storage) { ag_failed = 1; return r; }
  if (mt_expand(&r, x, ndim, shape) || mt_ag_record_expand(&r, x)) { ag_drop(&r); ag_failed = 1; }
  return r;
}

/* g summed over the dims broadcasting added, back to (ndim, shape). */
mt_tensor ag_sum_to(const mt_tensor *g, int ndim, const int64_t *shape) {
  uint32_t mask = 0;
  int lead = g->ndim - ndim;
  for (int d = 0; d < g->ndim; d++)
    if (d < lead || (shape[d - lead] == 1 && g->shape[d] != 1)) mask |= 1u << d;
  if (!mask) { mt_tensor r = {0}; mt_ag_alias(&r, g); return r; }
  mt_tensor s = ag_sum(g, mask, 1);
  mt_tensor r = ag_reshape(&s, ndim, shape);
  ag_drop(&s);
  return r;
}

/* The gradient for input i in its own shape and dtype; takes g. */
void ag_finish(mt_node *n, int i, mt_tensor *g, mt_tensor *out) {
  mt_tensor s = ag_sum_to(g, n->in_ndim[i], n->in_shape[i]);
  ag_drop(g);
  *out = ag_cast(&s, n->in_dtype[i]);
  ag_drop(&s);
}

int ag_done(void) {
  if (!ag_failed) return 0;
  ag_failed = 0;
  const char *e = mt_error();
  return e[0] ? -1 : mt_fail("backward: a derivative failed");
}

/* ---- views, expand, casts ---- */
static int view_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  mt_tensor t = ag_reshape(g, n->in_ndim[0], n->in_shape[0]);
  gi[0] = ag_cast(&t, n->in_dtype[0]);
  ag_drop(&t);
  return ag_done();
}

static int expand_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  mt_tensor t = {0};
  mt_ag_alias(&t, g);
  ag_finish(n, 0, &t, &gi[0]);
  return ag_done();
}

static int transpose_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  gi[0] = ag_transpose(g, n->dims[0], n->dims[1]);
  return ag_done();
}

/* A one-input node named name with backward fn, attached to r when x
   requires grad in grad mode. */
static int ag_record_one(mt_tensor *r, const mt_tensor *x, const char *name, mt_backward_fn fn) {
  if (!ag_any_requires_grad(x, NULL) || !mt_dtype_is_float(r->dtype)) return 0;
  const mt_tensor *in[1] = {x};
  mt_node *n = mt_ag_new_node(name, fn, 1, in);
  if (!n) return mt_fail("%s: out of memory recording the graph", name);
  return mt_ag_attach(r, n);
}

int mt_ag_record_view(mt_tensor *r, const mt_tensor *x) { return ag_record_one(r, x, "ViewBackward", view_backward); }
int mt_ag_record_expand(mt_tensor *r, const mt_tensor *x) { return ag_record_one(r, x, "ExpandBackward", expand_backward); }
/* x's dtype and device (dims: the device type and index); a move between
   devices is itself recorded under create_graph */
static int to_backward(mt_node *n, const mt_tensor *g, mt_tensor *gi) {
  ag_failed = 0;
  mt_tensor t = ag_cast(g, n->in_dtype[0]);
  if (!ag_failed && (mt_device_of(&t) != n->dims[0] || mt_device_index_of(&t) != n->dims[1])) {
    mt_tensor m = {0};
    if (mt_call_to(&m, &t, t.dtype, n->dims[0], n->dims[1], "to")) {
      ag_drop(&m);
      ag_failed = 1;
    }
    ag_drop(&t);
    t = m;
  }
  gi[0] = t;
  return ag_done();
}

/* r = x in another dtype or on another device */
int mt_ag_record_cast(mt_tensor *r, const mt_tensor *x) {
  if (ag_record_one(r, x, "ToCopyBackward", to_backward)) return -1;
  mt_ag_meta *m = r->grad_meta;
  if (m && m->grad_fn && m->grad_fn->backward == to_backward) {
    m->grad_fn->dims[0] = mt_device_of(x);
    m->grad_fn->dims[1] = mt_device_index_of(x);
  }
  return 0;
}

int mt_ag_is_transpose2d(const mt_node *n) {
  return n->nedges == 1 && n->in_ndim[0] == 2 &&
         ((n->backward == transpose_backward && n->dims[0] != n->dims[1]) || ag_is_t_view(n));
}

int mt_ag_record_transpose(mt_tensor *r, const mt_tensor *x, int d0, int d1) {
  if (ag_record_one(r, x, "TransposeBackward", transpose_backward)) return -1;
  mt_ag_meta *m = r->grad_meta;
  if (m && m->grad_fn && m->grad_fn->backward == transpose_backward) {
    m->grad_fn->dims[0] = d0;
    m->grad_fn->dims[1] = d1;
  }
  return 0;
}

