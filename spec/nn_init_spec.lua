-- nn_init_spec.lua: nn.init -- gains and fans as PyTorch computes them, and the statistics
-- of every initializer on large tensors (bounds, mean, std), orthogonality, determinism
-- under torch.manual_seed, in-place filling without history, and the errors.
-- Expected gains are PyTorch's (torch.nn.init.calculate_gain); the truncated normal moments
-- come from the closed forms for a normal truncated to [a, b].
local torch = require 'torch'
local init = require 'nn.initialization'

local function near(expected, got, tol, what)
  if not (math.abs(got - expected) <= tol) then
    error(string.format('%s: got %.10g, expected %.10g +- %g', what or 'value', got, expected, tol), 2)
  end
end

local function raises(fn, ...)
  local ok, err = pcall(fn)
  assert.is_false(ok, 'expected an error')
  for _, fragment in ipairs({...}) do
    if not tostring(err):find(fragment, 1, true) then
      error(string.format('error %q lacks %q', tostring(err), fragment), 2)
    end
  end
end

-- max |m m^T - I| (m has orthonormal rows) in float64
local function orthogonality_error(m)
  m = m:double()
  return (m:mm(m:t()) - torch.eye(m:size(1), {dtype = 'float64'})):abs():max():item()
end

describe('nn.init gains and fans', function()
  it('calculate_gain matches PyTorch', function()
    for _, name in ipairs({'linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose2d', 'sigmoid'}) do
      assert.are.equal(1, init.calculate_gain(name))
    end
    near(5 / 3, init.calculate_gain('tanh'), 1e-15)
    near(1.4142135623730951, init.calculate_gain('relu'), 1e-15)
    near(0.75, init.calculate_gain('selu'), 1e-15)
    near(1.4141428569978354, init.calculate_gain('leaky_relu'), 1e-15)
    near(0.5773502691896257, init.calculate_gain('leaky_relu', math.sqrt(5)), 1e-15)
    raises(function() init.calculate_gain('swish') end, 'nn.init.calculate_gain', 'unsupported nonlinearity swish')
    raises(function() init.calculate_gain('leaky_relu', true) end, 'negative_slope true')
  end)

  it('_calculate_fan_in_and_fan_out uses dims 2 and 1 times the receptive field', function()
    assert.are.same({4, 3}, {init._calculate_fan_in_and_fan_out(torch.empty(3, 4))})
    assert.are.same({36, 72}, {init._calculate_fan_in_and_fan_out(torch.empty(8, 4, 3, 3))})
    raises(function() init._calculate_fan_in_and_fan_out(torch.empty(5)) end, 'fewer than 2 dimensions', 'size 5')
  end)
end)

describe('nn.init fills in place without history', function()
  it('returns the tensor it filled, also for a parameter that requires grad', function()
    local w = torch.empty(20, 10, {requires_grad = true})
    for _, fn in ipairs({init.uniform_, init.normal_, init.ones_, init.zeros_, init.eye_, init.xavier_uniform_,
                         init.xavier_normal_, init.kaiming_uniform_, init.kaiming_normal_, init.orthogonal_,
                         init.trunc_normal_, function(t) return init.constant_(t, 0.5) end,
                         function(t) return init.sparse_(t, 0.5) end}) do
      assert.are.equal(w, fn(w))
      assert.is_true(w.requires_grad)
      assert.is_true(w.is_leaf)
      assert.is_nil(w.grad_fn)
    end
  end)

  it('is deterministic under torch.manual_seed and takes a generator', function()
    local a, b = torch.empty(50), torch.empty(50)
    torch.manual_seed(42); init.kaiming_uniform_(a:view(5, 10))
    torch.manual_seed(42); init.kaiming_uniform_(b:view(5, 10))
    assert.is_true(a:equal(b))
    torch.manual_seed(42); init.trunc_normal_(a)
    torch.manual_seed(42); init.trunc_normal_(b)
    assert.is_true(a:equal(b))
    local g1, g2 = torch.Generator(), torch.Generator()
    g1:manual_seed(7); g2:manual_seed(7)
    init.normal_(a, {generator = g1}); init.normal_(b, {generator = g2})
    assert.is_true(a:equal(b))
    init.orthogonal_(a:view(5, 10), {generator = g1}); init.orthogonal_(b:view(5, 10), {generator = g2})
    assert.is_true(a:equal(b))
  end)
end)

