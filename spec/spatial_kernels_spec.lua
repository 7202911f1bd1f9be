-- The C kernels behind nn's normalisation, pooling, padding, interpolation and unfold/fold:
-- torch._batch_norm, _group_norm, _layer_norm (src/tensor/mt_norm.c, src/autograd/ag_norm.c),
-- _avg_pool2d, _adaptive_avg_pool2d, _reflection_pad2d, _replication_pad2d,
-- _upsample_nearest2d, _upsample_bilinear2d (src/tensor/mt_resample.c), _unfold, _fold
-- (src/autograd/ag_spatial.c) and _adaptive_max_pool2d_indices (src/tensor/mt_pool.c).
-- Values against PyTorch 2 numbers pasted here (inputs are sines of a ramp, so both sides
-- build them alike), float32 and float64; gradients and second derivatives by gradcheck.
local torch = require 'torch'

-- sin(0.37 * (0, 1, 2, ...)) * scale + shift, viewed as shape
local function ramp(shape, dtype, scale, shift)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return (torch.arange(0, n, {dtype = 'float64'}) * 0.37):sin():view(shape):mul(scale or 1):add(shift or 0)
    :to(dtype or 'float64')
end

local function tensor64(t) return torch.tensor(t, {dtype = 'float64'}) end

local function close(want, got, tol)
  local diff = (want:double() - got:double()):abs():max():item()
  assert.is_true(diff <= tol, string.format('max difference %g (tolerance %g)', diff, tol))
end

-- the sum of t and its sum weighted by cos(0.3 * (0, 1, ...)): a check that sees order
local function checksums(t)
  local flat = t:double():reshape(-1)
  local w = (torch.arange(0, flat:numel(), {dtype = 'float64'}) * 0.3):cos()
  return flat:sum():item(), (flat * w):sum():item()
end

local function matches(case, got, tol)
  assert.are.same(case[2], got:size():totable(), case[1])
  local s, ws = checksums(got)
  assert.is_true(math.abs(s - case[3]) <= tol * (1 + math.abs(case[3])), case[1] .. ': sum ' .. s)
  assert.is_true(math.abs(ws - case[4]) <= tol * (1 + math.abs(case[4])), case[1] .. ': weighted sum ' .. ws)
end

local function raises(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok)
  assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
end

local W3, B3 = {1.5, -0.5, 2.0}, {0.1, 0.2, 0.3}
local W4, B4 = {1.5, -0.5, 2.0, 0.7}, {0.1, 0.2, 0.3, -0.4}

