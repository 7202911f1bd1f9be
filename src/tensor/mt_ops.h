/* mt_ops.h: the elementwise op lists. Each op is declared once here; the
   kernels (mt_pointwise.c) and the Lua bindings (src/vm/lt_math.c) are both
   generated from these lists. In expressions, v/a/b are values in the compute
   type ct; p1 is the op's scalar parameter (alpha), in ct. Each list takes
   the generator X and a dtype E that it passes through. */
#ifndef MT_OPS_H
#define MT_OPS_H

#include "mt_tensor.h"

/* float result; integer and bool inputs are promoted to the default float */
#define MT_UNARY_FLOAT_OPS(X, E)                                   \
  X(exp, mt_exp(v), E)                                                \
  X(expm1, mt_expm1(v), E)                                            \
  X(log, mt_log(v), E)                                                \
  X(log1p, mt_log1p(v), E)                                            \
  X(log2, mt_log2(v), E)                                              \
  X(log10, log10(v), E)                                            \
  X(sqrt, mt_sqrt(v), E)                                           \
  X(rsqrt, (ct)1 / mt_sqrt(v), E)                                  \
  X(sin, mt_sin(v), E)                                                \
  X(cos, mt_cos(v), E)                                                \
  X(tan, tan(v), E)                                                \
  X(asin, asin(v), E)                                              \
  X(acos, mt_acos(v), E)                                              \
  X(atan, mt_atan(v), E)                                              \
  X(sinh, mt_sinh(v), E)                                              \
  X(cosh, mt_cosh(v), E)                                              \
  X(tanh, mt_tanh(v), E)                                           \
  X(sigmoid, (ct)1 / ((ct)1 + mt_exp(-v)), E)                         \
  X(erf, mt_erf(v), E)                                             \
  X(erfc, mt_erfc(v), E)                                              \
  X(reciprocal, (ct)1 / v, E)

/* float tensors only: PyTorch refuses integer and bool inputs */
#define MT_UNARY_FLOAT_ONLY_OPS(X, E)                              \
  X(gelu, (ct)0.5 * v * ((ct)1 + mt_erf(v * (ct)0.70710678118654752440)), E) \
  X(gelu_tanh, (ct)0.5 * v * ((ct)1 + mt_tanh((ct)0.79788456080286535588 * (v + (ct)0.044715 * v * v * v))), E) \
  X(silu, v / ((ct)1 + mt_exp(-v)), E)                                \
  X(frac, v - trunc(v), E)

/* rounding: float tensors round (half to even for round); integer tensors
   are already whole and come back unchanged, in their dtype; not for bool */
#define MT_UNARY_ROUND_OPS(X, E)                                   \
  X(floor, floor(v), E)                                            \
  X(ceil, ceil(v), E)                                              \
  X(round, nearbyint(v), E)                                        \
  X(trunc, trunc(v), E)

/* same dtype in and out, every dtype but bool (sign(b) is b and square(b)
   is b as int64, as in PyTorch) */
#define MT_UNARY_SAME_OPS(X, E)                                    \
  X(neg, MT_WRAP_NEG(v), E)                                        \
  X(abs, v < 0 ? MT_WRAP_NEG(v) : v, E)                            \
  X(sign, (ct)((v > 0) - (v < 0)), E)                              \
  X(relu, v > 0 ? v : (ct)0, E)                                    \
  X(square, MT_WRAP(v, *, v), E)

/* bool result from any dtype; logical_not_ also exists in place */
#define MT_UNARY_BOOL_OPS(X, E)                                    \
  X(isnan, v != v, E)                                              \
  X(isinf, isinf((double)v), E)                                    \
  X(isfinite, isfinite((double)v), E)                              \
  X(logical_not, !v, E)

/* result in the promoted dtype; bool allowed for add, mul, maximum and
   minimum; integer fmod and remainder by zero raise, as in PyTorch */
#define MT_BINARY_OPS(X, E)                                        \
  X(add, MT_WRAP(a, +, MT_WRAP(p1, *, b)), E)                      \
  X(sub, MT_WRAP(a, -, MT_WRAP(p1, *, b)), E)                      \
  X(mul, MT_WRAP(a, *, b), E)                                      \
  X(maximum, (a != a || a > b) ? a : b, E)                         \
  X(minimum, (a != a || a < b) ? a : b, E)                         \
  X(fmod, mt_fmod(a, b), E)                                    \
  X(remainder, mt_remainder(a, b), E)                          \
  X(pow, mt_pow(a, b), E)

