-- Documentation of the elementwise ops (src/vm/lt_math.c, lt_shape.c); the
-- format is described in lib/torch/doc/tensor.lua. Binary ops broadcast and
-- promote types as PyTorch does; x:op_() writes into x and returns x.
return [=[
torch.add(a, b, {alpha=1}), a:add(b, {alpha=}), a:add_(b), a + b
  a + alpha * b. Torch7's a:add(alpha, b) and PyTorch's a:add(b, alpha) work too.

torch.sub(a, b, {alpha=1}), torch.subtract(a, b), a:sub(b), a:subtract(b), a:sub_(b), a:subtract_(b), a - b
  a - alpha * b (alpha as for add).

torch.mul(a, b), torch.multiply(a, b), torch.cmul(a, b), a:mul(b), a:multiply(b), a:cmul(b), a:mul_(b), a:multiply_(b), a:cmul_(b), a * b
  a * b elementwise (cmul: Torch7's name). For matrix products see mm and matmul.

torch.div(a, b, rounding_mode), torch.divide(a, b), torch.true_divide(a, b), torch.cdiv(a, b), a:div(b), a:divide(b), a:true_divide(b), a:cdiv(b), a:div_(b), a:divide_(b), a:true_divide_(b), a:cdiv_(b), a / b
  a / b as a float (integers are promoted); rounding_mode 'floor' or 'trunc' (or
  {rounding_mode=}) rounds the quotient and keeps integer dtypes.

torch.floor_divide(a, b), a:floor_divide(b), a:floor_divide_(b), a // b
  floor(a / b) in the promoted dtype (integers stay integers); not differentiable.

torch.remainder(a, b), a:remainder(b), a:remainder_(b), a % b
  a - floor(a / b) * b: the sign of b, as Lua's %.

torch.fmod(a, b), a:fmod(b), a:fmod_(b)
  C's fmod: the remainder with the sign of a.

torch.pow(a, b), a:pow(b), a:pow_(b), a ^ b
  a to the power b; either may be a number.

torch.atan2(a, b), torch.arctan2(a, b), a:atan2(b), a:arctan2(b), a:atan2_(b), a:arctan2_(b)
  The angle of the point (b, a) in radians, in [-pi, pi]; a float result.

torch.maximum(a, b), torch.cmax(a, b), a:maximum(b), a:cmax(b), a:maximum_(b), a:cmax_(b)
  The larger of a and b elementwise; NaN wins.

torch.minimum(a, b), torch.cmin(a, b), a:minimum(b), a:cmin(b), a:minimum_(b), a:cmin_(b)
  The smaller of a and b elementwise; NaN wins.

torch.neg(x), torch.negative(x), x:neg(), x:negative(), x:neg_(), x:negative_(), -x
  -x elementwise.

torch.abs(x), torch.absolute(x), x:abs(), x:absolute(), x:abs_(), x:absolute_()
  |x| elementwise, in x's dtype.

torch.sign(x), x:sign(), x:sign_()
  -1, 0 or 1 by the sign of each element, in x's dtype.

torch.square(x), x:square(), x:square_()
  x * x elementwise.

torch.sqrt(x), x:sqrt(), x:sqrt_()
  Square root elementwise; float result (NaN for negative entries).

torch.rsqrt(x), x:rsqrt(), x:rsqrt_()
  1 / sqrt(x) elementwise.

torch.reciprocal(x), x:reciprocal(), x:reciprocal_()
  1 / x elementwise; float result.

torch.sinc(x), x:sinc(), x:sinc_()
  The normalized sinc, sin(pi x) / (pi x) elementwise, and 1 at 0; float result.

torch.exp(x), x:exp(), x:exp_()
  e^x elementwise; float result.

torch.expm1(x), x:expm1(), x:expm1_()
  e^x - 1, accurate for small x.

torch.log(x), x:log(), x:log_()
  Natural logarithm elementwise; float result.

torch.log1p(x), x:log1p(), x:log1p_()
  log(1 + x), accurate for small x.

torch.log2(x), x:log2(), x:log2_()
  Base-2 logarithm elementwise.

torch.log10(x), x:log10(), x:log10_()
  Base-10 logarithm elementwise.

torch.sin(x), x:sin(), x:sin_()
  Sine (radians) elementwise.

torch.cos(x), x:cos(), x:cos_()
  Cosine (radians) elementwise.

torch.tan(x), x:tan(), x:tan_()
  Tangent (radians) elementwise.

torch.asin(x), torch.arcsin(x), x:asin(), x:arcsin(), x:asin_(), x:arcsin_()
  Arcsine elementwise, in [-pi/2, pi/2].

torch.acos(x), torch.arccos(x), x:acos(), x:arccos(), x:acos_(), x:arccos_()
  Arccosine elementwise, in [0, pi].

torch.atan(x), torch.arctan(x), x:atan(), x:arctan(), x:atan_(), x:arctan_()
  Arctangent elementwise, in (-pi/2, pi/2).

torch.sinh(x), x:sinh(), x:sinh_()
  Hyperbolic sine elementwise.

torch.cosh(x), x:cosh(), x:cosh_()
  Hyperbolic cosine elementwise.

torch.tanh(x), x:tanh(), x:tanh_()
  Hyperbolic tangent elementwise.

torch.sigmoid(x), x:sigmoid(), x:sigmoid_()
  1 / (1 + e^-x) elementwise.

torch.erf(x), x:erf(), x:erf_()
  The error function elementwise.

torch.erfc(x), x:erfc(), x:erfc_()
  1 - erf(x), accurate for large x.

torch.relu(x), x:relu(), x:relu_()
  max(x, 0) elementwise.

torch.gelu(x, {approximate='none'}), x:gelu(), x:gelu_()
  x * Phi(x) (Phi: the standard normal CDF); approximate='tanh' uses the tanh
  formula (gelu_tanh). Float tensors only.

torch.gelu_tanh(x), x:gelu_tanh(), x:gelu_tanh_()
  0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))): GELU's tanh approximation.

