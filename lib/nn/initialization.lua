-- nn.init: PyTorch's torch.nn.init -- in-place initializers for parameters (uniform, normal,
-- Xavier, Kaiming, orthogonal, truncated normal, ...), each run under torch.no_grad.
local torch = require 'torch'

local init = {}

local SQRT2 = math.sqrt(2)
local ERFINV_EDGE = 1e-15   -- erfinv's argument is kept this far inside (-1, 1)

-- errors are reported at the first caller outside this file
local this_source = debug.getinfo(1, 'S').source
local function fail(fname, fmt, ...)
  local level = 2
  while debug.getinfo(level, 'S') and debug.getinfo(level, 'S').source == this_source do level = level + 1 end
  error(string.format('nn.init.' .. fname .. ': ' .. fmt, ...), level)
end

local function check_tensor(fname, t)
  if not torch.is_tensor(t) then fail(fname, 'expected a tensor, got %s', type(t)) end
end

-- the sampler options ({generator=g}) found in an options table
local function sampler_opts(opts)
  if type(opts) == 'table' and opts.generator then return {generator = opts.generator} end
  return nil
end

-- fills t in place without recording history; returns t
local function fill(t, fn)
  torch.no_grad(function() fn(t) end)
  return t
end

-- init.calculate_gain(nonlinearity, param): the recommended gain for a nonlinearity
-- ('linear', 'conv*', 'sigmoid': 1, 'tanh': 5/3, 'relu': sqrt 2, 'leaky_relu' with
-- negative slope param (default 0.01): sqrt(2 / (1 + param^2)), 'selu': 3/4).
function init.calculate_gain(nonlinearity, param)
  local unit = {linear = true, conv1d = true, conv2d = true, conv3d = true, conv_transpose1d = true,
                conv_transpose2d = true, conv_transpose3d = true, sigmoid = true}
  if unit[nonlinearity] then return 1 end
  if nonlinearity == 'tanh' then return 5 / 3 end
  if nonlinearity == 'relu' then return SQRT2 end
  if nonlinearity == 'selu' then return 3 / 4 end
  if nonlinearity == 'leaky_relu' then
    if param == nil then param = 0.01 end
    if type(param) ~= 'number' then fail('calculate_gain', 'negative_slope %s is not a valid number', tostring(param)) end
    return math.sqrt(2 / (1 + param * param))
  end
  fail('calculate_gain', 'unsupported nonlinearity %s', tostring(nonlinearity))
end

-- init._calculate_fan_in_and_fan_out(t): fan_in = size(2) * receptive field, fan_out =
-- size(1) * receptive field, the receptive field being the product of the sizes after dim 2.
function init._calculate_fan_in_and_fan_out(t)
  check_tensor('_calculate_fan_in_and_fan_out', t)
  if t:dim() < 2 then
    fail('_calculate_fan_in_and_fan_out', 'fan in and fan out can not be computed for a tensor with fewer than 2 dimensions (size %s)',
         tostring(t:size()))
  end
  local receptive = 1
  for i = 3, t:dim() do receptive = receptive * t:size(i) end
  return t:size(2) * receptive, t:size(1) * receptive
end

local function correct_fan(fname, t, mode)
  mode = mode or 'fan_in'
  local fan_in, fan_out = init._calculate_fan_in_and_fan_out(t)
  if mode == 'fan_in' then return fan_in end
  if mode == 'fan_out' then return fan_out end
  fail(fname, "mode '%s' not supported, use 'fan_in' or 'fan_out'", tostring(mode))
end

-- init.uniform_(t, a=0, b=1) or init.uniform_(t, {a=, b=, generator=}): U(a, b) in place.
function init.uniform_(t, a, b, opts)
  check_tensor('uniform_', t)
  if type(a) == 'table' then opts, a, b = a, a.a, a.b end
  return fill(t, function(x) x:uniform_(a or 0, b or 1, sampler_opts(opts)) end)
end

-- init.normal_(t, mean=0, std=1) or init.normal_(t, {mean=, std=, generator=}): N(mean, std^2) in place.
function init.normal_(t, mean, std, opts)
  check_tensor('normal_', t)
  if type(mean) == 'table' then opts, mean, std = mean, mean.mean, mean.std end
  return fill(t, function(x) x:normal_(mean or 0, std or 1, sampler_opts(opts)) end)
end

-- init.constant_(t, val): every element set to val.
function init.constant_(t, val)
  check_tensor('constant_', t)
  if type(val) ~= 'number' then fail('constant_', 'val must be a number, got %s', type(val)) end
  return fill(t, function(x) x:fill_(val) end)
end

-- init.ones_(t): every element set to 1.
function init.ones_(t)
  check_tensor('ones_', t)
  return fill(t, function(x) x:fill_(1) end)
