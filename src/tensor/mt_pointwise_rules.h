/* mt_pointwise_rules.h: PyTorch's dtype, value and shape rules of the
   elementwise ops, shared by every device's kernels (mt_pointwise.c for the
   CPU, src/cuda/cu_pointwise.cu), so that an op means the same and fails
   with the same message wherever its tensors live. */
#ifndef MT_POINTWISE_RULES_H
#define MT_POINTWISE_RULES_H

#include <math.h>
#include <string.h>
#include "mt_ops.h"

/* Each op's class, from the list that declares it; MT_CLASS_OF_##list maps a
   list to its class, so tables expanded over MT_POINTWISE_LISTS stay in the
   enum's order. */
enum { MT_C_UNARY_FLOAT, MT_C_UNARY_FLOAT_ONLY, MT_C_UNARY_ROUND, MT_C_UNARY_SAME, MT_C_UNARY_BOOL, MT_C_BINARY,
       MT_C_BINARY_FLOAT, MT_C_COMPARE, MT_C_UNARY_INT, MT_C_BINARY_INT };
#define MT_CLASS_OF_MT_UNARY_FLOAT_OPS MT_C_UNARY_FLOAT
#define MT_CLASS_OF_MT_UNARY_FLOAT_ONLY_OPS MT_C_UNARY_FLOAT_ONLY
#define MT_CLASS_OF_MT_UNARY_ROUND_OPS MT_C_UNARY_ROUND
#define MT_CLASS_OF_MT_UNARY_SAME_OPS MT_C_UNARY_SAME
#define MT_CLASS_OF_MT_UNARY_BOOL_OPS MT_C_UNARY_BOOL
#define MT_CLASS_OF_MT_BINARY_OPS MT_C_BINARY
#define MT_CLASS_OF_MT_BINARY_FLOAT_OPS MT_C_BINARY_FLOAT
#define MT_CLASS_OF_MT_COMPARE_OPS MT_C_COMPARE
#define MT_CLASS_OF_MT_BINARY_DIV_OPS MT_C_BINARY
#define MT_CLASS_OF_MT_UNARY_INT_OPS MT_C_UNARY_INT
#define MT_CLASS_OF_MT_BINARY_INT_OPS MT_C_BINARY_INT

static const unsigned char mt_op_class[MT_NUM_POINTWISE_OPS] = {
#define MT_X(name, expr, C, ...) C,
#define MT_LIST(list) list(MT_X, MT_CLASS_OF_##list)
  MT_POINTWISE_LISTS(MT_LIST)
#undef MT_LIST
#undef MT_X
};

/* Binary ops that run on bool operands, as PyTorch's: the comparisons, the
   bitwise and, or, xor (not the shifts), add, mul, maximum and minimum. */
static inline int mt_op_takes_bool(mt_op op, int cls) {
  if (cls == MT_C_COMPARE) return 1;
  if (cls == MT_C_BINARY_INT) return op != MT_OP_bitwise_left_shift && op != MT_OP_bitwise_right_shift;
  return op == MT_OP_add || op == MT_OP_mul || op == MT_OP_maximum || op == MT_OP_minimum;
}

/* Ops whose integer form divides: by zero they raise (ZeroDivisionError). */
static inline int mt_op_divides(mt_op op) {
  return op == MT_OP_fmod || op == MT_OP_remainder || op == MT_OP_div_floor || op == MT_OP_div_trunc;
}

/* The shifts' values, as PyTorch's, in T (the compute type) for a and b of
   T: a count below zero or from T's width up shifts every bit out (left:
   0; right: the sign, 0 or -1). The count is read as T's signed twin, so a
   uint8 count of 200 is negative. */
#define MT_SHIFT_BITS(T) ((int)sizeof(T) * 8)
#define MT_SHIFT_COUNT(T, b) ((int64_t)((uint64_t)(b) << (64 - MT_SHIFT_BITS(T))) >> (64 - MT_SHIFT_BITS(T)))
#define MT_SHIFT_LEFT(T, a, b)                                                                   \
  (MT_SHIFT_COUNT(T, b) < 0 || MT_SHIFT_COUNT(T, b) >= MT_SHIFT_BITS(T) ? (T)0                 \
                                                                       : (T)((uint64_t)(a) << MT_SHIFT_COUNT(T, b)))
#define MT_SHIFT_RIGHT_MAX(T) (MT_SHIFT_BITS(T) - ((T)-1 < 1))
#define MT_SHIFT_RIGHT(T, a, b)                                                                  \
  ((T)((int64_t)(a) >> (MT_SHIFT_COUNT(T, b) < 0 || MT_SHIFT_COUNT(T, b) >= MT_SHIFT_RIGHT_MAX(T)   \
                            ? MT_SHIFT_RIGHT_MAX(T) : MT_SHIFT_COUNT(T, b))))

/* Integer-only ops (the bitwise ones) on a float dtype: PyTorch refuses. */
static inline int mt_int_only(mt_op op, int dtype) {
  return mt_fail("%s: not supported for %s tensors (integer and bool dtypes only)", mt_op_names[op],
                 mt_dtypes[dtype].name);
}

static inline int mt_same_view(const mt_tensor *a, const mt_tensor *b) {
  return a->offset == b->offset && a->ndim == b->ndim &&
         !memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->ndim) &&
         !memcmp(a->stride, b->stride, sizeof(int64_t) * (size_t)a->ndim);
}

