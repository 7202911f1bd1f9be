/* registry.h: the op registry. Each op is one entry, and everything about it
   is in that entry; the layers each read the columns they need:
     - src/tensor (mt_pointwise.c, mt_reduce.c): the kernel, per dtype;
     - src/autograd (ag_pointwise.c, ag_reduce.c): the derivative, and what
       it saves;
     - src/ops (dispatch.c): the autocast category and the rest of the
       runtime table (torch._ops() shows it);
     - src/vm (lt_math.c, lt_reduce.c): the Lua names and signature, the
       in-place variant.
   This file includes nothing and defines no code: a list is expanded only
   where a layer supplies its OP. Adding an elementwise op is one entry here,
   plus its help text (lib/torch/doc) and its reference values
   (spec/ref/gen_pointwise.py); a reduction is an entry, plus a pass in
   mt_reduce.c when it needs a new one.

   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases):
   - name: the C name (MT_OP_name) and the Lua name: x:name(), torch.name(),
     and x:name_() in place where the family allows it.
   - kernel: the value of one element, an expression in v (unary) or a and b
     (binary), of the compute type ct; p1 is the op's scalar parameter
     (add's and sub's alpha), in ct. E is the list's dtype argument.
   - derivative: how each input's gradient is written, as PyTorch's
     derivatives.yaml writes it, with the recording ops of ag_pointwise.c:
       DERIV(reads, expr)    unary: expr is the input's gradient;
       DERIV2(reads_a, expr_a, reads_b, expr_b)
                             binary: one expression per operand;
       NODERIV               not differentiable (bool and integer results
                             only: a spec fails on any float-valued op
                             without one).
     In expr, G is the incoming gradient, X the input, R the result, A and B
     the operands (each a tensor or a number), ALPHA add's multiplier.
     reads (INPUT, RESULT, NOTHING for unary; A, B, AB, NOTHING for an
     operand's expression) is what the node saves: only those, and only for
     the gradients wanted, so an input the derivative does not read may
     change in place afterwards. FUSED(kind, v, expr) takes one fused kernel
     (mt_activation_grad) when the backward records nothing.
   - autocast: what autocast does to the op's float inputs (mixed precision):
     AC_LOWER (runs in the lower precision), AC_FP32 (runs in float32: the
     op loses precision or range in float16), AC_PROMOTE (inputs of mixed
     float types run in the widest), AC_NONE (runs in its inputs' dtype).
   - domain: where gradcheck samples each input (spec/registry_spec.lua):
     ANY (either sign, away from zero and from whole and half numbers), POS
     (positive, below 1), BIG (magnitude above 1: a divisor whose quotients
     stay away from whole numbers), COND (a bool tensor: where's
     condition), UNIQ (as ANY, every element distinct: a tie at an order
     statistic is a kink), INT (integers of either sign: the bitwise
     ops).
   - aliases: more Lua names of the op, PyTorch's and Torch7's, in one
     string separated by spaces ("" for none); each has the in-place form
     when the op does. */
#ifndef MT_REGISTRY_H
#define MT_REGISTRY_H

/* ---- elementwise: unary ---- */

/* float result; integer and bool inputs are promoted to the default float */
#define MT_UNARY_FLOAT_OPS(OP, E)                                                                      \
  OP(exp, mt_exp(v), E, DERIV(RESULT, MUL(G, R)), AC_FP32, ANY, "")                                     \
  OP(expm1, mt_expm1(v), E, DERIV(RESULT, MUL(G, ADD(R, 1))), AC_FP32, ANY, "")                        \
  OP(log, mt_log(v), E, DERIV(INPUT, DIV(G, X)), AC_FP32, POS, "")                                     \
  OP(log1p, mt_log1p(v), E, DERIV(INPUT, DIV(G, ADD(X, 1))), AC_FP32, POS, "")                         \
  OP(log2, mt_log2(v), E, DERIV(INPUT, DIV(G, MUL(X, M_LN2))), AC_FP32, POS, "")                       \
  OP(log10, log10(v), E, DERIV(INPUT, DIV(G, MUL(X, M_LN10))), AC_FP32, POS, "")                       \
  OP(sqrt, mt_sqrt(v), E, DERIV(RESULT, DIV(G, MUL(R, 2))), AC_FP32, POS, "")                          \
  OP(rsqrt, (ct)1 / mt_sqrt(v), E, DERIV(RESULT, MUL(G, MUL(POW(R, 3), -0.5))), AC_FP32, POS, "")      \
  OP(sin, mt_sin(v), E, DERIV(INPUT, MUL(G, F(cos, X))), AC_FP32, ANY, "")                             \
  OP(cos, mt_cos(v), E, DERIV(INPUT, MUL(G, NEG(F(sin, X)))), AC_FP32, ANY, "")                        \
  OP(tan, tan(v), E, DERIV(RESULT, MUL(G, ADD(MUL(R, R), 1))), AC_FP32, ANY, "")                       \
  OP(asin, asin(v), E, DERIV(INPUT, MUL(G, F(rsqrt, SUB(1, MUL(X, X))))), AC_FP32, ANY, "arcsin")      \
  OP(acos, mt_acos(v), E, DERIV(INPUT, NEG(MUL(G, F(rsqrt, SUB(1, MUL(X, X)))))), AC_FP32, ANY,        \
    "arccos")                                                                                          \
  OP(atan, mt_atan(v), E, DERIV(INPUT, DIV(G, ADD(MUL(X, X), 1))), AC_FP32, ANY, "arctan")             \
  OP(sinh, mt_sinh(v), E, DERIV(INPUT, MUL(G, F(cosh, X))), AC_FP32, ANY, "")                          \
  OP(cosh, mt_cosh(v), E, DERIV(INPUT, MUL(G, F(sinh, X))), AC_FP32, ANY, "")                          \
  OP(tanh, mt_tanh(v), E,                                                                               \
    DERIV(RESULT, FUSED(MT_ACT_TANH, R, MUL(G, SUB(1, MUL(R, R))))), AC_NONE, ANY, "")                \
  OP(sigmoid, (ct)1 / ((ct)1 + mt_exp(-v)), E,                                                         \
    DERIV(RESULT, FUSED(MT_ACT_SIGMOID, R, MUL(G, MUL(R, SUB(1, R))))), AC_NONE, ANY, "")             \
  OP(erf, mt_erf(v), E, DERIV(INPUT, MUL(G, MUL(F(exp, NEG(MUL(X, X))), M_2_SQRTPI))), AC_FP32, ANY,   \
    "")                                                                                                \
  OP(erfc, mt_erfc(v), E, DERIV(INPUT, MUL(G, MUL(F(exp, NEG(MUL(X, X))), -M_2_SQRTPI))), AC_FP32,     \
    ANY, "")                                                                                           \
  OP(reciprocal, (ct)1 / v, E, DERIV(RESULT, MUL(G, NEG(MUL(R, R)))), AC_FP32, ANY, "")               \
  /* sin(pi x) / (pi x), 1 at 0; derivative (cos(pi x) - sinc(x)) / x, 0 at 0 */                       \
  OP(sinc, v == 0 ? (ct)1 : mt_sin((ct)M_PI * v) / ((ct)M_PI * v), E,                                  \
     DERIV(INPUT, MUL(G, WHERE(EQ(X, 0), 0, DIV(SUB(F(cos, MUL(X, M_PI)), F(sinc, X)), X)))), AC_FP32,  \
     ANY, "")

/* float tensors only: PyTorch refuses integer and bool inputs */
#define MT_UNARY_FLOAT_ONLY_OPS(OP, E)                                                                 \
  /* Phi(x) + x phi(x) */                                                                              \
  OP(gelu, (ct)0.5 * v * ((ct)1 + mt_erf(v * (ct)0.70710678118654752440)), E,                         \
    DERIV(INPUT, FUSED(MT_ACT_GELU, X,                                                                 \
                       MUL(G, ADD(MUL(ADD(F(erf, MUL(X, M_SQRT1_2)), 1), 0.5),                         \
                                  MUL(X, MUL(F(exp, MUL(MUL(X, X), -0.5)), 0.3989422804014327)))))),   \
    AC_NONE, ANY, "")                                                                                  \
  /* t = tanh(c (x + a x^3)): 0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 a x^2) */                        \
  OP(gelu_tanh,                                                                                         \
    (ct)0.5 * v * ((ct)1 + mt_tanh((ct)0.79788456080286535588 * (v + (ct)0.044715 * v * v * v))), E, \
    DERIV(INPUT, FUSED(MT_ACT_GELU_TANH, X,                                                            \
                       MUL(G, LET(T, F(tanh, MUL(MUL(X, ADD(MUL(MUL(X, X), 0.044715), 1)),           \
                                                 0.79788456080286535588)),                             \
                                  ADD(MUL(ADD(T, 1), 0.5),                                             \
                                      MUL(MUL(X, MUL(SUB(1, MUL(T, T)),                                \
                                                     ADD(MUL(MUL(X, X), 3 * 0.044715), 1))),           \
                                          0.5 * 0.79788456080286535588)))))),                          \
    AC_NONE, ANY, "")                                                                                  \
  /* s (1 + x (1 - s)), s = sigmoid(x) */                                                              \
  OP(silu, v / ((ct)1 + mt_exp(-v)), E,                                                                 \
    DERIV(INPUT, MUL(G, LET(S, F(sigmoid, X), MUL(S, ADD(MUL(X, SUB(1, S)), 1))))), AC_NONE, ANY, "")  \
  OP(frac, v - trunc(v), E, DERIV(NOTHING, G), AC_NONE, ANY, "")

/* rounding: float tensors round (half to even for round); integer tensors
   are already whole and come back unchanged, in their dtype; not for bool.
   Their derivative is zero, as PyTorch's. */
