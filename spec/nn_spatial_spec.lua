-- nn.functional and nn modules on the spatial C kernels (fused batch/instance norm, pooling,
-- reflect/replicate padding, interpolation, unfold/fold): values against PyTorch 2.15, whose
-- sum and cos-weighted sum of each output (float64) are written below.
local torch = require 'torch'
local nn = require 'nn'
local F = nn.functional

-- PyTorch: {y.sum(), (y * arange(numel).cos().view(y.shape)).sum()} for x = arange(n).sin() * 2
local REF = {
  batch_norm = {42, 0.371700546620633},
  batch_norm_rm = {0.0127744117094068, -0.00901993341159284},
  batch_norm_rv = {3.92400138116698, 1.46892690332915},
  avg_pool_ceil = {1.66076941543088, 0.593928370723258},
  adaptive_max = {98.8715951700946, -0.625772154407785},
  adaptive_max_idx = {1326, -48.9588233882049},
  adaptive_avg = {-0.450529947208524, 0.23825657577946},
  reflect = {13.9229440502764, 0.76330020430443},
  replicate1d = {-49.65263150626, -25.0754415830456},
  reflect1d = {22.7508742357835, 3.34427948237231},
  nearest_scale = {4.69194957025324, -3.95066101850339},
  nearest_size = {6.67393234167968, -0.254788017879179},
  bilinear_ac = {3.94761104527051, -3.34597745802157},
  bilinear_scale = {5.43753094138218, -0.259034766170212},
  nearest1d = {7.82904108528202, -2.46117188460477},
  instance = {42, 0.617312987204334},
  instance_track = {4.44089209850063e-16, 0.48388741842817},
  instance_rm = {0.00851627447293786, -0.0060132889410619},
  instance_rv = {3.63145660206917, 1.35884139883223},
  instance_eval = {2.55097765507962, 0.507552170414311},
  unfold = {-6.17848011017265, -8.38174406780382},
  fold = {-6.17848011017265, 0.454851818313256},
}

local function inp(...)
  local shape = {...}
  local n = 1
  for _, d in ipairs(shape) do n = n * d end
  return torch.arange(0, n, {dtype = 'float64'}):sin():reshape(shape) * 2
end
local T = function(v) return torch.tensor(v, {dtype = 'float64'}) end

local function matches(name, y)
  y = y:double()
  local w = torch.arange(0, y:numel(), {dtype = 'float64'}):cos():view(y:size())
  local sum, weighted = y:sum():item(), (y * w):sum():item()
  local ref = REF[name]
  assert(math.abs(sum - ref[1]) < 1e-9 and math.abs(weighted - ref[2]) < 1e-9,
         string.format('%s: got %.15g, %.15g, PyTorch %.15g, %.15g', name, sum, weighted, ref[1], ref[2]))
end

local x = inp(2, 3, 5, 7)
local x3 = inp(2, 3, 6)

describe('fused normalization', function()
  it('F.batch_norm runs the fused kernel and updates the running stats as PyTorch', function()
    local rm, rv = torch.zeros(3, {dtype = 'float64'}), torch.ones(3, {dtype = 'float64'})
    local y = F.batch_norm(x:clone():requires_grad_(), rm, rv, T({1, 0.5, 2}), T({0.1, 0.2, 0.3}), true, 0.3)
    matches('batch_norm', y)
    matches('batch_norm_rm', rm)
    matches('batch_norm_rv', rv)
    assert.truthy(tostring(y.grad_fn):find('NativeBatchNorm', 1, true))
    assert.truthy(tostring(F.layer_norm(x:clone():requires_grad_(), 7).grad_fn):find('NativeLayerNorm', 1, true))
    assert.truthy(tostring(F.group_norm(x:clone():requires_grad_(), 3).grad_fn):find('NativeGroupNorm', 1, true))
  end)

  it('half-precision inputs go through float32 and keep their dtype', function()
    local h = x:to('float16')
    local rm, rv = torch.zeros(3, {dtype = 'float16'}), torch.ones(3, {dtype = 'float16'})
    assert.are.equal('float16', F.batch_norm(h, rm, rv, nil, nil, true).dtype)
    assert.is_true(rm:abs():sum():item() > 0)
    assert.are.equal('float16', F.layer_norm(h, 7).dtype)
    assert.are.equal('float16', F.group_norm(h, 3).dtype)
  end)

  it('F.instance_norm and nn.InstanceNorm2d match PyTorch, with and without running stats', function()
    matches('instance', F.instance_norm(x, nil, nil, T({1, 0.5, 2}), T({0.1, 0.2, 0.3})))
    local rm, rv = torch.zeros(3, {dtype = 'float64'}), torch.ones(3, {dtype = 'float64'})
    matches('instance_track', F.instance_norm(x, rm, rv, nil, nil, true, 0.2))
    matches('instance_rm', rm)
    matches('instance_rv', rv)
    local m = nn.InstanceNorm2d(3, {track_running_stats = true, affine = true}):double()
    assert.are.equal(3, m.weight:numel())
    m(x)
    m:evaluate()
    matches('instance_eval', m(x))
    local plain = nn.InstanceNorm2d(3):double()
    assert.is_nil(plain.weight)
    matches('instance', F.instance_norm(x, nil, nil, T({1, 0.5, 2}), T({0.1, 0.2, 0.3})))
    assert.are.same({3, 5, 7}, plain(x[1]):size():totable())
    local xg = inp(2, 2, 3, 3):requires_grad_()
    assert.is_true(torch.autograd.gradcheck(function(a, w)
      return F.instance_norm(a, torch.zeros(2, {dtype = 'float64'}), torch.ones(2, {dtype = 'float64'}), w, nil, true)
    end, {xg, T({1, 2}):requires_grad_()}))
  end)
end)