describe('nn.init distributions', function()
  local N = 200000

  it('uniform_ and normal_ draw from the given ranges', function()
    torch.manual_seed(1)
    local t = torch.empty(N, {dtype = 'float64'})
    init.uniform_(t, -3, 5)
    assert.is_true(t:min():item() >= -3 and t:max():item() < 5)
    near(1, t:mean():item(), 0.03, 'uniform mean')
    near(8 / math.sqrt(12), t:std():item(), 0.02, 'uniform std')
    init.uniform_(t)
    assert.is_true(t:min():item() >= 0 and t:max():item() < 1)
    init.normal_(t, 2, 0.5)
    near(2, t:mean():item(), 0.01, 'normal mean')
    near(0.5, t:std():item(), 0.01, 'normal std')
    init.normal_(t, {mean = -1, std = 3})
    near(-1, t:mean():item(), 0.05, 'normal mean')
    near(3, t:std():item(), 0.05, 'normal std')
  end)

  it('constant_, ones_, zeros_, eye_ and dirac_ set fixed values', function()
    local t = torch.empty(3, 4)
    assert.are.same({2.5, 2.5, 2.5}, init.constant_(t, 2.5):select(2, 1):_flat_values())
    assert.are.equal(12, init.ones_(t):sum():item())
    assert.are.equal(0, init.zeros_(t):abs():sum():item())
    assert.are.same({1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}, init.eye_(t):_flat_values())
    local d = init.dirac_(torch.empty(4, 3, 3, 3))
    assert.are.equal(3, d:sum():item())
    for c = 1, 3 do assert.are.equal(1, d[c][c][2][2]) end
    local g = init.dirac_(torch.empty(4, 2, 3), 2)            -- two groups of 2 output channels
    assert.are.same({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0}, g:_flat_values())
    raises(function() init.eye_(torch.empty(2, 2, 2)) end, 'nn.init.eye_', '2 dimensions', '2x2x2')
    raises(function() init.dirac_(torch.empty(2, 2)) end, 'nn.init.dirac_', '3, 4, or 5 dimensions')
    raises(function() init.constant_(t) end, 'nn.init.constant_', 'number')
  end)

  it('xavier_uniform_ and xavier_normal_ scale with fan_in + fan_out', function()
    torch.manual_seed(2)
    local t = torch.empty(400, 100, 2, {dtype = 'float64'})   -- fan_in 200, fan_out 800
    local bound = 1.5 * math.sqrt(6 / 1000)
    init.xavier_uniform_(t, 1.5)
    assert.is_true(t:abs():max():item() <= bound and t:abs():max():item() > 0.99 * bound)
    near(bound / math.sqrt(3), t:std():item(), 0.002, 'xavier_uniform std')
    init.xavier_normal_(t, {gain = 2})
    near(2 * math.sqrt(2 / 1000), t:std():item(), 0.002, 'xavier_normal std')
    near(0, t:mean():item(), 0.002, 'xavier_normal mean')
  end)

  it('kaiming_uniform_ and kaiming_normal_ follow the gain and the fan mode', function()
    torch.manual_seed(3)
    local t = torch.empty(500, 200, {dtype = 'float64'})
    init.kaiming_uniform_(t)                                  -- leaky_relu, a = 0: sqrt(6 / fan_in)
    local bound = math.sqrt(6 / 200)
    assert.is_true(t:abs():max():item() <= bound and t:abs():max():item() > 0.99 * bound)
    init.kaiming_uniform_(t, {a = math.sqrt(5)})             -- nn.Linear's default: 1 / sqrt(fan_in)
    bound = 1 / math.sqrt(200)
    assert.is_true(t:abs():max():item() <= bound and t:abs():max():item() > 0.99 * bound)
    init.kaiming_uniform_(t, 0, 'fan_out', 'relu')
    bound = math.sqrt(6 / 500)
    assert.is_true(t:abs():max():item() <= bound and t:abs():max():item() > 0.99 * bound)
    init.kaiming_normal_(t, {mode = 'fan_out', nonlinearity = 'relu'})
    near(math.sqrt(2 / 500), t:std():item(), 0.001, 'kaiming_normal std')
    init.kaiming_normal_(t, 0, 'fan_in', 'tanh')
    near(5 / 3 / math.sqrt(200), t:std():item(), 0.002, 'kaiming_normal tanh std')
    assert.are.equal(0, init.kaiming_uniform_(torch.empty(0, 3)):numel())
    raises(function() init.kaiming_uniform_(t, {mode = 'fan_avg'}) end, 'nn.init.kaiming_uniform_', 'fan_avg',
           "'fan_in' or 'fan_out'")
    raises(function() init.kaiming_normal_(torch.empty(4)) end, 'fewer than 2 dimensions')
  end)

  it('orthogonal_ gives (semi-)orthogonal matrices', function()
    torch.manual_seed(4)
    local square = init.orthogonal_(torch.empty(64, 64))
    assert.is_true(orthogonality_error(square) < 1e-5)
    assert.is_true(orthogonality_error(square:t()) < 1e-5)
    local tall = init.orthogonal_(torch.empty(80, 30, {dtype = 'float64'}))    -- orthonormal columns
    assert.is_true(orthogonality_error(tall:t()) < 1e-12)
    local wide = init.orthogonal_(torch.empty(20, 50, {dtype = 'float64'}), 3)  -- orthonormal rows times 3
    assert.is_true(orthogonality_error(wide / 3) < 1e-12)
    local conv = init.orthogonal_(torch.empty(16, 4, 3, 3))                     -- flattened to 16 x 36
    assert.is_true(orthogonality_error(conv:view(16, 36)) < 1e-5)
    -- the entries of a random orthogonal n x n matrix have variance 1/n
    local big = init.orthogonal_(torch.empty(200, 200, {dtype = 'float64'}))
    near(1 / math.sqrt(200), big:std():item(), 0.002, 'orthogonal entry std')
    raises(function() init.orthogonal_(torch.empty(5)) end, 'nn.init.orthogonal_', '2 or more dimensions', 'size 5')
  end)

  it('trunc_normal_ stays in [a, b] with the moments of the truncated normal', function()
    torch.manual_seed(5)
    local t = torch.empty(N, {dtype = 'float64'})
    init.trunc_normal_(t)                                     -- N(0, 1) on [-2, 2]
    assert.is_true(t:min():item() >= -2 and t:max():item() <= 2)
    assert.is_true(t:min():item() < -1.99 and t:max():item() > 1.99)
    near(0, t:mean():item(), 0.006, 'mean')
    near(0.8796256610342398, t:std():item(), 0.005, 'std')
    init.trunc_normal_(t, 0, 1, 1, 3)                         -- a one-sided slice
    assert.is_true(t:min():item() >= 1 and t:max():item() <= 3)
    near(1.510049513243984, t:mean():item(), 0.004, 'mean')
    near(0.4164767759721087, t:std():item(), 0.004, 'std')
    init.trunc_normal_(t, {mean = 1, std = 2, a = 0, b = 7})  -- standardized [-0.5, 3]
    assert.is_true(t:min():item() >= 0 and t:max():item() <= 7)
    near(1 + 2 * 0.5037344585049451, t:mean():item(), 0.01, 'mean')
    near(2 * 0.6869553422969051, t:std():item(), 0.01, 'std')
    local f = init.trunc_normal_(torch.empty(1000), 0, 0.02, -0.04, 0.04)   -- float32, as for GPT weights
    assert.is_true(f:abs():max():item() <= 0.04)
    near(0.02 * 0.8796256610342398, f:std():item(), 0.002, 'float32 std')
    raises(function() init.trunc_normal_(t, 0, 1, 2, -2) end, 'nn.init.trunc_normal_', 'lower bound')
  end)

  it('trunc_normal_ inverts the normal CDF exactly (erfinv to 1e-12)', function()
    -- the values are sqrt(2) erfinv(u) for u uniform on [2 Phi(a) - 1, 2 Phi(b) - 1]: drawing u
    -- again from the same seed, erf(x / sqrt(2)) must give it back
    local function cdf2(x) return torch.tensor(-x / math.sqrt(2), {dtype = 'float64'}):erfc():item() - 1 end
    for _, bounds in ipairs({{-2, 2}, {-5, 5}, {0.5, 4}, {-7, -3}}) do
      torch.manual_seed(9)
      local x = init.trunc_normal_(torch.empty(5000, {dtype = 'float64'}), 0, 1, bounds[1], bounds[2])
      torch.manual_seed(9)
      local u = torch.empty(5000, {dtype = 'float64'}):uniform_(cdf2(bounds[1]), cdf2(bounds[2]))
      near(0, ((x / math.sqrt(2)):erf() - u):abs():max():item(), 1e-12, 'erf(x / sqrt 2) - u')
    end
  end)

  it('sparse_ zeroes the same fraction of every column', function()
    torch.manual_seed(6)
    local t = init.sparse_(torch.empty(40, 25, {dtype = 'float64'}), 0.3, 0.5)
    for c = 1, 25 do assert.are.equal(12, t:select(2, c):eq(0):sum():item()) end
    near(0.5, t:masked_select(t:ne(0)):std():item(), 0.05, 'sparse std')
    raises(function() init.sparse_(torch.empty(4, 4, 4), 0.1) end, 'nn.init.sparse_', '2 dimensions')
    raises(function() init.sparse_(t, 1.5) end, 'nn.init.sparse_', 'sparsity')
  end)
end)