#define MT_UNARY_ROUND_OPS(OP, E)                                                                      \
  OP(floor, floor(v), E, DERIV(NOTHING, MUL(G, 0)), AC_NONE, ANY, "")                                   \
  OP(ceil, ceil(v), E, DERIV(NOTHING, MUL(G, 0)), AC_NONE, ANY, "")                                     \
  OP(round, nearbyint(v), E, DERIV(NOTHING, MUL(G, 0)), AC_NONE, ANY, "")                               \
  OP(trunc, trunc(v), E, DERIV(NOTHING, MUL(G, 0)), AC_NONE, ANY, "fix")

/* same dtype in and out, every dtype but bool (sign(b) is b and square(b)
   is b as int64, as in PyTorch) */
#define MT_UNARY_SAME_OPS(OP, E)                                                                       \
  OP(neg, MT_WRAP_NEG(v), E, DERIV(NOTHING, NEG(G)), AC_NONE, ANY, "negative")                          \
  OP(abs, v < 0 ? MT_WRAP_NEG(v) : v, E, DERIV(INPUT, MUL(G, F(sign, X))), AC_NONE, ANY, "absolute")   \
  OP(sign, (ct)((v > 0) - (v < 0)), E, DERIV(NOTHING, MUL(G, 0)), AC_NONE, ANY, "")                     \
  /* g where r > 0: one pass over g, no float mask */                                                  \
  OP(relu, v > 0 ? v : (ct)0, E, DERIV(RESULT, FUSED(MT_ACT_RELU, R, WHERE(GT(R, 0), G, 0))), AC_NONE,  \
    ANY, "")                                                                                           \
  OP(square, MT_WRAP(v, *, v), E, DERIV(INPUT, MUL(G, MUL(X, 2))), AC_NONE, ANY, "")

/* bool result from any dtype; logical_not_ also exists in place */
#define MT_UNARY_BOOL_OPS(OP, E)                                                                       \
  OP(isnan, v != v, E, NODERIV, AC_NONE, ANY, "")                                                       \
  OP(isinf, isinf((double)v), E, NODERIV, AC_NONE, ANY, "")                                             \
  OP(isfinite, isfinite((double)v), E, NODERIV, AC_NONE, ANY, "")                                       \
  OP(logical_not, !v, E, NODERIV, AC_NONE, ANY, "")

/* ---- elementwise: binary ---- */

/* result in the promoted dtype; bool allowed for add, mul, maximum and
   minimum; integer fmod and remainder by zero raise, as in PyTorch */
#define MT_BINARY_OPS(OP, E)                                                                           \
  OP(add, MT_WRAP(a, +, MT_WRAP(p1, *, b)), E, DERIV2(NOTHING, G, NOTHING, MUL(G, ALPHA)), AC_PROMOTE, \
    ANY ANY, "")                                                                                       \
  OP(sub, MT_WRAP(a, -, MT_WRAP(p1, *, b)), E, DERIV2(NOTHING, G, NOTHING, MUL(G, -ALPHA)),            \
    AC_PROMOTE, ANY ANY, "subtract")                                                                   \
  OP(mul, MT_WRAP(a, *, b), E, DERIV2(B, MUL(G, B), A, MUL(G, A)), AC_PROMOTE, ANY ANY,                \
    "cmul multiply")                                                                                   \
  /* ties share the gradient */                                                                        \
  OP(maximum, (a != a || a > b) ? a : b, E,                                                             \
    DERIV2(AB, MUL(G, ADD(GT(A, B), MUL(EQ(A, B), 0.5))),                                             \
           AB, MUL(G, SUB(1, ADD(GT(A, B), MUL(EQ(A, B), 0.5))))), AC_PROMOTE, ANY ANY, "cmax")        \
  OP(minimum, (a != a || a < b) ? a : b, E,                                                             \
    DERIV2(AB, MUL(G, ADD(LT(A, B), MUL(EQ(A, B), 0.5))),                                             \
           AB, MUL(G, SUB(1, ADD(LT(A, B), MUL(EQ(A, B), 0.5))))), AC_PROMOTE, ANY ANY, "cmin")        \
  OP(fmod, mt_fmod(a, b), E, DERIV2(NOTHING, G, AB, NEG(MUL(G, F(trunc, DIV(A, B))))), AC_PROMOTE,     \
    ANY BIG, "")                                                                                       \
  OP(remainder, mt_remainder(a, b), E, DERIV2(NOTHING, G, AB, NEG(MUL(G, F(floor, DIV(A, B))))),       \
    AC_PROMOTE, ANY BIG, "")                                                                           \
  /* g b a^(b-1) and g a^b log(a) */                                                                   \
  OP(pow, mt_pow(a, b), E,                                                                              \
    DERIV2(AB, MUL(G, MUL(B, POW(A, SUB(B, 1)))), AB, MUL(G, MUL(POW(A, B), F(log, A)))), AC_FP32,       \
    POS ANY, "")

/* always a float result (true division and friends) */
#define MT_BINARY_FLOAT_OPS(OP, E)                                                                     \
  OP(div, a / b, E, DERIV2(B, DIV(G, B), AB, NEG(DIV(MUL(G, A), MUL(B, B)))), AC_PROMOTE, ANY BIG,     \
    "cdiv true_divide divide")                                                                         \
  /* (b, -a) / (a^2 + b^2) */                                                                          \
  OP(atan2, atan2(a, b), E,                                                                             \
    DERIV2(AB, MUL(G, DIV(B, ADD(MUL(A, A), MUL(B, B)))),                                             \
           AB, NEG(MUL(G, DIV(A, ADD(MUL(A, A), MUL(B, B)))))), AC_FP32, ANY ANY, "arctan2")

/* bool result; operands compared in their promoted dtype */
#define MT_COMPARE_OPS(OP, E)                                                                          \
  OP(eq, a == b, E, NODERIV, AC_PROMOTE, ANY ANY, "")                                                   \
  OP(ne, a != b, E, NODERIV, AC_PROMOTE, ANY ANY, "")                                                   \
  OP(lt, a < b, E, NODERIV, AC_PROMOTE, ANY ANY, "")                                                    \
  OP(le, a <= b, E, NODERIV, AC_PROMOTE, ANY ANY, "")                                                   \
  OP(gt, a > b, E, NODERIV, AC_PROMOTE, ANY ANY, "")                                                    \
  OP(ge, a >= b, E, NODERIV, AC_PROMOTE, ANY ANY, "")                                                   \
  OP(logical_and, (a != 0) && (b != 0), E, NODERIV, AC_NONE, ANY ANY, "")                               \
  OP(logical_or, (a != 0) || (b != 0), E, NODERIV, AC_NONE, ANY ANY, "")                                \
  OP(logical_xor, (a != 0) != (b != 0), E, NODERIV, AC_NONE, ANY ANY, "")

/* division rounded to a whole number (div's rounding_mode 'floor', also
   floor_divide, and 'trunc'): the result in the promoted dtype, so integers
   stay integers; integer division by zero raises, as in PyTorch. Their
   derivative is zero, as PyTorch's. */
#define MT_BINARY_DIV_OPS(OP, E)                                                                       \
  OP(div_floor, mt_div_floor(a, b), E, DERIV2(NOTHING, MUL(G, 0), NOTHING, MUL(G, 0)), AC_PROMOTE,     \
    ANY BIG, "floor_divide")                                                                           \
  OP(div_trunc, mt_div_trunc(a, b), E, DERIV2(NOTHING, MUL(G, 0), NOTHING, MUL(G, 0)), AC_PROMOTE,     \
    ANY BIG, "")

/* integer and bool tensors only: PyTorch refuses float ones (Torch7's
   lshift and rshift of floats, a product by a power of 2, are compositions:
   lib/torch/ops7.lua). bitwise_not of a bool is logical not. */
#define MT_UNARY_INT_OPS(OP, E)                                                                        \
  OP(bitwise_not, (ct)(v ^ (ct)-1), E, NODERIV, AC_NONE, INT, "")

/* integer and bool tensors only, in the promoted dtype; the shifts refuse
   bool, and shift counts outside the dtype's width give PyTorch's values
   (MT_SHIFT_LEFT, MT_SHIFT_RIGHT: mt_pointwise_rules.h) */
#define MT_BINARY_INT_OPS(OP, E)                                                                       \
  OP(bitwise_and, a & b, E, NODERIV, AC_NONE, INT INT, "bitand cbitand")                                \
  OP(bitwise_or, a | b, E, NODERIV, AC_NONE, INT INT, "bitor cbitor")                                   \
  OP(bitwise_xor, a ^ b, E, NODERIV, AC_NONE, INT INT, "bitxor cbitxor")                                \
  OP(bitwise_left_shift, MT_SHIFT_LEFT(ct, a, b), E, NODERIV, AC_NONE, INT INT, "")                      \
  OP(bitwise_right_shift, MT_SHIFT_RIGHT(ct, a, b), E, NODERIV, AC_NONE, INT INT, "")

/* ---- reductions over a set of dims ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: RED(first, second, finish, result, signature):
       first, second: the passes of mt_reduce.c's kernels; second (NONE when
         one pass does) reads the first's value for each output: SQDEV the
         mean, EXPSUM the max. NORM picks its passes by the order p; MEDIAN
         is no pass but a selection of every element (mt_median).
       finish: what the state becomes: SAME, MEAN, VAR, STD, LSE (log of the
         sum, plus the max), ANY, ALL, ROOT (norm's 1/p power).
       result: the result's dtype: SAME (x's), WIDEN (integers and bool to
         int64), FLOAT (floating x only), TO_FLOAT (integers and bool to the
         default float), BOOL (uint8 stays uint8, as PyTorch), INT64.
       signature: how Lua calls it (src/vm/lt_reduce.c): DIMS x:op(),
         x:op(dim), x:op({1, 2}, keepdim), {dim=, keepdim=, dtype=}; VAR
         x:op(dim, unbiased, keepdim), {correction=}; NORM x:op(p, dim,
         keepdim); NONE (reached through another binding: x:max() is max's).
     A single MAX or MIN pass has no identity: an empty reduced dim is an
     error. A new pass is a line in mt_reduce.c's pass list.
   - derivative: as above, with G the result's gradient and, beyond the
     elementwise language:
       EXPAND(t)  t, shaped like the result, broadcast back to X's shape;
       SUMR(t)    t summed over the reduced dims (kept, as ones);
       N          how many elements each result element reduces;
       P          the op's parameter (var's and std's correction, norm's p);
       NAMED(fn)  fn(node, G, X, R) of src/autograd/ag_reduce.c, for the
                  derivatives too long for one expression.
     reads may also be INPUT_RESULT. */