describe('torch._batch_norm', function()
  for _, dtype in ipairs({'float32', 'float64'}) do
    local tol = dtype == 'float32' and 1e-5 or 1e-12
    local function t(v) return torch.tensor(v, {dtype = dtype}) end

    it('normalises with batch statistics and updates the running ones (' .. dtype .. ')', function()
      -- F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1, eps=1e-5), x (2, 3, 4)
      local x = ramp({2, 3, 4}, dtype, 2, 0.5)
      local rm, rv = t({0.2, -0.1, 0.4}), t({1.5, 0.5, 2.0})
      local y = torch._batch_norm(x, t(W3), t(B3), rm, rv, true, 0.1, 1e-5)
      assert.are.equal(dtype, y.dtype)
      close(tensor64({0.509398044492053, 1.25490683241791, 1.89951450323782, 2.3559764326976, -0.362730033580068,
                      -0.323689602278079, -0.137871954132202, 0.169573363891014, -0.0192129795433504, -1.10530431305499,
                      -2.11655873153639, -2.91610769345502, -1.47619910982183, -1.54239502244929, -1.33089036886263,
                      -0.870311311711638, 1.16155524240922, 0.753087199251492, 0.345659684238951, -0.00558389980032995,
                      2.10080403133139, 2.38943429082948, 2.27990498988196, 1.78704040554691}), y:reshape(-1), tol)
      -- the running variance moves towards the unbiased batch variance
      close(tensor64({0.190283593405655, 0.0594148026060057, 0.467744609890516}), rm, tol)
      close(tensor64({1.59200301827191, 0.539794764543825, 2.00980461284264}), rv, tol)
      -- eval mode with the updated running statistics
      local e = torch._batch_norm(x, t(W3), t(B3), rm, rv, false, 0.1, 1e-5)
      close(tensor64({0.468198625991478, 1.32799360198837, 2.07141936146464, 2.59785671544309, -1.45530169220927,
                      -1.40820086349378, -1.18401878031097, -0.813097435933938, 0.855059137014586, -0.182949755536819,
                      -1.14943484443044, -1.91358690687105, -1.82178974877009, -1.89813346735584, -1.65420523807271,
                      -1.12301960243512, 0.38369181538209, -0.109109690515872, -0.600655837896889, -1.02441816166016,
                      2.88122069612867, 3.15707298108314, 3.05239266104885, 2.58134772626487}), e:reshape(-1), tol)
    end)

    it('takes (N, C) and (N, C, H, W) inputs, with or without affine parameters (' .. dtype .. ')', function()
      -- F.batch_norm(x (5, 3), None, None, w, None, True, eps=1e-3)
      local y = torch._batch_norm(ramp({5, 3}, dtype, 2, 0.5), t(W3), nil, nil, nil, true, 0.1, 1e-3)
      close(tensor64({-0.237509164264452, -0.199611665600606, 1.72191852823568, 1.72559073745456, -0.635701788520738,
                      2.48250701267276, 1.50832079536329, -0.311289902821953, 0.41351153458729, -0.648002270341093,
                      0.413307182385898, -2.18708228468422, -2.3484000982123, 0.733296174557398, -2.43085479081151}),
            y:reshape(-1), tol)
      local x4 = ramp({3, 4, 5, 6}, dtype, 2, 0.5)
      matches({'batch_norm NCHW', {3, 4, 5, 6}, 18, -0.494417655493912},
              torch._batch_norm(x4, t(W4), t(B4), nil, nil, true, 0.1, 1e-5), tol * 10)
      -- non-contiguous input: the same values
      local xt = x4:transpose(3, 4):contiguous():transpose(3, 4)
      close(torch._batch_norm(x4, nil, nil, nil, nil, true, 0.1, 1e-5),
            torch._batch_norm(xt, nil, nil, nil, nil, true, 0.1, 1e-5), tol)
    end)
  end

  it('has derivatives to second order, in training and in eval mode', function()
    torch.manual_seed(3)
    local x = torch.randn(3, 2, 3, 2, {dtype = 'float64', requires_grad = true})
    local w = torch.randn(2, {dtype = 'float64', requires_grad = true})
    local b = torch.randn(2, {dtype = 'float64', requires_grad = true})
    local rm, rv = torch.randn(2, {dtype = 'float64'}), torch.rand(2, {dtype = 'float64'}) + 0.5
    local train = function(a, c, d) return torch._batch_norm(a, c, d, nil, nil, true, 0.1, 1e-5) end
    local eval = function(a, c, d) return torch._batch_norm(a, c, d, rm, rv, false, 0.1, 1e-5) end
    for _, f in ipairs({train, eval}) do
      assert.is_true(torch.autograd.gradcheck(f, {x, w, b}))
      assert.is_true(torch.autograd.gradgradcheck(f, {x, w, b}))
    end
    local bare = function(a) return torch._batch_norm(a, nil, nil, nil, nil, true, 0.1, 1e-5) end
    local x2 = torch.randn(4, 3, {dtype = 'float64', requires_grad = true})
    assert.is_true(torch.autograd.gradcheck(bare, {x2}))
    assert.is_true(torch.autograd.gradgradcheck(bare, {x2}))
  end)

  it('gives the same first derivatives from the fused kernel and under create_graph', function()
    torch.manual_seed(4)
    local x = torch.randn(4, 3, 5, {requires_grad = true})
    local w = torch.randn(3, {requires_grad = true})
    local b = torch.randn(3, {requires_grad = true})
    local g = torch.randn(4, 3, 5)
    local y = torch._batch_norm(x, w, b, nil, nil, true, 0.1, 1e-5)
    local fused = torch.autograd.grad({y}, {x, w, b}, {grad_outputs = {g}, retain_graph = true})
    local composed = torch.autograd.grad({y}, {x, w, b}, {grad_outputs = {g}, create_graph = true})
    for i = 1, 3 do close(fused[i], composed[i], 1e-5) end
    assert.are.equal('NativeBatchNormBackward', y.grad_fn:name())
  end)

  it('raises on bad inputs, naming the op', function()
    local x = torch.randn(4, 3, 2)
    raises('batch_norm: expected more than 1 value per channel when training', torch._batch_norm,
           torch.randn(1, 3), nil, nil, nil, nil, true, 0.1, 1e-5)
    raises('batch_norm: running_mean and running_var are required', torch._batch_norm, x, nil, nil, nil, nil, false,
           0.1, 1e-5)
    raises('batch_norm: weight must have 3 elements', torch._batch_norm, x, torch.ones(4), nil, nil, nil, true, 0.1, 1e-5)
    raises('batch_norm: bias is float64 but the input is float32', torch._batch_norm, x, nil,
           torch.zeros(3, {dtype = 'float64'}), nil, nil, true, 0.1, 1e-5)
    raises('batch_norm: expected an input (N, C, *)', torch._batch_norm, torch.randn(3), nil, nil, nil, nil, true, 0.1, 1e-5)
    raises('batch_norm: expected a float32, float64, bfloat16 or float16 input, got int64', torch._batch_norm, x:long(),
           nil, nil, nil, nil, true, 0.1, 1e-5)
    raises('batch_norm: weight is float64 but a bfloat16 input takes float32 ones', torch._batch_norm, x:bfloat16(),
           torch.ones(3, {dtype = 'float64'}), nil, nil, nil, true, 0.1, 1e-5)
  end)