end

-- init.zeros_(t): every element set to 0.
function init.zeros_(t)
  check_tensor('zeros_', t)
  return fill(t, function(x) x:zero_() end)
end

-- init.eye_(t): a 2-D t set to the identity (ones on the main diagonal).
function init.eye_(t)
  check_tensor('eye_', t)
  if t:dim() ~= 2 then fail('eye_', 'only tensors with 2 dimensions are supported, got size %s', tostring(t:size())) end
  return fill(t, function(x) x:copy_(torch.eye(x:size(1), x:size(2), {dtype = x.dtype})) end)
end

-- init.dirac_(t, groups=1): a 3-, 4- or 5-D convolution weight (out, in, k...) set to the
-- identity convolution: 1 at the kernel centre of output channel d of each group from input d.
function init.dirac_(t, groups)
  check_tensor('dirac_', t)
  groups = groups or 1
  if t:dim() < 3 or t:dim() > 5 then
    fail('dirac_', 'only tensors with 3, 4, or 5 dimensions are supported, got size %s', tostring(t:size()))
  end
  if t:size(1) % groups ~= 0 then fail('dirac_', 'dim 1 (size %d) is not divisible by groups %d', t:size(1), groups) end
  local per_group = t:size(1) // groups
  local count = math.min(per_group, t:size(2))
  return fill(t, function(x)
    x:zero_()
    for g = 0, groups - 1 do
      for d = 1, count do
        local cell = x:select(1, g * per_group + d):select(1, d)
        for k = 3, x:dim() do cell = cell:select(1, x:size(k) // 2 + 1) end
        cell:fill_(1)
      end
    end
  end)
end

-- init.xavier_uniform_(t, gain=1): U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).
function init.xavier_uniform_(t, gain, opts)
  check_tensor('xavier_uniform_', t)
  if type(gain) == 'table' then opts, gain = gain, gain.gain end
  local fan_in, fan_out = init._calculate_fan_in_and_fan_out(t)
  local bound = math.sqrt(3) * (gain or 1) * math.sqrt(2 / (fan_in + fan_out))
  return fill(t, function(x) x:uniform_(-bound, bound, sampler_opts(opts)) end)
end

-- init.xavier_normal_(t, gain=1): N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
function init.xavier_normal_(t, gain, opts)
  check_tensor('xavier_normal_', t)
  if type(gain) == 'table' then opts, gain = gain, gain.gain end
  local fan_in, fan_out = init._calculate_fan_in_and_fan_out(t)
  local std = (gain or 1) * math.sqrt(2 / (fan_in + fan_out))
  return fill(t, function(x) x:normal_(0, std, sampler_opts(opts)) end)
end

-- the std of the Kaiming initializers: gain(nonlinearity, a) / sqrt(fan)
local function kaiming_std(fname, t, a, mode, nonlinearity, opts)
  check_tensor(fname, t)
  if type(a) == 'table' then opts, a, mode, nonlinearity = a, a.a, a.mode, a.nonlinearity end
  local fan = correct_fan(fname, t, mode)
  return init.calculate_gain(nonlinearity or 'leaky_relu', a or 0) / math.sqrt(fan), opts
end

-- init.kaiming_uniform_(t, a=0, mode='fan_in', nonlinearity='leaky_relu') or
-- init.kaiming_uniform_(t, {a=, mode=, nonlinearity=, generator=}): U(-bound, bound) with
-- bound = gain * sqrt(3 / fan) (He et al.).
function init.kaiming_uniform_(t, a, mode, nonlinearity, opts)
  if torch.is_tensor(t) and t:numel() == 0 then return t end
  local std
  std, opts = kaiming_std('kaiming_uniform_', t, a, mode, nonlinearity, opts)
  local bound = math.sqrt(3) * std
  return fill(t, function(x) x:uniform_(-bound, bound, sampler_opts(opts)) end)
end

-- init.kaiming_normal_(t, a=0, mode='fan_in', nonlinearity='leaky_relu') or with an options
-- table: N(0, std^2) with std = gain / sqrt(fan).
function init.kaiming_normal_(t, a, mode, nonlinearity, opts)
  if torch.is_tensor(t) and t:numel() == 0 then return t end
  local std
  std, opts = kaiming_std('kaiming_normal_', t, a, mode, nonlinearity, opts)
  return fill(t, function(x) x:normal_(0, std, sampler_opts(opts)) end)
end

-- the rows of m (k x n, k <= n, float64) made orthonormal by Gram-Schmidt, each projection
-- applied twice so orthogonality holds to rounding error; the result equals Q^T of the QR
-- factorization of m^T with a positive diagonal in R.
local function orthonormal_rows(m)
  local k = m:size(1)
  local q = torch.zeros(m:size(), {dtype = 'float64'})
  for j = 1, k do
    local v = m:select(1, j)
    if j > 1 then
      local basis = q:narrow(1, 1, j - 1)
      for _ = 1, 2 do v = v - basis:t():mv(basis:mv(v)) end
    end
    q:select(1, j):copy_(v / v:norm())
  end
  return q