#define MT_REDUCE_OPS(OP, E)                                                                           \
  OP(sum, RED(SUM, NONE, SAME, WIDEN, DIMS), E, DERIV(NOTHING, EXPAND(G)), AC_FP32, ANY, "")            \
  /* NaN counts as zero, and takes no gradient */                                                      \
  OP(nansum, RED(NANSUM, NONE, SAME, WIDEN, DIMS), E, DERIV(INPUT, WHERE(F(isnan, X), 0, EXPAND(G))),   \
    AC_FP32, ANY, "")                                                                                  \
  OP(mean, RED(SUM, NONE, MEAN, FLOAT, DIMS), E, DERIV(NOTHING, DIV(EXPAND(G), N)), AC_NONE, ANY, "")   \
  /* the product of the others, zeros included */                                                      \
  OP(prod, RED(PROD, NONE, SAME, WIDEN, DIMS), E, DERIV(INPUT, NAMED(prod_grad)), AC_FP32, ANY, "")     \
  /* ties share the gradient evenly */                                                                 \
  OP(amax, RED(MAX, NONE, SAME, SAME, DIMS), E,                                                         \
    DERIV(INPUT_RESULT, LET(M, EQ(X, EXPAND(R)), DIV(MUL(EXPAND(G), M), SUMR(M)))), AC_NONE, ANY, "")   \
  OP(amin, RED(MIN, NONE, SAME, SAME, DIMS), E,                                                         \
    DERIV(INPUT_RESULT, LET(M, EQ(X, EXPAND(R)), DIV(MUL(EXPAND(G), M), SUMR(M)))), AC_NONE, ANY, "")   \
  /* x:max() and x:min(), of every element (x:max(dim) is a selection) */                             \
  OP(max, RED(MAX, NONE, SAME, SAME, NONE), E,                                                          \
    DERIV(INPUT_RESULT, LET(M, EQ(X, EXPAND(R)), DIV(MUL(EXPAND(G), M), SUMR(M)))), AC_NONE, ANY, "")   \
  OP(min, RED(MIN, NONE, SAME, SAME, NONE), E,                                                          \
    DERIV(INPUT_RESULT, LET(M, EQ(X, EXPAND(R)), DIV(MUL(EXPAND(G), M), SUMR(M)))), AC_NONE, ANY, "")   \
  /* x:median(), the lower median of every element (x:median(dim) is a selection); ties share the      \
     gradient, as PyTorch's */                                                                        \
  OP(median, RED(MEDIAN, NONE, SAME, SAME, NONE), E,                                                    \
    DERIV(INPUT_RESULT, LET(M, EQ(X, EXPAND(R)), DIV(MUL(EXPAND(G), M), SUMR(M)))), AC_NONE, UNIQ, "")  \
  OP(all, RED(NONZERO, NONE, ALL, BOOL, DIMS), E, NODERIV, AC_NONE, ANY, "")                            \
  OP(any, RED(NONZERO, NONE, ANY, BOOL, DIMS), E, NODERIV, AC_NONE, ANY, "")                            \
  OP(count_nonzero, RED(NONZERO, NONE, SAME, INT64, DIMS), E, NODERIV, AC_NONE, ANY, "")                \
  /* g exp(x - r) */                                                                                   \
  OP(logsumexp, RED(MAX, EXPSUM, LSE, TO_FLOAT, DIMS), E,                                               \
    DERIV(INPUT_RESULT, MUL(EXPAND(G), F(exp, SUB(X, EXPAND(R))))), AC_FP32, ANY, "")                  \
  /* divisor max(0, N - correction); var' = 2 (x - mean) / divisor, std' = var' / (2 std) */           \
  OP(var, RED(SUM, SQDEV, VAR, FLOAT, VAR), E,                                                          \
    DERIV(INPUT, MUL(EXPAND(G), MUL(SUB(X, DIV(SUMR(X), N)), 2 / fmax(0, N - P)))), AC_NONE, ANY, "")  \
  OP(std, RED(SUM, SQDEV, STD, FLOAT, VAR), E,                                                          \
    DERIV(INPUT_RESULT, DIV(MUL(EXPAND(G), SUB(X, DIV(SUMR(X), N))), MUL(EXPAND(R), fmax(0, N - P)))), \
    AC_NONE, ANY, "")                                                                                  \
  /* p = 0 counts nonzeros (no gradient), +-inf is max/min |x| */                                      \
  OP(norm, RED(NORM, NONE, ROOT, FLOAT, NORM), E, DERIV(INPUT_RESULT, NAMED(norm_grad)), AC_FP32, ANY, \
    "")

/* ---- along one dim: a result of x's shape, each slice along dim computed
   from that slice ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: ALONG(call), the kernel as a call of src/tensor/mt_reduce.h in
     r, x, dim (0-based) and dtype (the dtype= option, -1 none); Lua calls
     it as x:op(dim), x:op(dim, {dtype=}).
   - derivative: as the reductions', over the one dim (SUMR sums along it,
     N is its length), and CUMSUM(t), t's running sum along it. */
#define MT_ALONG_OPS(OP, E)                                                                            \
  /* the running sum of g from the far end: sum(g) - cumsum(g) + g */                                \
  OP(cumsum, ALONG(mt_cumulative(r, x, dim, 0, dtype)), E, DERIV(NOTHING, ADD(SUB(SUMR(G), CUMSUM(G)), G)), \
    AC_FP32, ANY, "")                                                                                  \
  /* zeros take the slow exact path: see cumprod_grad */                                              \
  OP(cumprod, ALONG(mt_cumulative(r, x, dim, 1, dtype)), E, DERIV(INPUT_RESULT, NAMED(cumprod_grad)),  \
    AC_FP32, ANY, "")                                                                                  \
  /* y (g - sum(g y)), from the result alone */                                                       \
  OP(softmax, ALONG(mt_softmax(r, x, dim, 0, dtype)), E, DERIV(RESULT, MUL(R, SUB(G, SUMR(MUL(G, R))))), \
    AC_FP32, ANY, "")                                                                                  \
  /* g - exp(y) sum(g) */                                                                             \
  OP(log_softmax, ALONG(mt_softmax(r, x, dim, 1, dtype)), E,                                            \
    DERIV(RESULT, SUB(G, MUL(F(exp, R), SUMR(G)))), AC_FP32, ANY, "")

/* ---- selections along a dim: values of x and their indices ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: SELECT(call, signature): the kernel as a call of
     src/tensor/mt_reduce.h in values, indices (int64, 0-based), x, k, dim
     (0-based), keepdim and flag (descending for sort, largest for topk);
     signature is how Lua calls it (src/vm/lt_reduce.c), the dim defaulting
     to the last:
       DIM   x:op(dim, keepdim), {dim=, keepdim=}
       KTH   x:op(k, dim, keepdim), {dim=, keepdim=}
       SORT  x:op(dim, descending), x:op(descending), {dim=, descending=}
       TOPK  x:op(k, dim, largest, sorted), {dim=, largest=}
       ARG   x:op() (every element: k is 1), x:op(dim, keepdim), {dim=,
             keepdim=}; the indices alone
     An entry named op_dim is op's form along one dim: Lua reaches it
     through op's binding (x:max(2) is max's), and its node is op's
     (MaxBackward), as PyTorch names it.
   - derivative: DERIV(INDICES, AT_INDICES(G)): G placed at the returned
     indices along dim (distinct within a slice), zeros elsewhere; the node
     saves the indices only. */
#define MT_SELECT_OPS(OP, E)                                                                           \
  OP(max_dim, SELECT(mt_max_dim(values, indices, x, dim, keepdim, 0), DIM), E,                          \
    DERIV(INDICES, AT_INDICES(G)), AC_NONE, ANY, "")                                                   \
  OP(min_dim, SELECT(mt_max_dim(values, indices, x, dim, keepdim, 1), DIM), E,                          \
    DERIV(INDICES, AT_INDICES(G)), AC_NONE, ANY, "")                                                   \
  /* the lower median */                                                                             \
  OP(median_dim, SELECT(mt_median(values, indices, x, dim, keepdim), DIM), E,                           \
    DERIV(INDICES, AT_INDICES(G)), AC_NONE, ANY, "")                                                   \
  /* the most frequent value, the smallest among ties, at its last index */                          \
  OP(mode, SELECT(mt_mode(values, indices, x, dim, keepdim), DIM), E, DERIV(INDICES, AT_INDICES(G)),  \
    AC_NONE, ANY, "")                                                                                  \
  OP(kthvalue, SELECT(mt_kthvalue(values, indices, x, k, dim, keepdim), KTH), E,                        \
    DERIV(INDICES, AT_INDICES(G)), AC_NONE, ANY, "")                                                   \
  /* stable; NaN sorts above every number */                                                         \
  OP(sort, SELECT(mt_sort(values, indices, x, dim, flag), SORT), E, DERIV(INDICES, AT_INDICES(G)),     \
    AC_NONE, ANY, "")                                                                                  \
  OP(topk, SELECT(mt_topk(values, indices, x, k, dim, flag), TOPK), E, DERIV(INDICES, AT_INDICES(G)),  \
    AC_NONE, ANY, "")                                                                                  \
  /* the index of the max (min) along dim, the first among ties; no values, no derivative */         \
  OP(argmax, SELECT(mt_argmax(indices, x, dim, (int)k, keepdim, 0), ARG), E, NODERIV, AC_NONE, ANY, "") \
  OP(argmin, SELECT(mt_argmax(indices, x, dim, (int)k, keepdim, 1), ARG), E, NODERIV, AC_NONE, ANY, "")