describe('pooling', function()
  it('avg_pool2d (ceil_mode), adaptive_avg_pool2d and adaptive_max_pool2d match PyTorch', function()
    matches('avg_pool_ceil', F.avg_pool2d(x, 3, {stride = 2, padding = 1, ceil_mode = true, count_include_pad = false}))
    matches('adaptive_avg', F.adaptive_avg_pool2d(x, {4, 3}))
    local v, i = F.adaptive_max_pool2d(x, {3, 4}, {return_indices = true})
    matches('adaptive_max', v)
    matches('adaptive_max_idx', i)
    assert.are.equal('int64', i.dtype)
    local mv, mi = nn.AdaptiveMaxPool2d({3, 4}, {return_indices = true})(x)
    assert.is_true(mv:equal(v) and mi:equal(i))
    assert.are.same({3, 2, 2}, nn.AdaptiveMaxPool2d(2)(x[1]):size():totable())
    assert.is_true(torch.autograd.gradgradcheck(function(a) return F.adaptive_max_pool2d(a, 2) end,
                                                {inp(1, 2, 4, 5):requires_grad_()}))
  end)
end)

describe('padding', function()
  it("F.pad's reflect and replicate modes and the padding modules match PyTorch", function()
    matches('reflect', F.pad(x, {2, 1, 3, 0}, {mode = 'reflect'}))
    matches('reflect', nn.ReflectionPad2d({2, 1, 3, 0})(x))
    matches('reflect', nn.SpatialReflectionPadding(2, 1, 3, 0)(x))
    matches('replicate1d', F.pad(x3, {2, 4}, {mode = 'replicate'}))
    matches('reflect1d', F.pad(x3, {3, 1}, {mode = 'reflect'}))
    assert.are.same({2, 3, 9, 11}, nn.ReplicationPad2d(2)(x):size():totable())
    assert.are.same({2, 3, 6, 8}, nn.SpatialReplicationPadding(1, 0, 1, 0)(x):size():totable())
    assert.has_error(function() F.pad(x, {1, 1}, {mode = 'circular'}) end)
    assert.has_error(function() F.pad(x, {1, 1, 1, 1, 1, 1}, {mode = 'reflect'}) end)
  end)
end)

describe('interpolation', function()
  it('F.interpolate and nn.Upsample match PyTorch', function()
    matches('nearest_scale', F.interpolate(x, {scale_factor = 1.7}))
    matches('nearest_scale', nn.SpatialUpSamplingNearest(1.7)(x))
    matches('nearest_size', nn.Upsample({size = {9, 4}})(x))
    matches('bilinear_ac', F.interpolate(x, {size = {8, 11}, mode = 'bilinear', align_corners = true}))
    matches('bilinear_scale', nn.Upsample({scale_factor = {2, 1.5}, mode = 'bilinear'})(x))
    matches('nearest1d', F.interpolate(x3, {scale_factor = 2.5}))
    assert.has_error(function() F.interpolate(x, {size = 3, scale_factor = 2}) end)
    assert.has_error(function() F.interpolate(x, {size = 3, align_corners = true}) end)
    assert.has_error(function() nn.Upsample({}) end)
  end)
end)

describe('unfold and fold', function()
  it('F.unfold, F.fold, nn.Unfold and nn.Fold match PyTorch', function()
    local opts = {dilation = {1, 2}, padding = 1, stride = {2, 1}}
    local u = F.unfold(x, {2, 3}, opts)
    matches('unfold', u)
    matches('unfold', nn.Unfold({2, 3}, opts)(x))
    matches('fold', F.fold(u, {5, 7}, {2, 3}, opts))
    matches('fold', nn.Fold({5, 7}, {2, 3}, opts)(u))
    assert.are.same({3, 5, 7}, F.fold(u[1], {5, 7}, {2, 3}, opts):size():totable())
  end)
end)