torch.silu(x), x:silu(), x:silu_()
  x * sigmoid(x) (swish). Float tensors only.

torch.leaky_relu(x, negative_slope), x:leaky_relu(negative_slope), x:leaky_relu_(negative_slope)
  x where x > 0, negative_slope * x elsewhere (default 0.01; also {negative_slope=}).

torch.softplus(x, beta, threshold), x:softplus(beta, threshold), x:softplus({beta=, threshold=})
  log(1 + e^(beta x)) / beta (beta 1); x itself where beta x > threshold (20).

torch.floor(x), x:floor(), x:floor_()
  Round down elementwise; integer tensors come back unchanged.

torch.ceil(x), x:ceil(), x:ceil_()
  Round up elementwise; integer tensors come back unchanged.

torch.round(x), torch.round(x, {decimals=}), x:round(), x:round_()
  Round to the nearest integer, halves to even (2.5 -> 2), or to decimals places.

torch.trunc(x), torch.fix(x), x:trunc(), x:fix(), x:trunc_(), x:fix_()
  Round toward zero elementwise.

torch.frac(x), x:frac(), x:frac_()
  x - trunc(x): the fractional part, with x's sign. Float tensors only.

torch.clamp(x, min, max), torch.clip(x, min, max), x:clamp(min, max), x:clip(min, max), x:clamp({min=, max=}), x:clamp_(min, max), x:clip_(min, max)
  Each element limited to [min, max]; either bound may be nil, a number or a tensor (max wins
  where min > max). With one bound it is clamp_min or clamp_max. The gradient at a bound is
  PyTorch's: a number bound passes none there, a tensor bound shares it evenly with x.

torch.clamp_min(x, min), x:clamp_min(min), x:clamp_min_(min)
  max(x, min) elementwise.

torch.clamp_max(x, max), x:clamp_max(max), x:clamp_max_(max)
  min(x, max) elementwise.

torch.lerp(x, stop, weight), x:lerp(stop, weight), x:lerp_(stop, weight)
  x + weight * (stop - x); weight a number or a tensor.