/* always a float result (true division and friends) */
#define MT_BINARY_FLOAT_OPS(X, E)                                  \
  X(div, a / b, E)                                                 \
  X(atan2, atan2(a, b), E)

/* bool result; operands compared in their promoted dtype */
#define MT_COMPARE_OPS(X, E)                                       \
  X(eq, a == b, E)                                                 \
  X(ne, a != b, E)                                                 \
  X(lt, a < b, E)                                                  \
  X(le, a <= b, E)                                                 \
  X(gt, a > b, E)                                                  \
  X(ge, a >= b, E)                                                 \
  X(logical_and, (a != 0) && (b != 0), E)                          \
  X(logical_or, (a != 0) || (b != 0), E)                           \
  X(logical_xor, (a != 0) != (b != 0), E)

/* division rounded to a whole number (div's rounding_mode 'floor', also
   floor_divide, and 'trunc'): the result in the promoted dtype, so integers
   stay integers; integer division by zero raises, as in PyTorch. Their
   derivative is zero: the bindings record them as floor or trunc of the
   true quotient. */
#define MT_BINARY_DIV_OPS(X, E)                                    \
  X(div_floor, mt_div_floor(a, b), E)                              \
  X(div_trunc, mt_div_trunc(a, b), E)

typedef enum {
#define MT_X(name, expr, E) MT_OP_##name,
  MT_UNARY_FLOAT_OPS(MT_X, _) MT_UNARY_FLOAT_ONLY_OPS(MT_X, _) MT_UNARY_ROUND_OPS(MT_X, _)
  MT_UNARY_SAME_OPS(MT_X, _) MT_UNARY_BOOL_OPS(MT_X, _) MT_BINARY_OPS(MT_X, _)
  MT_BINARY_FLOAT_OPS(MT_X, _) MT_COMPARE_OPS(MT_X, _) MT_BINARY_DIV_OPS(MT_X, _)
#undef MT_X
  MT_NUM_OPS
} mt_op;

extern const char *const mt_op_names[MT_NUM_OPS];

/* An operand: a tensor, or a Lua number or boolean (a "wrapped" scalar that
   promotes weakly, as in PyTorch). */
typedef struct {
  const mt_tensor *t;      /* NULL for a scalar */
  double value;
  int is_int;              /* scalar was an integer (1) or a boolean (2) */
} mt_operand;

/* The dtype an op on these operands computes in (PyTorch's result_type:
   dimensioned tensors, then 0-dim tensors, then scalars). */
int mt_result_type(const mt_operand *ops, int n, int default_float);

/* r empty (out-of-place) or, with inplace, r is the first input's tensor:
   the op computes in the promoted dtype and casts into r, which must hold
   the broadcast shape with no two elements sharing memory. alpha is the
   add/sub multiplier (1 for the rest); integral for integer dtypes. */
int mt_unary(mt_tensor *r, const mt_tensor *x, mt_op op, int inplace, int default_float);
int mt_binary(mt_tensor *r, const mt_operand *a, const mt_operand *b, mt_op op,
              double alpha, int inplace, int default_float);

/* Parametric elementwise ops. */
int mt_clamp(mt_tensor *r, const mt_tensor *x, const double *lo, const double *hi, int inplace);
int mt_softplus(mt_tensor *r, const mt_tensor *x, double beta, double threshold);
int mt_leaky_relu(mt_tensor *r, const mt_tensor *x, double slope, int inplace);
/* r = a + value * t1 * t2 (addcmul) or a + value * t1 / t2 (addcdiv) */
int mt_addc(mt_tensor *r, const mt_tensor *a, const mt_tensor *t1, const mt_tensor *t2,
            double value, int divide, int inplace, int default_float);
int mt_lerp(mt_tensor *r, const mt_tensor *a, const mt_tensor *b, const mt_operand *w, int inplace);
int mt_where(mt_tensor *r, const mt_tensor *cond, const mt_operand *a, const mt_operand *b, int default_float);

/* r = g * f'(v) for an activation f in one pass (g and v of one shape and
   float dtype): v is f's result for relu, tanh and sigmoid, its input for
   gelu (exact, and its tanh form) */
typedef enum { MT_ACT_RELU, MT_ACT_TANH, MT_ACT_SIGMOID, MT_ACT_GELU, MT_ACT_GELU_TANH } mt_activation;
int mt_activation_grad(mt_tensor *r, const mt_tensor *g, const mt_tensor *v, mt_activation kind);

#endif
