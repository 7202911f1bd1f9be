/* mt_view.c: the registry's views and rearrangements of one tensor
   (MT_VIEW_OPS in src/ops/registry.h) and its joins (MT_JOIN_OPS): the
   entry points the dispatcher's table holds, and the few kernels the other
   files lack. */
#include "mt_ops.h"
#include "mt_shape.h"
#include "mt_index.h"

int mt_view_op(mt_tensor *r, const mt_tensor *x, mt_op op, const mt_view_args *a, int inplace) {
  switch (op) {
#define VIEW(call, signature, node) call
    MT_VIEW_OPS(MT_KERNEL_CASE, _)
#undef VIEW
  default: break;
  }
  (void)inplace;
  return mt_not_in_family("mt_view_op", op, "a view op");
}

int mt_join_op(mt_tensor *r, const mt_tensor *const *ts, int n, mt_op op, int dim) {
  switch (op) {
#define JOIN(call) call
    MT_JOIN_OPS(MT_KERNEL_CASE, _)
#undef JOIN
  default: break;
  }
  return mt_not_in_family("mt_join_op", op, "a join");
}

int mt_t(mt_tensor *r, const mt_tensor *x) {
  if (x->ndim > 2) {
    char b[128];
    return mt_fail("t: expects a tensor with <= 2 dims, got %s", mt_shape_str(x, b, sizeof b));
  }
  if (x->ndim < 2) { mt_tensor_alias(r, x); return 0; }
  return mt_transpose(r, x, 0, 1);
}

/* dims as ints: one outside int's range is outside every tensor's, and the
   kernels range-check it */
static void as_ints(int *out, const int64_t *dims, int n) {
  for (int k = 0; k < n; k++)
    out[k] = dims[k] < -MT_MAX_DIMS - 1 || dims[k] > MT_MAX_DIMS ? MT_MAX_DIMS + 1 : (int)dims[k];
}

int mt_permute_n(mt_tensor *r, const mt_tensor *x, const int64_t *dims, int n) {
  if (n != x->ndim) return mt_fail("permute: got %d dims for a tensor of %d dims", n, x->ndim);
  int d[MT_MAX_DIMS];
  as_ints(d, dims, n);
  return mt_permute(r, x, d);
}

int mt_movedim_n(mt_tensor *r, const mt_tensor *x, const int64_t *src, int n, const int64_t *dst, int m) {
  if (n != m) return mt_fail("movedim: %d source dims but %d destination dims", n, m);
  int s[MT_MAX_DIMS], d[MT_MAX_DIMS];
  as_ints(s, src, n);
  as_ints(d, dst, n);
  return mt_movedim(r, x, s, d, n);
}

int mt_flip_n(mt_tensor *r, const mt_tensor *x, const int64_t *dims, int n) {
  int d[MT_MAX_DIMS];
  as_ints(d, dims, n);
  return mt_flip(r, x, d, n);
}

int mt_roll_n(mt_tensor *r, const mt_tensor *x, const int64_t *shifts, int n, const int64_t *dims, int m) {
  int d[MT_MAX_DIMS];
  as_ints(d, dims, m);
  return mt_roll(r, x, shifts, n, d, m);
}

int mt_as_strided_n(mt_tensor *r, const mt_tensor *x, const int64_t *size, int n, const int64_t *stride, int m,
                    int64_t offset) {
  if (n != m) return mt_fail("as_strided: %d sizes but %d strides", n, m);
  return mt_as_strided(r, x, n, size, stride, offset);
}

int mt_flip_at_least(mt_tensor *r, const mt_tensor *x, int dim, int min_dims, const char *op) {
  if (x->ndim < min_dims) {
    char b[128];
    return mt_fail("%s: needs at least %d dims, got %s", op, min_dims, mt_shape_str(x, b, sizeof b));
  }
  return mt_flip(r, x, &dim, 1);
}