/* A unary op's dtypes: x is read as *in_dtype and the result is *out_dtype;
   in place, r (x) is checked to take it. Some cases need no kernel (an
   integer rounded, a bool's sign): they return 1 with *rc the op's own
   return, r holding the result or the error set. 0: run the kernel. */
static inline int mt_unary_rules(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float,
                                 int *in_dtype, int *out_dtype, int *rc) {
  const char *name = mt_op_names[op];
  int cls = mt_op_class[op];
  *in_dtype = *out_dtype = x->dtype;
  *rc = -1;
  if (cls == MT_C_UNARY_FLOAT) {
    if (!mt_dtype_is_float((mt_dtype)x->dtype)) *in_dtype = *out_dtype = default_float;
  } else if (cls == MT_C_UNARY_BOOL) {
    *out_dtype = MT_BOOL;
    if (inplace && op != MT_OP_logical_not) { mt_fail("%s: has no in-place form", name); return 1; }
  } else if (cls == MT_C_UNARY_INT) {
    if (mt_dtype_is_float((mt_dtype)x->dtype)) { mt_int_only(op, x->dtype); return 1; }
  } else if (cls == MT_C_UNARY_FLOAT_ONLY && !mt_dtype_is_float((mt_dtype)x->dtype)) {
    mt_fail("%s: not supported for %s tensors (float dtypes only)", name, mt_dtypes[x->dtype].name);
    return 1;
  } else if (x->dtype == MT_BOOL) {
    /* PyTorch: sign(b) is b, square(b) is b as int64 (pow(b, 2)); no others */
    if (op == MT_OP_sign) *rc = inplace ? 0 : mt_clone(r, x);
    else if (op == MT_OP_square) *rc = inplace ? mt_check_inplace(name, MT_INT64, r) : mt_to_dtype(r, x, MT_INT64);
    else mt_fail("%s: not supported for bool tensors", name);
    return 1;
  } else if (cls == MT_C_UNARY_ROUND && !mt_dtype_is_float((mt_dtype)x->dtype)) {
    *rc = inplace ? mt_check_inplace(name, x->dtype, r) : mt_clone(r, x);   /* whole already */
    return 1;
  }
  if (inplace && mt_check_inplace(name, *out_dtype, r)) return 1;
  return 0;
}

/* A binary op's dtypes: the operands compute in *dtype (PyTorch's result
   type), the result is *out_dtype; -1 with the error when the op refuses the
   dtype or a value (PyTorch's checks on integer alpha, exponents and
   divisors). */
static inline int mt_binary_rules(const mt_operand *a, const mt_operand *b, mt_op op, double alpha,
                                  int default_float, int *dtype, int *out_dtype) {
  const char *name = mt_op_names[op];
  int cls = mt_op_class[op];
  mt_operand both[2] = {*a, *b};
  int dt = mt_result_type(both, 2, default_float);
  if (dt < 0) return mt_fail("%s: needs at least one tensor", name);
  if (cls == MT_C_BINARY_FLOAT && !mt_dtype_is_float((mt_dtype)dt)) dt = default_float;
  if (cls == MT_C_BINARY_INT && mt_dtype_is_float((mt_dtype)dt)) return mt_int_only(op, dt);
  if (dt == MT_BOOL && !mt_op_takes_bool(op, cls))
    return mt_fail("%s: not supported for bool tensors", name);
  if (!mt_dtype_is_float((mt_dtype)dt)) {
    if ((op == MT_OP_add || op == MT_OP_sub) && alpha != floor(alpha))
      return mt_fail("%s: for integer tensors, alpha must be an integer (got %g)", name, alpha);
    if (op == MT_OP_pow && !b->t && b->is_int == 1 && b->value < 0)
      return mt_fail("pow: integers to negative integer powers are not allowed (exponent %lld)",
                     (long long)b->value);
    if (mt_op_divides(op) && !b->t && b->value == 0)
      return mt_fail("%s: ZeroDivisionError (integer %s by zero)", name, name);
  }
  *dtype = dt;
  *out_dtype = cls == MT_C_COMPARE ? MT_BOOL : dt;
  return 0;
}

/* The shape a binary op's operands broadcast to; in place, r (a's tensor)
   must have it and take out_dtype. */
static inline int mt_binary_shape(const mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op,
                                  int inplace, int out_dtype, int *ndim, int64_t *shape) {
  const char *name = mt_op_names[op];
  const int64_t *sa = a->t ? a->t->shape : NULL, *sb = b->t ? b->t->shape : NULL;
  if (mt_broadcast_shapes(name, a->t ? a->t->ndim : 0, sa, b->t ? b->t->ndim : 0, sb, ndim, shape)) return -1;
  if (!inplace) return 0;
  if (r->ndim != *ndim || memcmp(r->shape, shape, sizeof(int64_t) * (size_t)*ndim)) {
    char b1[128], b2[128];
    return mt_fail("%s_: output of shape %s cannot hold the broadcast result (other is %s)", name,
                   mt_shape_str(r, b1, sizeof b1), b->t ? mt_shape_str(b->t, b2, sizeof b2) : "a number");
  }
  return mt_check_inplace(name, out_dtype, r);
}

#endif