end)

describe('torch._group_norm and torch._layer_norm', function()
  for _, dtype in ipairs({'float32', 'float64'}) do
    local tol = dtype == 'float32' and 1e-4 or 1e-11
    it('match PyTorch (' .. dtype .. ')', function()
      local x = ramp({3, 4, 5, 6}, dtype, 2, 0.5)
      local w4, b4 = torch.tensor(W4, {dtype = dtype}), torch.tensor(B4, {dtype = dtype})
      matches({'group_norm 2 groups', {3, 4, 5, 6}, 18.1212827672778, -0.202684454329203},
              torch._group_norm(x, 2, w4, b4, 1e-5), tol)
      -- F.instance_norm without running statistics: a group per channel
      matches({'instance_norm', {3, 4, 5, 6}, 18, 0.912450329963743}, torch._group_norm(x, 4, w4, b4, 1e-5), tol)
      local lw = (torch.arange(0, 30, {dtype = 'float64'}) * 0.1):cos():view(5, 6):to(dtype)
      local lb = (torch.arange(0, 30, {dtype = 'float64'}) * 0.2):sin():view(5, 6):to(dtype)
      matches({'layer_norm last 2 dims', {3, 4, 5, 6}, -0.782434767884916, -2.31317627791838},
              torch._layer_norm(x, 2, lw, lb, 1e-5), tol)
      matches({'layer_norm last dim, no affine', {3, 4, 5, 6}, 0, -1.83712823623194},
              torch._layer_norm(x, 1, nil, nil, 1e-5), tol)
    end)
  end

  it('have derivatives to second order', function()
    torch.manual_seed(5)
    local x = torch.randn(2, 4, 3, {dtype = 'float64', requires_grad = true})
    local w = torch.randn(4, {dtype = 'float64', requires_grad = true})
    local b = torch.randn(4, {dtype = 'float64', requires_grad = true})
    local lw = torch.randn(4, 3, {dtype = 'float64', requires_grad = true})
    local lb = torch.randn(4, 3, {dtype = 'float64', requires_grad = true})
    local cases = {
      {function(a, c, d) return torch._group_norm(a, 2, c, d, 1e-5) end, {x, w, b}},
      {function(a) return torch._group_norm(a, 4, nil, nil, 1e-5) end, {x}},
      {function(a, c, d) return torch._layer_norm(a, 2, c, d, 1e-5) end, {x, lw, lb}},
    }
    for _, case in ipairs(cases) do
      assert.is_true(torch.autograd.gradcheck(case[1], case[2]))
      assert.is_true(torch.autograd.gradgradcheck(case[1], case[2]))
    end
  end)

  it('raise on bad groups and dims', function()
    raises('group_norm: 6 channels (input size 2x6x4) cannot be split into 4 groups', torch._group_norm,
           torch.randn(2, 6, 4), 4, nil, nil, 1e-5)
    raises('layer_norm: cannot normalise over the last 3 dims', torch._layer_norm, torch.randn(2, 6), 3, nil, nil, 1e-5)
    raises('layer_norm: weight must have 6 elements', torch._layer_norm, torch.randn(2, 6), 1, torch.ones(5), nil, 1e-5)
  end)
end)