torch.addcmul(x, t1, t2, {value=1}), x:addcmul(t1, t2, value), x:addcmul_(t1, t2, value)
  x + value * t1 * t2. Torch7's x:addcmul(value, t1, t2) works too.

torch.addcdiv(x, t1, t2, {value=1}), x:addcdiv(t1, t2, value), x:addcdiv_(t1, t2, value)
  x + value * t1 / t2. Torch7's x:addcdiv(value, t1, t2) works too.

torch.eq(a, b), a:eq(b), a:eq_(b)
  a == b elementwise, a bool tensor (eq_ writes 0/1 into a). For one boolean
  over whole tensors use torch.equal.

torch.ne(a, b), a:ne(b), a:ne_(b)
  a ~= b elementwise, a bool tensor.

torch.lt(a, b), a:lt(b), a:lt_(b)
  a < b elementwise, a bool tensor. (a < b with Lua's operator compares
  one-element tensors as numbers.)

torch.le(a, b), a:le(b), a:le_(b)
  a <= b elementwise, a bool tensor.

torch.gt(a, b), a:gt(b), a:gt_(b)
  a > b elementwise, a bool tensor.

torch.ge(a, b), a:ge(b), a:ge_(b)
  a >= b elementwise, a bool tensor.

torch.logical_and(a, b), a:logical_and(b), a:logical_and_(b)
  a and b elementwise (nonzero is true), a bool tensor.

torch.logical_or(a, b), a:logical_or(b), a:logical_or_(b)
  a or b elementwise (nonzero is true), a bool tensor.

torch.logical_xor(a, b), a:logical_xor(b), a:logical_xor_(b)
  Exactly one of a, b nonzero, elementwise; a bool tensor.

torch.logical_not(x), x:logical_not(), x:logical_not_()
  x == 0 elementwise, a bool tensor.

torch.isnan(x), x:isnan()
  A bool tensor, true where x is NaN.

torch.isinf(x), x:isinf()
  A bool tensor, true where x is +inf or -inf.

torch.isfinite(x), x:isfinite()
  A bool tensor, true where x is neither NaN nor infinite.

torch.bitwise_and(a, b), a:bitwise_and(b), a:bitwise_and_(b)
torch.bitand(a, b), a:bitand(b), a:bitand_(b), torch.cbitand(a, b), a:cbitand(b), a:cbitand_(b)
  a & b elementwise, on integer or bool tensors (float ones are refused); b a tensor
  that broadcasts or a number; the result in the promoted dtype. bitand and cbitand
  are Torch7's names (a number, a tensor).

torch.bitwise_or(a, b), a:bitwise_or(b), a:bitwise_or_(b)
torch.bitor(a, b), a:bitor(b), a:bitor_(b), torch.cbitor(a, b), a:cbitor(b), a:cbitor_(b)
  a | b elementwise, on integer or bool tensors, as bitwise_and.

torch.bitwise_xor(a, b), a:bitwise_xor(b), a:bitwise_xor_(b)
torch.bitxor(a, b), a:bitxor(b), a:bitxor_(b), torch.cbitxor(a, b), a:cbitxor(b), a:cbitxor_(b)
  a ~ b (exclusive or) elementwise, on integer or bool tensors, as bitwise_and.

torch.bitwise_not(x), x:bitwise_not(), x:bitwise_not_()
  ~x elementwise, on integer or bool tensors (for bool, logical not).

torch.bitwise_left_shift(a, b), a:bitwise_left_shift(b), a:bitwise_left_shift_(b)
  a << b elementwise, on integer tensors; b a tensor that broadcasts or a number. A
  count below 0 or from the dtype's width up gives 0, as PyTorch; bits shifted past
  the width are lost.

torch.bitwise_right_shift(a, b), a:bitwise_right_shift(b), a:bitwise_right_shift_(b)
  a >> b elementwise, on integer tensors (arithmetic: the sign is kept). A count
  below 0 or from the dtype's width up gives the sign (0 or -1), as PyTorch.
]=]