/* ---- linear algebra: products of matrices and vectors ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: PRODUCT(call, shapes), the kernel as a call of
     src/tensor/mt_linalg.h in r, a and b; Lua calls it as a:op(b) and
     torch.op(a, b). shapes is the factors' shapes, one word each, a letter
     per dim: the contracted size K is shared, B is a batch (for matmul,
     "..." is any number of batch dims, broadcast, and a factor may be a
     vector).
     ADD_PRODUCT(call, shapes): r = beta * input + alpha * product(a, b), a
     call in r, input, a, b, beta, alpha and inplace (r is input then);
     shapes has input's first (it broadcasts to the product's). Lua calls it
     as input:op(a, b) with {beta=, alpha=} last or Torch7's numbers
     (input:op(alpha, a, b), input:op(beta, alpha, a, b),
     torch.op(beta, input, alpha, a, b)), and input:op_(a, b) in place.
   - derivative: DERIV2 as the binary ops', A and B the two factors; the
     add* ops DERIV3(reads, expr_input, reads_a, expr_a, reads_b, expr_b),
     where reads A and B still name the factors (input's gradient reads
     nothing), and BETA and ALPHA are the op's scalars. Beyond the
     elementwise language:
       MM(l, r)      l @ r of matrices, laid out like the operand whose
                     gradient it is: a column-major one (a linear layer's
                     weight read as weight:t()) gets a column-major gradient,
                     which accumulates without a transposing copy;
       MATMUL(l, r)  matmul's product (vectors and batches broadcast);
       OUTER(l, r)   the outer product of two vectors;
       MT(t)         t with its last two dims swapped;
       NAMED(fn)     fn(node, which input, G, A, B) of
                     src/autograd/ag_linalg.c.
     matmul records as the product its shapes make it (mm, mv, dot or bmm,
     whose entries give the node's name and derivative), as PyTorch. */
#define MT_PRODUCT_OPS(OP, E)                                                                          \
  OP(mm, PRODUCT(mt_mm(r, a, b), "MK KN"), E, DERIV2(B, MM(G, MT(B)), A, MM(MT(A), G)), AC_LOWER,       \
    ANY ANY, "")                                                                                       \
  OP(mv, PRODUCT(mt_mv(r, a, b), "MK K"), E, DERIV2(B, OUTER(G, B), A, MATMUL(MT(A), G)), AC_LOWER,     \
    ANY ANY, "")                                                                                       \
  OP(dot, PRODUCT(mt_dot(r, a, b), "K K"), E, DERIV2(B, MUL(G, B), A, MUL(G, A)), AC_PROMOTE, ANY ANY,  \
    "")                                                                                                \
  OP(bmm, PRODUCT(mt_bmm(r, a, b), "BMK BKN"), E, DERIV2(B, MATMUL(G, MT(B)), A, MATMUL(MT(A), G)),     \
    AC_LOWER, ANY ANY, "")                                                                             \
  /* the other shapes: vector @ matrix, stacks, broadcast batches */                                 \
  OP(matmul, PRODUCT(mt_matmul(r, a, b), "...MK ...KN"), E,                                             \
    DERIV2(AB, NAMED(matmul_grad), AB, NAMED(matmul_grad)), AC_LOWER, ANY ANY, "")                     \
  OP(outer, PRODUCT(mt_outer(r, a, b), "M N"), E, DERIV2(B, MATMUL(G, B), A, MATMUL(A, G)), AC_NONE,    \
    ANY ANY, "ger")

#define MT_ADD_PRODUCT_OPS(OP, E)                                                                      \
  OP(addmm, ADD_PRODUCT(mt_addmm(r, input, a, b, beta, alpha, inplace), "MN MK KN"), E,                 \
    DERIV3(NOTHING, MUL(G, BETA), B, MM(MUL(G, ALPHA), MT(B)), A, MM(MT(A), MUL(G, ALPHA))), AC_LOWER,  \
    ANY ANY ANY, "")                                                                                   \
  OP(addmv, ADD_PRODUCT(mt_addmv(r, input, a, b, beta, alpha, inplace), "M MK K"), E,                   \
    DERIV3(NOTHING, MUL(G, BETA), B, OUTER(MUL(G, ALPHA), B), A, MATMUL(MT(A), MUL(G, ALPHA))),         \
    AC_LOWER, ANY ANY ANY, "")                                                                         \
  OP(addr, ADD_PRODUCT(mt_addr(r, input, a, b, beta, alpha, inplace), "MN M N"), E,                     \
    DERIV3(NOTHING, MUL(G, BETA), B, MATMUL(MUL(G, ALPHA), B), A, MATMUL(A, MUL(G, ALPHA))), AC_LOWER,  \
    ANY ANY ANY, "")                                                                                   \
  OP(baddbmm, ADD_PRODUCT(mt_baddbmm(r, input, a, b, beta, alpha, inplace), "BMN BMK BKN"), E,          \
    DERIV3(NOTHING, MUL(G, BETA), B, MATMUL(MUL(G, ALPHA), MT(B)), A, MATMUL(MT(A), MUL(G, ALPHA))),    \
    AC_LOWER, ANY ANY ANY, "")                                                                         \
  /* the products of the batch summed: G, one matrix, broadcasts over it */                           \
  OP(addbmm, ADD_PRODUCT(mt_addbmm(r, input, a, b, beta, alpha, inplace), "MN BMK BKN"), E,             \
    DERIV3(NOTHING, MUL(G, BETA), B, MATMUL(MUL(G, ALPHA), MT(B)), A, MATMUL(MT(A), MUL(G, ALPHA))),    \
    AC_LOWER, ANY ANY ANY, "")

/* ---- elementwise with parameters ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: PARAM(call, signature): the kernel as a call of
     src/tensor/mt_ops.h in r, in (the operands: in[0].t is the tensor the
     op is called on, in[1] and in[2] the others, each a tensor or a number),
     p (the parameters, p[0] and p[1]), inplace (r is in[0].t then) and
     default_float. signature is how Lua calls it (src/vm/lt_shape.c), one
     word per argument after the tensor: a plain word is a tensor, a word
     ending in # a tensor or a number, name=default a number parameter; the
     parameters may also come as {name=} last, and Torch7's x:op(value, t1,
     t2) gives a leading number to the first parameter.
   - derivative: DERIV (one operand), DERIV2 (two) or DERIV3 (three) as
     above, in A, B and C, the operands (X is A), each a tensor or a number,
     P1 and P2, the parameters; NAMED(fn) is fn(node, which operand, G, A,
     B, C) of src/autograd/ag_pointwise.c. reads may name C too (AC, BC,
     ABC).
   PARAM_INPLACE(call, signature) is an op that exists in place only: Lua
   calls it as x:op_(...) and, as Torch7, x:op(...), both writing x. */
#define MT_PARAM_OPS(OP, E)                                                                            \
  /* min(max(x, lo), hi): hi wins where lo > hi; the derivative is PyTorch's subgradient, see           \
     clamp_grad */                                                                                    \
  OP(clamp, PARAM(mt_clamp_operands(r, in, 3, inplace, default_float), "min# max#"), E,                 \
    DERIV3(ABC, NAMED(clamp_grad), ABC, NAMED(clamp_grad), ABC, NAMED(clamp_grad)), AC_PROMOTE,         \
    ANY ANY ANY, "clip")                                                                               \
  OP(clamp_min, PARAM(mt_clamp_operands(r, in, 1, inplace, default_float), "min#"), E,                  \
    DERIV2(AB, NAMED(clamp_grad), AB, NAMED(clamp_grad)), AC_PROMOTE, ANY ANY, "")                     \
  OP(clamp_max, PARAM(mt_clamp_operands(r, in, 2, inplace, default_float), "max#"), E,                  \
    DERIV2(AB, NAMED(clamp_grad), AB, NAMED(clamp_grad)), AC_PROMOTE, ANY ANY, "")                     \
  /* log(1 + exp(beta x)) / beta, x itself where beta x > threshold */                                \
  OP(softplus, PARAM(mt_softplus(r, in[0].t, p[0], p[1]), "beta=1 threshold=20"), E,                    \
    DERIV(INPUT, LET(Z, MUL(X, P1), WHERE(GT(Z, P2), G, MUL(G, F(sigmoid, Z))))), AC_FP32, ANY, "")    \
  OP(leaky_relu, PARAM(mt_leaky_relu(r, in[0].t, p[0], inplace), "negative_slope=0.01"), E,             \
    DERIV(INPUT, WHERE(GT(X, 0), G, MUL(G, P1))), AC_NONE, ANY, "")                                    \
  /* x + value t1 t2, x + value t1 / t2 */                                                            \
  OP(addcmul, PARAM(mt_addc(r, in[0].t, in[1].t, in[2].t, p[0], 0, inplace, default_float),             \
                    "tensor1 tensor2 value=1"), E,                                                     \
    DERIV3(NOTHING, G, C, MUL(G, MUL(C, P1)), B, MUL(G, MUL(B, P1))), AC_PROMOTE, ANY ANY ANY, "")     \
  OP(addcdiv, PARAM(mt_addc(r, in[0].t, in[1].t, in[2].t, p[0], 1, inplace, default_float),             \
                    "tensor1 tensor2 value=1"), E,                                                     \
    DERIV3(NOTHING, G, C, DIV(MUL(G, P1), C), BC, NEG(DIV(MUL(MUL(G, P1), B), MUL(C, C)))), AC_PROMOTE, \
    ANY ANY BIG, "")                                                                                   \
  /* x + weight (end - x) */                                                                          \
  OP(lerp, PARAM(mt_lerp(r, in[0].t, in[1].t, &in[2], inplace), "end weight#"), E,                      \
    DERIV3(C, MUL(G, SUB(1, C)), C, MUL(G, C), AB, MUL(G, SUB(B, A))), AC_NONE, ANY ANY ANY, "")        \
  /* writes into x, in place only (x:fill_(v), Torch7's x:fill(v), zero, copy): a value (a number,    \
     exact for any integer, or a tensor of one element) or a source (on any device; broadcast to x,    \
     or as Torch7 any contiguous tensor of x's element count). x's gradient is zero; the value's is G   \
     summed, the source's G summed back to its shape (viewed in it, for Torch7's), cast to its dtype */ \
  OP(fill, PARAM_INPLACE(mt_fill_operand(r, in[0].t, &in[1], inplace), "value#"), E,                      \
    DERIV2(NOTHING, MUL(G, 0), NOTHING, G), AC_NONE, ANY ANY, "")                                        \
  OP(zero, PARAM_INPLACE(mt_fill_operand(r, in[0].t, NULL, inplace), ""), E, DERIV(NOTHING, MUL(G, 0)),   \
    AC_NONE, ANY, "")                                                                                  \
  OP(copy, PARAM_INPLACE(mt_copy_operand(r, in[0].t, in[1].t, inplace), "src"), E,                        \
    DERIV2(NOTHING, MUL(G, 0), NOTHING, NAMED(copy_grad)), AC_NONE, ANY ANY, "")                          \
  /* input where the condition holds, other elsewhere: torch.where(cond, input, other) and            \
     input:where(cond, other) bind it themselves (src/vm/lt_index.c) */                               \
  OP(where, PARAM(mt_where(r, in[0].t, &in[1], &in[2], default_float), "input# other#"), E,             \
    DERIV3(NOTHING, MUL(G, 0), A, WHERE(A, G, 0), A, WHERE(A, 0, G)), AC_PROMOTE, COND ANY ANY, "")