end

-- init.orthogonal_(t, gain=1): t (at least 2-D, flattened to size(1) x rest) set to a
-- random (semi-)orthogonal matrix times gain, from the QR factorization of a Gaussian matrix.
function init.orthogonal_(t, gain, opts)
  check_tensor('orthogonal_', t)
  if type(gain) == 'table' then opts, gain = gain, gain.gain end
  if t:dim() < 2 then fail('orthogonal_', 'only tensors with 2 or more dimensions are supported, got size %s', tostring(t:size())) end
  if t:numel() == 0 then return t end
  local rows = t:size(1)
  local cols = t:numel() // rows
  local sampler = sampler_opts(opts) or {}
  sampler.dtype = 'float64'
  return fill(t, function(x)
    -- min(rows, cols) orthonormal vectors of length max(rows, cols)
    local q = orthonormal_rows(torch.randn(math.min(rows, cols), math.max(rows, cols), sampler))
    if rows >= cols then q = q:t() end
    x:copy_((q * (gain or 1)):reshape(x:size()))
  end)
end

-- erfinv(y) for float64 y in (-1, 1): Giles' single-precision polynomial refined by two
-- Newton steps on erf (M. Giles, "Approximating the erfinv function", GPU Computing Gems, 2011).
local function erfinv(y)
  local w = -((1 - y) * (1 + y)):log()
  local central, tail = w - 2.5, w:sqrt() - 3
  local p = central * 2.81022636e-08 + 3.43273939e-07
  for _, c in ipairs({-3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503, -0.00417768164,
                      0.246640727, 1.50140941}) do
    p = p * central + c
  end
  local s = tail * -0.000200214257 + 0.000100950558
  for _, c in ipairs({0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613, 0.00943887047,
                      1.00167406, 2.83297682}) do
    s = s * tail + c
  end
  local x = torch.where(w:lt(5), p, s) * y
  for _ = 1, 2 do
    x = x - (x:erf() - y) / ((-x * x):exp() * (2 / math.sqrt(math.pi)))
  end
  return x
end

-- the standard normal CDF of a Lua number (erfc keeps the lower tail exact)
local function phi(x)
  return torch.tensor(-x / SQRT2, {dtype = 'float64'}):erfc():item() / 2
end

-- init.trunc_normal_(t, mean=0, std=1, a=-2, b=2): values from N(mean, std^2) truncated to
-- [a, b], by the inverse CDF of a uniform draw between the CDF values of a and b.
function init.trunc_normal_(t, mean, std, a, b, opts)
  check_tensor('trunc_normal_', t)
  if type(mean) == 'table' then opts, mean, std, a, b = mean, mean.mean, mean.std, mean.a, mean.b end
  mean, std, a, b = mean or 0, std or 1, a or -2, b or 2
  if not (a < b) then fail('trunc_normal_', 'the lower bound a (%g) must be below the upper bound b (%g)', a, b) end
  local lo, hi = 2 * phi((a - mean) / std) - 1, 2 * phi((b - mean) / std) - 1
  local edge = 1 - ERFINV_EDGE
  lo, hi = math.max(lo, -edge), math.min(hi, edge)
  return fill(t, function(x)
    local u = torch.empty(x:size(), {dtype = 'float64'}):uniform_(lo, hi, sampler_opts(opts))
    x:copy_((erfinv(u) * (std * SQRT2) + mean):clamp(a, b))
  end)
end

-- init.sparse_(t, sparsity, std=0.01): a 2-D t drawn from N(0, std^2) with a fraction
-- sparsity of each column's elements set to zero (Martens, 2010).
function init.sparse_(t, sparsity, std, opts)
  check_tensor('sparse_', t)
  if t:dim() ~= 2 then fail('sparse_', 'only tensors with 2 dimensions are supported, got size %s', tostring(t:size())) end
  if type(sparsity) ~= 'number' or sparsity < 0 or sparsity > 1 then
    fail('sparse_', 'sparsity must be a number in [0, 1], got %s', tostring(sparsity))
  end
  local rows, cols = t:size(1), t:size(2)
  local zeros = math.ceil(sparsity * rows)
  return fill(t, function(x)
    x:normal_(0, std or 0.01, sampler_opts(opts))
    for c = 1, cols do
      if zeros > 0 then
        x:select(2, c):index_fill_(1, torch.randperm(rows, sampler_opts(opts)):narrow(1, 1, zeros), 0)
      end
    end
  end)
end

return init