-- {name, size, sum, weighted sum} from PyTorch, and the same op here on ramp({2, 3, 5, 7})
local RESAMPLE = {
  {{'avg_pool2d k3x2 s2x1 p1x0', {2, 3, 3, 6}, -9.46159169919688, 1.07638006205809},
   function(x) return torch._avg_pool2d(x, 3, 2, 2, 1, 1, 0, false, true) end},
  {{'avg_pool2d k3 s2 p1 ceil, no pad count', {2, 3, 3, 4}, -6.32891831135298, 0.0936501180495737},
   function(x) return torch._avg_pool2d(x, 3, 2, 2, 2, 1, 1, true, false) end},
  {{'adaptive_avg_pool2d 3x4', {2, 3, 3, 4}, -7.41913700357572, 0.0555702362296135},
   function(x) return torch._adaptive_avg_pool2d(x, 3, 4) end},
  {{'reflect pad', {2, 3, 10, 12}, -24.5651799180247, 2.33657075981991},
   function(x) return torch._reflection_pad2d(x, 2, 3, 1, 4) end},
  {{'replicate pad, cropped', {2, 3, 4, 15}, 58.9829594303709, -29.5135609456084},
   function(x) return torch._replication_pad2d(x, 2, 6, 1, -2) end},
  {{'nearest 8x4', {2, 3, 8, 4}, 0.688611897560572, 1.03412019163237},
   function(x) return torch._upsample_nearest2d(x, 8, 4) end},
  {{'nearest x1.5', {2, 3, 7, 10}, 66.4450400857254, -0.54981557482658},
   function(x) return torch._upsample_nearest2d(x, 7, 10, 1.5, 1.5) end},
  {{'bilinear 8x4', {2, 3, 8, 4}, 0.402490151430435, 3.92830586190427},
   function(x) return torch._upsample_bilinear2d(x, 8, 4, false) end},
  {{'bilinear 8x4 align_corners', {2, 3, 8, 4}, 0.890524212893763, 3.40771382181107},
   function(x) return torch._upsample_bilinear2d(x, 8, 4, true) end},
  {{'bilinear x1.5', {2, 3, 7, 10}, 12.1258611584834, -3.13929813772909},
   function(x) return torch._upsample_bilinear2d(x, 7, 10, false, 1.5, 1.5) end},
  {{'unfold', {2, 18, 9}, 5.53877192445848, -1.30257757058103},
   function(x) return torch._unfold(x, 2, 3, 1, 2, 1, 0, 2, 1) end},
  {{'fold', {2, 3, 5, 7}, 5.53877192445848, 15.7644988652037},
   function(x) return torch._fold(torch._unfold(x, 2, 3, 1, 2, 1, 0, 2, 1), 5, 7, 2, 3, 1, 2, 1, 0, 2, 1) end},
}