/* ---- indexing: elements picked by an index tensor along a dim ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: INDEX(call, signature): the kernel as a call of
     src/tensor/mt_index.h in r, x, dim (0-based), index (int64) and base
     (what the first index is: the bindings' 1); Lua calls it as x:op(dim,
     index), the index a tensor or a table of integers. signature is the
     index's shape: SELECT one index per slice along dim (a vector), GATHER
     one per element of the result (x's number of dims).
   - derivative: DERIV(INDICES, expr): the node saves the index only;
     INDEX_ADD(t) is t added into zeros of X's shape at the indices along dim
     (index_add), SCATTER_ADD(t) the same elementwise (scatter_add); both
     are recorded, and linear. */
#define MT_INDEX_OPS(OP, E)                                                                            \
  OP(index_select, INDEX(mt_index_select(r, x, dim, index, base), SELECT), E,                           \
    DERIV(INDICES, INDEX_ADD(G)), AC_NONE, ANY, "index")                                               \
  OP(gather, INDEX(mt_gather(r, x, dim, index, base), GATHER), E, DERIV(INDICES, SCATTER_ADD(G)),       \
    AC_NONE, ANY, "")

/* ---- puts: x with a source written at an index along a dim ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: PUT(call, signature): the kernel as a call of
     src/tensor/mt_index.h writing into r (a copy of x, or x itself in
     place) in r, dim (0-based), index (int64), src, alpha and base; Lua
     calls it as x:op(dim, index, source) and x:op_(...) in place.
     signature: the index's shape (SELECT: a vector, one index per slice;
     GATHER: one per source element), then the source's kind (SOURCE: a
     tensor; VALUE: a number or a 0-dim tensor, which the binding makes a
     0-dim tensor of x's dtype): SELECT_SOURCE, ..., GATHER_VALUE.
   - derivative: DERIV2(reads_x, expr_x, reads_src, expr_src); reads
     INDICES (the node saves the index). Beyond the elementwise language,
     in G, ALPHA (index_add's multiplier) and:
       ZERO_AT(t)       t with the places the op writes set to 0;
       INDEX_SELECT(t)  t read back at the index along dim, in the source's shape;
       GATHER(t)        the same, elementwise (scatter's way).
     An entry named op_fill is op with a value: Lua reaches it through op's
     binding (x:scatter(dim, index, 2.5)). */
#define MT_PUT_OPS(OP, E)                                                                              \
  OP(index_add, PUT(mt_index_add(r, dim, index, src, alpha, base), SELECT_SOURCE), E,                   \
    DERIV2(INDICES, G, INDICES, MUL(INDEX_SELECT(G), ALPHA)), AC_NONE, ANY ANY, "")                    \
  /* repeated indices: the last write stays */                                                        \
  OP(index_copy, PUT(mt_index_copy(r, dim, index, src, base), SELECT_SOURCE), E,                        \
    DERIV2(INDICES, ZERO_AT(G), INDICES, INDEX_SELECT(G)), AC_NONE, ANY ANY, "")                       \
  /* the value's gradient: the sum of g where it was written */                                       \
  OP(index_fill, PUT(mt_index_fill(r, dim, index, src, base), SELECT_VALUE), E,                         \
    DERIV2(INDICES, ZERO_AT(G), INDICES, SUB(G, ZERO_AT(G))), AC_NONE, ANY ANY, "")                    \
  OP(scatter, PUT(mt_scatter(r, dim, index, src, 0, base), GATHER_SOURCE), E,                           \
    DERIV2(INDICES, ZERO_AT(G), INDICES, GATHER(G)), AC_NONE, ANY ANY, "")                             \
  OP(scatter_fill, PUT(mt_scatter_fill(r, dim, index, src, 0, base), GATHER_VALUE), E,                  \
    DERIV2(INDICES, ZERO_AT(G), INDICES, SUB(G, ZERO_AT(G))), AC_NONE, ANY ANY, "")                    \
  OP(scatter_add, PUT(mt_scatter(r, dim, index, src, 1, base), GATHER_SOURCE), E,                       \
    DERIV2(INDICES, G, INDICES, GATHER(G)), AC_NONE, ANY ANY, "")

/* ---- masks: the elements of x where a bool mask (broadcast with x) is set ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: MASK(call, signature): the kernel as a call of
     src/tensor/mt_index.h in r, x, mask, src and inplace (r is x then);
     Lua calls it as x:op(mask, source) and x:op_(...) in place. signature
     is what follows the mask: VALUE (a number or a 0-dim tensor), SOURCE (a
     tensor, read in row-major order) or NONE.
   - derivative: DERIV or DERIV2 (x, then the source) in G and M (the mask,
     which the node saves: reads INDICES), with
       MASK_PUT(t)       t (one value per set element) placed where the mask
                         is set, in zeros of x and the mask broadcast;
       MASKED_SOURCE(t)  t where the mask is set, in order, in the source's
                         shape, zeros after. */
#define MT_MASK_OPS(OP, E)                                                                             \
  OP(masked_fill, MASK(inplace ? mt_masked_fill(r, mask, src) : mt_masked_fill_out(r, x, mask, src), VALUE), \
    E, DERIV2(INDICES, WHERE(M, 0, G), INDICES, WHERE(M, G, 0)), AC_NONE, ANY ANY, "")                 \
  OP(masked_scatter, MASK(mt_masked_scatter_op(r, x, mask, src, inplace), SOURCE), E,                   \
    DERIV2(INDICES, WHERE(M, 0, G), INDICES, MASKED_SOURCE(G)), AC_NONE, ANY ANY, "")                  \
  OP(masked_select, MASK(mt_masked_select(r, x, mask), NONE), E, DERIV(INDICES, MASK_PUT(G)), AC_NONE,   \
    ANY, "maskedSelect")

/* ---- views and rearrangements of one tensor ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: VIEW(call, signature, node): the kernel as a call of
     src/tensor (mt_tensor.h, mt_shape.h) in r, x, a (the op's
     mt_view_args: a->i[] its scalars in the signature's order, a dim
     0-based; a->v and a->w its lists of a->n and a->m values) and inplace
     (r is x then; tril_ and triu_ alone have it).
     signature is how Lua calls it after the tensor, one name:type word per
     argument:
       shape    the rest of the arguments as sizes: numbers, or one table
                or torch.Size; like the same, or a tensor (its shape:
                x:view_as(y));
       dims     the rest as dims of x: numbers, or one table;
       dimlist  one argument, a dim of x or a table of them;
       ints     one argument, an integer or a table of them;
       dim      a dim of x (1-based, negative from the end); newdim a
                dim of the result, which has one more (unsqueeze);
       pos      a 1-based position along the dim before it (0 is refused,
                negative counts from the end);
       int      an integer;
       offset   a 1-based storage offset, x's own when absent.
     A word ending in ? may be absent (a dim: MT_MAX_DIMS, a list: empty);
     name=default gives a default (1-based for a dim), and the argument may
     come as {name=} last. The scalars fill a->i, the lists a->v then a->w.
     node names the autograd node, PyTorch's: View is ViewBackward.
   - derivative: DERIV(NOTHING, expr) in G, with the node holding the op's
     arguments:
       RESHAPE(t)     t in X's shape (the views that keep the elements' order);
       SUM_TO(t)      t summed back to X's shape (expand);
       SELF(t)        the op itself on t, with the same arguments (flip,
                      transpose, tril: their own adjoints);
       INVERSE(t)     the inverse op on t (permute, movedim, roll);
       INTO_ZEROS(t)  zeros of X's shape with t added into the op's view of
                      them (narrow, select, diagonal, unfold, as_strided:
                      windows and strides that overlap add up); recorded,
                      its own derivative being the op;
       NAMED(fn)      fn(node, G) of src/autograd/ag_shape.c. */