-- reference values from PyTorch 2.15 on x = arange(1, 13) viewed (1, 1, 3, 4)
describe('circular padding, divisor_override, padding_mode and SpatialUpSamplingBilinear', function()
  local a = torch.arange(1, 13, {dtype = 'float64'}):view(1, 1, 3, 4)
  local function same(want, got, tol)
    local w = T(want)
    assert.are.same(w:size():totable(), got:size():totable())
    assert.is_true((w - got:double()):abs():max():item() <= (tol or 1e-4), tostring(got))
  end

  it("F.pad mode='circular' and nn.CircularPad2d wrap the input, as PyTorch", function()
    same({{{{12, 9, 10, 11, 12, 9, 10}, {4, 1, 2, 3, 4, 1, 2}, {8, 5, 6, 7, 8, 5, 6}, {12, 9, 10, 11, 12, 9, 10}}}},
         F.pad(a, {1, 2, 1, 0}, {mode = 'circular'}))
    same({{{12, 9, 10, 11, 12, 9}, {4, 1, 2, 3, 4, 1}, {8, 5, 6, 7, 8, 5}, {12, 9, 10, 11, 12, 9},
           {4, 1, 2, 3, 4, 1}}}, nn.CircularPad2d(1)(a[1]))
    same({{{2, 3, 4, 1, 2, 3, 4, 1}}}, F.pad(torch.arange(1, 5, {dtype = 'float64'}):view(1, 1, 4), {3, 1}, {mode = 'circular'}))
    local xg = torch.randn(2, 2, 3, 4, {dtype = 'float64', requires_grad = true})
    assert.is_true(torch.autograd.gradcheck(function(v) return F.pad(v, {2, 1, 3, 0}, {mode = 'circular'}) end, {xg}))
    assert.is_true(torch.autograd.gradgradcheck(function(v) return F.pad(v, {1, 1, 1, 1}, {mode = 'circular'}) end, {xg}))
    local ok, err = pcall(F.pad, a, {5, 0, 0, 0}, {mode = 'circular'})
    assert.is_false(ok)
    assert.truthy(tostring(err):find('circular padding (5, 0) must be at most the input width 4', 1, true), tostring(err))
  end)

  it('avg_pool2d divides window sums by divisor_override, as PyTorch', function()
    same({{{{4.666667, 7.333333}}}}, F.avg_pool2d(a, 2, {divisor_override = 3}))
    same({{{{0.333333, 1.666667, 1.333333}, {4.666667, 11.333333, 6.666667}}}},
         nn.AvgPool2d(2, {padding = 1, divisor_override = 3})(a))
    same({{{{7, 15, 6}, {15, 27, 10}}}}, F.avg_pool2d(a, 3, {stride = 2, padding = 1, ceil_mode = true, divisor_override = 2}))
    local xg = torch.randn(1, 2, 5, 6, {dtype = 'float64', requires_grad = true})
    assert.is_true(torch.autograd.gradcheck(function(v) return F.avg_pool2d(v, 3, {stride = 2, padding = 1, divisor_override = 5}) end, {xg}))
    assert.has_error(function() F.avg_pool2d(a, 2, {divisor_override = 0}) end,
      'F.avg_pool2d: divisor_override must be a non-zero number, got 0')
  end)

  it("Conv2d and Conv1d take padding_mode ('reflect', 'circular', ...), as PyTorch", function()
    local c = nn.Conv2d(1, 2, 3, {padding = 1, padding_mode = 'circular', dtype = 'float64'})
    torch.no_grad(function()
      c.weight:copy_(torch.arange(0, 18, {dtype = 'float64'}):view(2, 1, 3, 3) / 10)
      c.bias:copy_(T({0.5, -0.5}))
    end)
    same({{{{19.1, 19.1, 22.7, 20.3}, {29.9, 29.9, 33.5, 31.1}, {19.1, 19.1, 22.7, 20.3}},
           {{69.4, 66.7, 78.4, 73.3}, {80.2, 77.5, 89.2, 84.1}, {69.4, 66.7, 78.4, 73.3}}}}, c(a), 1e-9)
    assert.truthy(tostring(c):find("padding_mode='circular'", 1, true))
    local c1 = nn.Conv1d(1, 1, 3, {padding = 'same', padding_mode = 'reflect', dtype = 'float64'})
    torch.no_grad(function() c1.weight:copy_(T({{{1, 2, 3}}})); c1.bias:zero_() end)
    same({{{10, 14, 20, 26, 32, 38, 38}}}, c1(torch.arange(1, 8, {dtype = 'float64'}):view(1, 1, 7)), 1e-9)
    assert.has_error(function() nn.Conv2d(1, 1, 3, {padding_mode = 'mirror'}) end)
    assert.has_error(function() nn.ConvTranspose2d(1, 1, 3, {padding_mode = 'reflect'}) end)
  end)

  it("Torch7's SpatialUpSamplingBilinear: corners aligned, (H - 1) * scale + 1", function()
    local y = nn.SpatialUpSamplingBilinear(2)(a)
    assert.are.same({1, 1, 5, 7}, y:size():totable())
    same({3, 3.5, 4, 4.5, 5, 5.5, 6}, y[1][1][2], 1e-12)
    assert.are.same({1, 1, 5, 3}, nn.SpatialUpSamplingBilinear({oheight = 5, owidth = 3})(a):size():totable())
    assert.has_error(function() nn.SpatialUpSamplingBilinear(1.5) end)
  end)
end)
