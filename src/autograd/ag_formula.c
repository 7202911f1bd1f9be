/* ag_formula.c: the values and operations of the derivative formula
   language (ag_formula.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ag_formula.h"
#include "../ops/dispatch.h"

/* The tensors a formula makes live here until its gradient is finished:
   a formula is straight-line code with no releases of its own. */
#define SCRATCH 48
static _Thread_local mt_tensor *scratch;      /* SCRATCH of them, allocated at first use (a
                                                 thread-local array would not fit a dlopen'd
                                                 library's static TLS) */
static _Thread_local int scratch_n;
const mt_tensor ag_failed_value;          /* no storage: every later op fails */

ag_v ag_keep(mt_tensor r) {
  if (ag_failed || !r.storage) { ag_drop(&r); ag_failed = 1; return agv_t(&ag_failed_value); }
  if (!scratch && !(scratch = calloc(SCRATCH, sizeof *scratch))) {
    ag_drop(&r);
    ag_failed = 1;
    mt_fail("backward: out of memory");
    return agv_t(&ag_failed_value);
  }
  if (scratch_n == SCRATCH) {
    ag_drop(&r);
    ag_failed = 1;
    mt_fail("backward: a derivative formula needs more than %d temporaries", SCRATCH);
    return agv_t(&ag_failed_value);
  }
  scratch[scratch_n] = r;
  return agv_t(&scratch[scratch_n++]);
}

void ag_release_scratch(int mark) {
  while (scratch_n > mark) ag_drop(&scratch[--scratch_n]);
}

static double number_op(mt_op op, double a, double b) {
  switch (op) {
  case MT_OP_add: return a + b;
  case MT_OP_sub: return a - b;
  case MT_OP_mul: return a * b;
  case MT_OP_div: return a / b;
  case MT_OP_pow: return pow(a, b);
  case MT_OP_eq: return a == b;
  case MT_OP_lt: return a < b;
  case MT_OP_le: return a <= b;
  case MT_OP_gt: return a > b;
  case MT_OP_ge: return a >= b;
  case MT_OP_logical_and: return a != 0 && b != 0;
  case MT_OP_logical_or: return a != 0 || b != 0;
  default: return NAN;
  }
}

ag_v ag_f_bin(mt_op op, ag_v a, ag_v b) {
  if (!a.t && !b.t) return agv_s(number_op(op, a.s, b.s));
  /* x * 1 and x ^ 1 are x: add's gradient, pow's derivative at exponent 2 */
  if (a.t && !b.t && b.s == 1 && (op == MT_OP_mul || op == MT_OP_pow || op == MT_OP_div)) {
    if (!a.t->storage) return a;
    mt_tensor r = {0};
    mt_ag_alias(&r, a.t);
    return ag_keep(r);
  }
  mt_operand oa = {a.t, a.s, 0}, ob = {b.t, b.s, 0};
  return ag_keep(ag_binop(op, &oa, &ob));
}

/* op of a tensor; of a number, through a 0-dim float64 tensor */
ag_v ag_f_un(mt_op op, ag_v x) {
  if (x.t) return ag_keep(ag_un(op, x.t));
  mt_tensor t = {0}, r = {0};
  double v = NAN;
  if (!mt_tensor_init(&t, MT_FLOAT64, 0, NULL)) {
    *(double *)mt_data(&t) = x.s;
    if (!mt_call_unary(&r, &t, op, 0, MT_FLOAT64)) v = mt_get_f64(r.dtype, mt_data(&r));
  }
  mt_tensor_release(&t);
  mt_tensor_release(&r);
  return agv_s(v);
}

ag_v ag_f_neg(ag_v x) { return x.t ? ag_f_un(MT_OP_neg, x) : agv_s(-x.s); }

ag_v ag_f_where(ag_v cond, ag_v a, ag_v b) {
  mt_operand oa = {a.t, a.s, 0}, ob = {b.t, b.s, 0};
  if (!cond.t) return cond.s != 0 ? a : b;        /* a condition of numbers alone */
  return ag_keep(ag_where_ops(cond.t, &oa, &ob));
}

/* g * f'(v) in one kernel (mt_activation_grad), for a backward that records
   nothing (create_graph records the formula) where g matches v */
int ag_can_fuse(ag_v g, ag_v v) {
  return !mt_ag_grad_enabled() && g.t && v.t && v.t->storage && g.t->dtype == v.t->dtype && mt_same_shape(g.t, v.t);
}
ag_v ag_fused(ag_v g, ag_v v, mt_activation kind) {
  mt_tensor d = {0};
  if (!ag_failed && mt_activation_grad(&d, g.t, v.t, kind)) { mt_tensor_release(&d); ag_failed = 1; }
  return ag_keep(d);
}

int ag_scratch_mark(void) { return scratch_n; }

/* PyTorch's node names: "mul" -> "MulBackward", "log_softmax" -> "LogSoftmaxBackward" */
static char backward_name_buf[MT_NUM_OPS][40];
static const char *backward_names[MT_NUM_OPS];
static void init_names(void) {
  static int done_once;
  if (__atomic_load_n(&done_once, __ATOMIC_ACQUIRE)) return;
  for (int op = 0; op < MT_NUM_OPS; op++) {
    const char *src = mt_op_names[op], *end = src + strlen(src);
    if (end - src > 4 && !strcmp(end - 4, "_dim")) end -= 4;   /* max_dim: MaxBackward */
    char *dst = backward_name_buf[op];
    size_t k = 0;
    for (int up = 1; src < end && k < sizeof backward_name_buf[op] - 9; src++) {
      if (*src == '_') { up = 1; continue; }
      dst[k++] = up && *src >= 'a' && *src <= 'z' ? (char)(*src - 'a' + 'A') : *src;
      up = 0;
    }
    memcpy(dst + k, "Backward", 9);
    backward_names[op] = dst;
  }
  __atomic_store_n(&done_once, 1, __ATOMIC_RELEASE);
}

/* Input i's gradient from the formula's value v: its own shape and dtype
   (g itself when the formula is G), then the scratch back to mark. */
void ag_formula_finish(mt_node *n, int i, ag_v v, int mark, mt_tensor *out) {
  mt_tensor d = {0};
  if (!ag_failed) {
    if (v.t) mt_ag_alias(&d, v.t);
    else { ag_failed = 1; mt_fail("%s: a derivative formula gave a number", n->name); }
  }
  ag_release_scratch(mark);
  if (!ag_failed && d.storage) ag_finish(n, i, &d, out);
  else ag_drop(&d);
}

const char *ag_backward_name(mt_op op) {
  init_names();
  return backward_names[op];
}