#define MT_VIEW_OPS(OP, E)                                                                             \
  OP(view, VIEW(mt_view(r, x, a->n, a->v), "shape:like", View), E, DERIV(NOTHING, RESHAPE(G)), AC_NONE, \
    ANY, "view_as")                                                                                    \
  /* a view when the strides allow one, else a copy */                                                \
  OP(reshape, VIEW(mt_reshape(r, x, a->n, a->v), "shape:like", View), E, DERIV(NOTHING, RESHAPE(G)),   \
    AC_NONE, ANY, "reshape_as")                                                                        \
  OP(flatten, VIEW(mt_flatten(r, x, (int)a->i[0], (int)a->i[1]), "start_dim:dim=1 end_dim:dim=-1", View), E,     \
    DERIV(NOTHING, RESHAPE(G)), AC_NONE, ANY, "")                                                      \
  OP(unflatten, VIEW(mt_unflatten(r, x, (int)a->i[0], a->v, a->n), "dim:dim sizes:shape", View), E,          \
    DERIV(NOTHING, RESHAPE(G)), AC_NONE, ANY, "")                                                      \
  /* without a dim, every dim of size 1 */                                                            \
  OP(squeeze, VIEW(mt_squeeze(r, x, (int)a->i[0]), "dim:dim?", Squeeze), E, DERIV(NOTHING, RESHAPE(G)),     \
    AC_NONE, ANY, "")                                                                                  \
  OP(unsqueeze, VIEW(mt_unsqueeze(r, x, (int)a->i[0]), "dim:newdim", Unsqueeze), E,                         \
    DERIV(NOTHING, RESHAPE(G)), AC_NONE, ANY, "")                                                      \
  /* sizes of -1 keep x's; new leading dims broadcast */                                              \
  OP(expand, VIEW(mt_expand(r, x, a->n, a->v), "size:like", Expand), E, DERIV(NOTHING, SUM_TO(G)),     \
    AC_NONE, ANY, "expand_as expandAs")                                                                \
  /* a matrix transposed; a vector or a 0-dim tensor as it is */                                      \
  OP(t, VIEW(mt_t(r, x), "", T), E, DERIV(NOTHING, SELF(G)), AC_NONE, ANY, "")                         \
  OP(transpose, VIEW(mt_transpose(r, x, (int)a->i[0], (int)a->i[1]), "dim0:dim dim1:dim", Transpose), E,        \
    DERIV(NOTHING, SELF(G)), AC_NONE, ANY, "swapaxes swapdims")                                        \
  OP(permute, VIEW(mt_permute_n(r, x, a->v, a->n), "dims:dims", Permute), E, DERIV(NOTHING, INVERSE(G)), \
    AC_NONE, ANY, "")                                                                                  \
  OP(movedim, VIEW(mt_movedim_n(r, x, a->v, a->n, a->w, a->m), "source:dimlist destination:dimlist",  \
                   Permute), E, DERIV(NOTHING, INVERSE(G)), AC_NONE, ANY, "moveaxis")                  \
  OP(narrow, VIEW(mt_narrow(r, x, (int)a->i[0], a->i[1], a->i[2]), "dim:dim start:pos length:int", Narrow),  \
    E, DERIV(NOTHING, INTO_ZEROS(G)), AC_NONE, ANY, "")                                                \
  OP(select, VIEW(mt_select(r, x, (int)a->i[0], a->i[1]), "dim:dim index:pos", Select), E,                  \
    DERIV(NOTHING, INTO_ZEROS(G)), AC_NONE, ANY, "")                                                   \
  OP(diagonal, VIEW(mt_diagonal(r, x, a->i[0], (int)a->i[1], (int)a->i[2]), "offset:int=0 dim1:dim=1 dim2:dim=2", \
                    Diagonal), E, DERIV(NOTHING, INTO_ZEROS(G)), AC_NONE, ANY, "")                     \
  /* windows of size along dim, step apart, as a new last dim */                                      \
  OP(unfold, VIEW(mt_unfold(r, x, (int)a->i[0], a->i[1], a->i[2]), "dimension:dim size:int step:int", Unfold), \
    E, DERIV(NOTHING, INTO_ZEROS(G)), AC_NONE, ANY, "")                                                \
  /* its gradient needs a contiguous x that holds every element the view reads */                     \
  OP(as_strided, VIEW(mt_as_strided_n(r, x, a->v, a->n, a->w, a->m, a->i[0]),                          \
                      "size:ints stride:ints storage_offset:offset?", AsStrided), E,                   \
    DERIV(NOTHING, INTO_ZEROS(G)), AC_NONE, ANY, "")                                                   \
  OP(flip, VIEW(mt_flip_n(r, x, a->v, a->n), "dims:dims", Flip), E, DERIV(NOTHING, SELF(G)), AC_NONE,    \
    ANY, "")                                                                                           \
  OP(fliplr, VIEW(mt_flip_at_least(r, x, 1, 2, "fliplr"), "", Flip), E, DERIV(NOTHING, SELF(G)),        \
    AC_NONE, ANY, "")                                                                                  \
  OP(flipud, VIEW(mt_flip_at_least(r, x, 0, 1, "flipud"), "", Flip), E, DERIV(NOTHING, SELF(G)),        \
    AC_NONE, ANY, "")                                                                                  \
  /* without dims, the flattened tensor rolls */                                                      \
  OP(roll, VIEW(mt_roll_n(r, x, a->v, a->n, a->w, a->m), "shifts:ints dims:dimlist?", Roll), E,          \
    DERIV(NOTHING, INVERSE(G)), AC_NONE, ANY, "")                                                      \
  /* the lower (upper) triangle of the last two dims from the diagonal'th on; in place too */         \
  OP(tril, VIEW(mt_tri(r, x, a->i[0], 0, inplace), "diagonal:int=0", Tril), E, DERIV(NOTHING, SELF(G)), \
    AC_NONE, ANY, "")                                                                                  \
  OP(triu, VIEW(mt_tri(r, x, a->i[0], 1, inplace), "diagonal:int=0", Triu), E, DERIV(NOTHING, SELF(G)), \
    AC_NONE, ANY, "")                                                                                  \
  /* a copy of x, contiguous (x:contiguous() is x itself when x is, else x:clone()) */                \
  OP(clone, VIEW(mt_clone(r, x), "", Clone), E, DERIV(NOTHING, G), AC_NONE, ANY, "")                  \
  /* x tiled: the gradient sums the copies */                                                         \
  OP(repeat, VIEW(mt_repeat(r, x, a->v, a->n), "repeats:shape", Repeat), E,                             \
    DERIV(NOTHING, NAMED(repeat_grad)), AC_NONE, ANY, "repeatTensor")                                  \
  /* not a view: the positions of x's nonzero elements, count x ndim int64, counting from a->i[0]      \
     (the binding's 1); one tensor in and one out, as the family's. x:nonzero({as_tuple=true}) and    \
     torch.where(cond) bind it themselves (src/vm/lt_index.c) */                                      \
  OP(nonzero, VIEW(mt_nonzero(r, x, a->i[0]), "", Nonzero), E, NODERIV, AC_NONE, ANY, "")

/* ---- joins: one tensor from a list of them ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: JOIN(call): the kernel as a call of src/tensor/mt_shape.h in r,
     ts (the list), n and dim (0-based; for stack, the new dim's place); Lua
     calls it as torch.op({tensors}, dim), Torch7's torch.op(a, b, ..., dim)
     and {dim=}, the dim defaulting to 1. The list counts as one input.
   - derivative: DERIV(NOTHING, PART(G)): each input's part of G (its slice
     along dim for cat, its place along the new dim for stack). */
#define MT_JOIN_OPS(OP, E)                                                                             \
  /* 1-D empty tensors are skipped, as PyTorch */                                                     \
  OP(cat, JOIN(mt_cat(r, ts, n, dim)), E, DERIV(NOTHING, PART(G)), AC_PROMOTE, ANY, "concat concatenate") \
  OP(stack, JOIN(mt_stack(r, ts, n, dim)), E, DERIV(NOTHING, PART(G)), AC_PROMOTE, ANY, "")

/* ---- nn kernels: the layers of convolutional networks ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: NN(call, binding, node): the kernel as a call of src/tensor
     (mt_conv.h, mt_pool.h, mt_resample.h, mt_norm.h) in r and a, the op's
     mt_nn_args (src/tensor/mt_ops.h): a->x, a->w and a->b the input, the
     weight and the bias (NULL: none), a->conv, a->rs, a->norm and a->pool
     the geometry, a->aux a second result (the statistics of a
     normalisation, the bias's gradient of conv2d_weight). binding is the
     Lua function, torch.<binding>, the positional form nn.functional
     builds on (src/vm/lt_conv.c reads its arguments, in l_<name>), or ""
     for an op that only derivatives call. node is the autograd node's name.
   - derivative: DERIV(reads, BACKWARD(kind)): the backward function of kind
     (conv: src/autograd/ag_conv.c; resample, im2col: ag_spatial.c; norm:
     ag_norm.c), which computes each input's gradient with this list's ops
     through the dispatcher, so that create_graph records them again and
     higher derivatives follow (a map's derivative is its adjoint, the
     adjoint's the map). reads is what the node saves: NOTHING, INPUTS (x
     and w), or STATS (x, w when there is one, and the statistics). The
     inputs are x, w and b: a list's arity is its domain's word count. */