describe('pooling, padding, interpolation, unfold and fold', function()
  for _, dtype in ipairs({'float32', 'float64'}) do
    it('match PyTorch (' .. dtype .. ')', function()
      local x = ramp({2, 3, 5, 7}, dtype)
      for _, case in ipairs(RESAMPLE) do
        local y = case[2](x)
        assert.are.equal(dtype, y.dtype)
        matches(case[1], y, dtype == 'float32' and 1e-5 or 1e-12)
      end
    end)
  end

  -- 2x2 windows at stride 2 take a vectorised road (16 windows at a time, masked at the end
  -- of a row): positions as a plain row-major scan, first maximum wins, a NaN beats a number
  it('gives 2x2 stride-2 max pooling positions as a row-major scan, over every row width', function()
    torch.manual_seed(21)
    for _, dtype in ipairs({'float32', 'float64'}) do
      for w = 2, 41 do
        local h = 4 + w % 3
        local x = torch.randint(0, 4, {2, 1, h, w}):to(dtype)         -- few values: many ties
        local flat = x:view(-1)
        for _ = 1, 3 do flat[torch.randint(1, flat:numel() + 1, {1})[1]] = 0 / 0 end
        local idx = torch._max_pool2d_indices(x, 2, 2, 2, 2, 0, 0, 1, 1, false)
        local oh, ow = h // 2, w // 2
        assert.are.same({2, 1, oh, ow}, idx:size():totable())
        local xv, got = x:totable(), idx:totable()
        for n = 1, 2 do
          for i = 1, oh do
            for j = 1, ow do
              local best, at
              for a = 0, 1 do
                for b = 0, 1 do
                  local r, c = 2 * i - 1 + a, 2 * j - 1 + b
                  local v = xv[n][1][r][c]
                  if best == nil or v > best or (v ~= v and best == best) then best, at = v, (r - 1) * w + c end
                end
              end
              assert.are.equal(at, got[n][1][i][j], string.format('%s w=%d window (%d, %d)', dtype, w, i, j))
            end
          end
        end
      end
    end
  end)

  it('gives adaptive max pooling positions as PyTorch (1-based)', function()
    local idx = torch._adaptive_max_pool2d_indices(ramp({2, 3, 5, 7}), 3, 4)
    assert.are.equal('int64', idx.dtype)
    assert.are.same({8, 4, 5, 6, 22, 23, 20, 21, 22, 23, 25, 35, 2, 4, 4, 6, 22, 23, 20, 21, 22, 23, 25, 35, 2, 3, 4, 6,
                     22, 18, 20, 20, 22, 23, 34, 35, 2, 2, 4, 6, 22, 18, 19, 20, 22, 23, 34, 35, 1, 2, 4, 14, 16, 18, 18,
                     20, 22, 32, 34, 35, 1, 2, 4, 14, 16, 17, 18, 20, 30, 32, 34, 34}, idx:reshape(-1):totable())
  end)

  it('have derivatives to second order', function()
    torch.manual_seed(9)
    local x = torch.randn(1, 2, 5, 7, {dtype = 'float64', requires_grad = true})
    for _, case in ipairs(RESAMPLE) do
      local f = function(a) return case[2](a) * 1.5 end
      assert.is_true(torch.autograd.gradcheck(f, {x}), case[1][1])
      assert.is_true(torch.autograd.gradgradcheck(f, {x}), case[1][1])
    end
  end)

  it('keeps leading dims and reads non-contiguous inputs', function()
    local x = ramp({2, 3, 7, 5}):transpose(3, 4)
    close(torch._reflection_pad2d(x:contiguous(), 1, 1, 0, 0), torch._reflection_pad2d(x, 1, 1, 0, 0), 0)
    -- a 1-D pad of (N, C, L): top = bottom = 0
    assert.are.same({3, 9}, torch._replication_pad2d(torch.randn(3, 4), 2, 3, 0, 0):size():totable())
    assert.are.same({5, 2, 2}, torch._adaptive_avg_pool2d(torch.randn(5, 4, 4), 2, 2):size():totable())
  end)

  it('raises on bad parameters, naming the op', function()
    local x = torch.randn(1, 2, 3, 3)
    raises('pad: reflect padding (3, 0) must be less than the input width 3', torch._reflection_pad2d, x, 3, 0, 0, 0)
    raises('avg_pool2d: padding 2 must be between 0 and half the kernel size 3', torch._avg_pool2d, x, 3, 3, 1, 1, 2,
           0, false, true)
    raises('fold: input of size 1x8x4: expected 9 blocks (3x3) in dim 3', torch._fold, torch.randn(1, 8, 4), 4, 4, 2,
           2, 1, 1, 0, 0, 1, 1)
    raises('unfold: expected a 4-D input', torch._unfold, torch.randn(2, 3, 3), 2, 2, 1, 1, 0, 0, 1, 1)
    raises('interpolate: the output height would be 0', torch._upsample_nearest2d, x, 0, 2)
    raises('adaptive_max_pool2d: expected a 4-D input', torch._adaptive_max_pool2d_indices, torch.randn(2, 3), 1, 1)
  end)
end)