#define MT_NN_OPS(OP, E)                                                                               \
  /* x (n, c, h, w), w (o, c / groups, kh, kw), b (o) */                                              \
  OP(conv2d, NN(mt_conv2d(r, a->x, a->w, a->b, a->conv), "_conv2d", ConvolutionBackward), E,           \
    DERIV(INPUTS, BACKWARD(conv)), AC_LOWER, ANY ANY ANY, "")                                          \
  /* conv2d's adjoint in its input: x like conv2d's output, w as conv2d's, b (c) */                   \
  OP(conv_transpose2d, NN(mt_conv2d_input_grad(r, a->x, a->w, a->b, a->conv), "_conv_transpose2d",     \
                          ConvTransposeBackward), E,                                                   \
    DERIV(INPUTS, BACKWARD(conv)), AC_LOWER, ANY ANY ANY, "")                                          \
  /* conv2d's adjoint in its weight: x the input, w the output's gradient; with a->aux the bias's     \
     gradient too, in the same pass */                                                                 \
  OP(conv2d_weight, NN(mt_conv2d_weight_grad(r, a->aux, a->x, a->w, a->conv), "", ConvWeightBackward), \
    E, DERIV(INPUTS, BACKWARD(conv)), AC_LOWER, ANY ANY, "")                                           \
  /* the same over volumes (a->conv3): x (n, c, t, h, w), w (o, c / groups, kt, kh, kw), b (o); the  \
     frames' 2-D kernels, no CUDA kernel (F.conv3d composes the 2-D ones for GPU tensors) */          \
  OP(conv3d, NN(mt_conv3d(r, a->x, a->w, a->b, a->conv3), "_conv3d", Convolution3DBackward), E,       \
    DERIV(INPUTS, BACKWARD(conv)), AC_LOWER, ANY ANY ANY, "")                                          \
  OP(conv_transpose3d, NN(mt_conv3d_input_grad(r, a->x, a->w, a->b, a->conv3), "_conv_transpose3d",    \
                          ConvTranspose3DBackward), E,                                                 \
    DERIV(INPUTS, BACKWARD(conv)), AC_LOWER, ANY ANY ANY, "")                                          \
  OP(conv3d_weight, NN(mt_conv3d_weight_grad(r, a->aux, a->x, a->w, a->conv3), "",                     \
                       Conv3DWeightBackward), E, DERIV(INPUTS, BACKWARD(conv)), AC_LOWER, ANY ANY, "") \
  /* int64 positions of the windows' maxima (a->pool: kernel, stride, padding, dilation, each h and   \
     w; a->flag: ceil_mode); the values are x gathered there */                                       \
  OP(max_pool2d_indices, NN(mt_max_pool2d_indices(r, a->x, a->pool, a->pool + 2, a->pool + 4,          \
                                                  a->pool + 6, a->flag, a->base),                      \
                            "_max_pool2d_indices", None), E, NODERIV, AC_NONE, ANY, "")                 \
  /* the same over volumes x (n, c, t, h, w), a->pool each t, h and w; positions in t * h * w */    \
  OP(max_pool3d_indices, NN(mt_max_pool3d_indices(r, a->x, a->pool, a->pool + 3, a->pool + 6,          \
                                                  a->pool + 9, a->flag, a->base),                      \
                            "_max_pool3d_indices", None), E, NODERIV, AC_NONE, ANY, "")                 \
  /* window means over volumes x (n, c, t, h, w): a->pool kernel, stride, padding (each t, h, w);   \
     a->flag MT_RS_CEIL_MODE, MT_RS_COUNT_PAD, MT_RS_SUM (src/tensor/mt_resample.h) */                \
  OP(avg_pool3d, NN(mt_avg_pool3d(r, a->x, a->pool, a->flag, NULL), "_avg_pool3d", AvgPool3DBackward), \
    E, DERIV(NOTHING, BACKWARD(avg_pool3d)), AC_NONE, ANY, "")                                         \
  /* its adjoint onto the input volume a->pool + 9 (t, h, w): each the other's derivative */          \
  OP(avg_pool3d_adjoint, NN(mt_avg_pool3d(r, a->x, a->pool, a->flag, a->pool + 9), "",                 \
                            AvgPool3DAdjointBackward), E,                                              \
    DERIV(NOTHING, BACKWARD(avg_pool3d)), AC_NONE, ANY, "")                                            \
  OP(adaptive_max_pool2d_indices, NN(mt_adaptive_max_pool2d_indices(r, a->x, a->pool, a->base),        \
                                     "_adaptive_max_pool2d_indices", None), E, NODERIV, AC_NONE, ANY, "") \
  /* the separable resampling maps of the last two dims (a->rs) */                                    \
  OP(avg_pool2d, NN(mt_resample_apply(r, a->x, a->rs, 0, NULL), "_avg_pool2d", AvgPool2DBackward), E,  \
    DERIV(NOTHING, BACKWARD(resample)), AC_NONE, ANY, "")                                              \
  OP(adaptive_avg_pool2d, NN(mt_resample_apply(r, a->x, a->rs, 0, NULL), "_adaptive_avg_pool2d",       \
                             AdaptiveAvgPool2DBackward), E,                                            \
    DERIV(NOTHING, BACKWARD(resample)), AC_NONE, ANY, "")                                              \
  OP(reflection_pad2d, NN(mt_resample_apply(r, a->x, a->rs, 0, NULL), "_reflection_pad2d",             \
                          ReflectionPad2DBackward), E,                                                 \
    DERIV(NOTHING, BACKWARD(resample)), AC_FP32, ANY, "")                                              \
  OP(replication_pad2d, NN(mt_resample_apply(r, a->x, a->rs, 0, NULL), "_replication_pad2d",           \
                           ReplicationPad2DBackward), E,                                               \
    DERIV(NOTHING, BACKWARD(resample)), AC_FP32, ANY, "")                                              \
  OP(circular_pad2d, NN(mt_resample_apply(r, a->x, a->rs, 0, NULL), "_circular_pad2d",                 \
                        CircularPad2DBackward), E,                                                     \
    DERIV(NOTHING, BACKWARD(resample)), AC_NONE, ANY, "")                                              \
  OP(upsample_nearest2d, NN(mt_resample_apply(r, a->x, a->rs, 0, NULL), "_upsample_nearest2d",         \
                            UpsampleNearest2DBackward), E,                                             \
    DERIV(NOTHING, BACKWARD(resample)), AC_FP32, ANY, "")                                              \
  OP(upsample_bilinear2d, NN(mt_resample_apply(r, a->x, a->rs, 0, NULL), "_upsample_bilinear2d",       \
                             UpsampleBilinear2DBackward), E,                                           \
    DERIV(NOTHING, BACKWARD(resample)), AC_FP32, ANY, "")                                              \
  /* the adjoint of the map a->rs, onto an input plane a->pool (h, w) */                              \
  OP(resample_adjoint, NN(mt_resample_apply(r, a->x, a->rs, 1, a->pool), "", ResampleAdjointBackward), \
    E, DERIV(NOTHING, BACKWARD(resample)), AC_NONE, ANY, "")                                           \
  /* x (n, c, h, w) -> its windows as columns (n, c * kh * kw, l), and back (summed) */               \
  OP(im2col, NN(mt_im2col(r, a->x, a->conv), "_unfold", Im2ColBackward), E,                            \
    DERIV(NOTHING, BACKWARD(im2col)), AC_NONE, ANY, "")                                                \
  OP(col2im, NN(mt_col2im(r, a->x, a->conv), "_fold", Col2ImBackward), E,                              \
    DERIV(NOTHING, BACKWARD(im2col)), AC_NONE, ANY, "")                                                \
  /* x normalised with its statistics (a->aux, computed here: mt_norm_forward) over a->norm, then     \
     scaled by w and shifted by b */                                                                   \
  OP(batch_norm, NN(mt_norm_forward(r, a), "_batch_norm", NativeBatchNormBackward), E,                 \
    DERIV(STATS, BACKWARD(norm)), AC_NONE, ANY ANY ANY, "")                                            \
  OP(group_norm, NN(mt_norm_forward(r, a), "_group_norm", NativeGroupNormBackward), E,                 \
    DERIV(STATS, BACKWARD(norm)), AC_FP32, ANY ANY ANY, "")                                            \
  OP(layer_norm, NN(mt_norm_forward(r, a), "_layer_norm", NativeLayerNormBackward), E,                 \
    DERIV(STATS, BACKWARD(norm)), AC_FP32, ANY ANY ANY, "")

/* ---- random numbers: samplers that fill a tensor, and draws of new ones ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: RANDOM(call, signature): the kernel as a call of
     src/tensor/mt_random.h in r (the tensor filled: x itself for the
     samplers named with a trailing _, a new result for the others) and a,
     the op's mt_random_args (src/tensor/mt_ops.h): a->g the generator
     (x's device's, or the generator= option), a->p[] the numbers, a->i[]
     the integers, a->t a tensor operand (bernoulli's probabilities,
     multinomial's weights), a->mean and a->std normal's operands.
     signature is how Lua calls it after the tensor (src/vm/lt_random.c),
     one word per argument as the elementwise ops with parameters write it;
     every form takes {generator=} last. torch.rand, randn, randint and the
     *_like forms fill a new tensor with uniform_, normal_ and random_.
   - derivative: NODERIV. A sample is a constant: a sampler cuts x's history
     (PyTorch records a zero gradient; no gradient reaches x either way). */
#define MT_RANDOM_OPS(OP, E)                                                                           \
  OP(uniform_, RANDOM(mt_uniform_(r, a->g, a->p[0], a->p[1]), "from=0 to=1"), E, NODERIV, AC_NONE,      \
    ANY, "")                                                                                           \
  OP(normal_, RANDOM(mt_normal_(r, a->g, a->p[0], a->p[1]), "mean=0 std=1"), E, NODERIV, AC_NONE, ANY, \
    "")                                                                                                \
  OP(exponential_, RANDOM(mt_exponential_(r, a->g, a->p[0]), "lambd=1"), E, NODERIV, AC_NONE, ANY, "")  \
  OP(geometric_, RANDOM(mt_geometric_(r, a->g, a->p[0]), "p"), E, NODERIV, AC_NONE, ANY, "")            \
  OP(cauchy_, RANDOM(mt_cauchy_(r, a->g, a->p[0], a->p[1]), "median=0 sigma=1"), E, NODERIV, AC_NONE,   \
    ANY, "")                                                                                           \
  OP(log_normal_, RANDOM(mt_log_normal_(r, a->g, a->p[0], a->p[1]), "mean=1 std=2"), E, NODERIV,        \
    AC_NONE, ANY, "")                                                                                  \
  /* integers on [from, to) (a->i); with no bound (a->flag), every integer the dtype holds exactly     \
     from 0 */                                                                                         \
  OP(random_, RANDOM(a->flag ? mt_random_full_(r, a->g) : mt_random_(r, a->g, a->i[0], a->i[1]),        \
                     "from to"), E, NODERIV, AC_NONE, ANY, "")                                         \
  /* 1 with probability p: a number, or a tensor broadcast to x */                                    \
  OP(bernoulli_, RANDOM(mt_bernoulli_(r, a->g, a->t, a->p[0]), "p#=0.5"), E, NODERIV, AC_NONE, ANY, "") \
  /* x's shape and dtype: 1 with probability x (a->flag 0), or with the number p */                   \
  OP(bernoulli, RANDOM(mt_bernoulli(r, a->g, a->t, a->p[0], a->flag), "p=nil"), E, NODERIV, AC_NONE,    \
    ANY, "")                                                                                           \
  /* mean + std * N(0, 1), mean and std broadcast (tensors or numbers) */                             \
  OP(normal, RANDOM(mt_normal(r, a->g, a->mean, a->std, a->dtype), "mean# std#"), E, NODERIV, AC_NONE,  \
    ANY, "")                                                                                           \
  /* a->i[0] 1-based category indices per row of the weights a->t */                                  \
  OP(multinomial, RANDOM(mt_multinomial(r, a->g, a->t, a->i[0], a->flag),                              \
                         "num_samples replacement=false"), E, NODERIV, AC_NONE, ANY, "")               \
  /* a permutation of 1..a->i[0] in dtype a->dtype */                                                  \
  OP(randperm, RANDOM(mt_randperm(r, a->g, a->i[0], a->dtype), "n"), E, NODERIV, AC_NONE, ANY, "")

/* ---- factories: new tensors from a size or a rule ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: FACTORY(call, signature): the kernel as a call of src/tensor
     (mt_tensor.h, mt_create.h) in r (empty: it receives the new tensor) and
     a, the op's mt_factory_args (src/tensor/mt_ops.h): a->ndim and a->shape
     the size, a->dtype, a->device and a->index where it is made, a->p[] the
     numbers (start, end, step, base), a->n[] the counts (steps, eye's
     sizes), a->value full's value. signature is how Lua calls it
     (src/vm/lt_tensor.c, lt_random.c), each form with {dtype=, device=,
     requires_grad=} last; zeros_like, new_zeros and the other *_like and
     new_* forms are the same ops with x's size, dtype or device.
   - derivative: NODERIV: a new tensor is a leaf (requires_grad= makes it
     one that requires grad).
   - domain: "", no tensor input (arity 0). */
#define MT_FACTORY_OPS(OP, E)                                                                          \
  /* values unspecified */                                                                             \
  OP(empty, FACTORY(mt_factory_new(r, a, "empty"), "size"), E, NODERIV, AC_NONE, "", "")                  \
  OP(zeros, FACTORY(mt_factory_filled(r, a, "zeros", 0), "size"), E, NODERIV, AC_NONE, "", "")             \
  OP(ones, FACTORY(mt_factory_filled(r, a, "ones", 1), "size"), E, NODERIV, AC_NONE, "", "")               \
  /* the value a number (exact for any integer), a boolean or a tensor of one element */              \
  OP(full, FACTORY(mt_factory_full(r, a), "size fill_value#"), E, NODERIV, AC_NONE, "", "")              \
  OP(eye, FACTORY(mt_eye(r, a->n[0], a->n[1], a->dtype), "n m=n"), E, NODERIV, AC_NONE, "", "")           \
  /* start, start + step, ... up to end: excluded (arange), included (Torch7's range) */              \
  OP(arange, FACTORY(mt_arange(r, a->p[0], a->p[1], a->p[2], a->dtype), "start=0 end step=1"), E,       \
    NODERIV, AC_NONE, "", "")                                                                            \
  OP(range, FACTORY(mt_range(r, a->p[0], a->p[1], a->p[2], a->dtype), "start end step=1"), E, NODERIV, \
    AC_NONE, "", "")                                                                                     \
  OP(linspace, FACTORY(mt_linspace(r, a->p[0], a->p[1], a->n[0], a->dtype), "start end steps=100"), E,   \
    NODERIV, AC_NONE, "", "")                                                                            \
  OP(logspace, FACTORY(mt_logspace(r, a->p[0], a->p[1], a->n[0], a->p[2], a->dtype),                    \
                       "start end steps=100 base=10"), E, NODERIV, AC_NONE, "", "")

/* ---- optimizer steps: a parameter updated in place from its gradient ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: OPTIM(call, binding): the fused update as a call of
     src/tensor/mt_optim.h in a, the op's mt_optim_args (src/tensor/mt_ops.h):
     a->t[0] the parameter (written), a->t[1] its gradient, a->t[2..4] its
     state buffers (NULL where an option leaves one unused), and the
     update's hyperparameters (a->sgd, a->adam, ...). binding is the Lua
     function, torch.<binding>, that lib/optim calls once per parameter and
     step, its arguments positional (src/vm/lt_optim.c).
   - derivative: NODERIV: a step writes leaves under no_grad.
   - domain: "": nothing of it is differentiated (arity 0). */
#define MT_OPTIM_OPS(OP, E)                                                                            \
  OP(optim_sgd, OPTIM(mt_optim_sgd(a->t[0], a->t[1], a->t[2], a->sgd), "_optim_sgd"), E, NODERIV,       \
    AC_NONE, "", "")                                                                                   \
  /* Adam, and AdamW (decoupled weight decay) */                                                       \
  OP(optim_adam, OPTIM(mt_optim_adam(a->t[0], a->t[1], a->t[2], a->t[3], a->t[4], a->adam),             \
                       "_optim_adam"), E, NODERIV, AC_NONE, "", "")                                   \
  OP(optim_rmsprop, OPTIM(mt_optim_rmsprop(a->t[0], a->t[1], a->t[2], a->t[3], a->t[4], a->rmsprop),    \
                          "_optim_rmsprop"), E, NODERIV, AC_NONE, "", "")                             \
  OP(optim_adagrad, OPTIM(mt_optim_adagrad(a->t[0], a->t[1], a->t[2], a->adagrad), "_optim_adagrad"), \
    E, NODERIV, AC_NONE, "", "")                                                                       \
  OP(optim_adadelta, OPTIM(mt_optim_adadelta(a->t[0], a->t[1], a->t[2], a->t[3], a->adadelta),          \
                           "_optim_adadelta"), E, NODERIV, AC_NONE, "", "")                           \
  OP(optim_adamax, OPTIM(mt_optim_adamax(a->t[0], a->t[1], a->t[2], a->t[3], a->adamax),                \
                         "_optim_adamax"), E, NODERIV, AC_NONE, "", "")                               \
  OP(optim_nadam, OPTIM(mt_optim_nadam(a->t[0], a->t[1], a->t[2], a->t[3], a->nadam), "_optim_nadam"), \
    E, NODERIV, AC_NONE, "", "")                                                                       \
  OP(optim_radam, OPTIM(mt_optim_radam(a->t[0], a->t[1], a->t[2], a->t[3], a->radam), "_optim_radam"), \
    E, NODERIV, AC_NONE, "", "")

/* ---- conversions: x in another dtype or on another device ----
   An entry is OP(name, kernel, E, derivative, autocast, domain, aliases) as
   above, with:
   - kernel: CAST(call): the copy as a call of src/tensor in r, x, the
     target's dtype, device and index, and op (the name errors give: the
     Lua method called). Lua reaches it through x:to(dtype or
     device or tensor, {copy=}), x:type(name), x:type_as(y), x:float(),
     x:double(), ..., x:cuda() and x:cpu() (src/vm/lt_tensor.c), each x
     itself when nothing would change (unless copy=true), as PyTorch.
   - derivative: DERIV(NOTHING, BACK(G)): G in x's dtype and on x's device,
     through this op again (so a move between devices is recorded under
     create_graph); the node is ToCopyBackward (mt_ag_record_cast). */
#define MT_CAST_OPS(OP, E)                                                                             \
  OP(to, CAST(mt_to_copy(r, x, dtype, device, index, op)), E, DERIV(NOTHING, BACK(G)), AC_NONE, ANY, "")

/* Every elementwise list, in the order of the mt_op enum (and of mt_op_names,
   expanded from the same macro). */
#define MT_POINTWISE_LISTS(L)                                                                         \
  L(MT_UNARY_FLOAT_OPS) L(MT_UNARY_FLOAT_ONLY_OPS) L(MT_UNARY_ROUND_OPS) L(MT_UNARY_SAME_OPS)          \
  L(MT_UNARY_BOOL_OPS) L(MT_BINARY_OPS) L(MT_BINARY_FLOAT_OPS) L(MT_COMPARE_OPS) L(MT_BINARY_DIV_OPS)          \
  L(MT_UNARY_INT_OPS) L(MT_BINARY_INT_OPS)

/* Every list: the elementwise ones, the reductions, the ops along a dim,
   the selections, the products, the elementwise ops with parameters, the
   index ops, the puts, the masks, the views, the joins, the nn kernels, the
   random numbers, the factories, the optimizer steps, the conversions (the
   mt_op enum's order). */
#define MT_OP_LISTS(L)                                                                                \
  MT_POINTWISE_LISTS(L) L(MT_REDUCE_OPS) L(MT_ALONG_OPS) L(MT_SELECT_OPS) L(MT_PRODUCT_OPS)             \
  L(MT_ADD_PRODUCT_OPS) L(MT_PARAM_OPS) L(MT_INDEX_OPS) L(MT_PUT_OPS) L(MT_MASK_OPS) L(MT_VIEW_OPS) L(MT_JOIN_OPS) \
  L(MT_NN_OPS) L(MT_RANDOM_OPS) L(MT_FACTORY_OPS) L(MT_OPTIM_OPS) L(MT_CAST_OPS)

#endif
