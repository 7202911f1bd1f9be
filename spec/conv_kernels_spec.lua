-- The C convolution kernels (src/tensor/mt_conv.c) behind torch._conv2d and
-- torch._conv_transpose2d: values against conv2d's definition (spec/support/conv_ref.lua), on
-- strides, asymmetric padding, dilation and groups, float32 and float64;
-- gradients and second derivatives by gradcheck (src/autograd/ag_conv.c).
local torch = require 'torch'
local ref = dofile('spec/support/conv_ref.lua')
local th = dofile('spec/support/th.lua')

local function close(want, got, tol)
  local diff = (want:double() - got:double()):abs():max():item()
  assert.is_true(diff <= tol, string.format('max difference %g (tolerance %g)', diff, tol))
end

local CASES, conv, naive_conv2d = ref.CASES, ref.conv, ref.naive_conv2d

describe('torch._conv2d', function()
  for _, dtype in ipairs({'float32', 'float64'}) do
    it('matches the definition in ' .. dtype, function()
      torch.manual_seed(7)
      for _, cs in ipairs(CASES) do
        local x = torch.randn(cs[1][1], cs[1][2], cs[1][3], cs[1][4], {dtype = dtype})
        local w = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = dtype})
        local b = torch.randn(cs[2][1], {dtype = dtype})
        local want = naive_conv2d(x, w, b, cs[3], cs[4], cs[5], cs[6])
        local got = conv(x, w, b, cs)
        assert.are.same(want:size():totable(), got:size():totable())
        assert.are.equal(dtype, got.dtype)
        close(want, got, dtype == 'float32' and 1e-4 or 1e-12)
        close(naive_conv2d(x, w, nil, cs[3], cs[4], cs[5], cs[6]), conv(x, w, nil, cs), dtype == 'float32' and 1e-4 or 1e-12)
      end
    end)
  end

  it('reads non-contiguous inputs and gives an empty batch', function()
    torch.manual_seed(3)
    local x = torch.randn(3, 2, 6, 5):transpose(3, 4)
    local w = torch.randn(2, 2, 3, 3):transpose(3, 4)
    close(naive_conv2d(x, w, nil, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1), torch._conv2d(x, w, nil, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1e-4)
    local e = torch._conv2d(torch.zeros(0, 2, 5, 5), torch.randn(4, 2, 3, 3), nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    assert.are.same({0, 4, 3, 3}, e:size():totable())
  end)

  it('has derivatives to second order (gradcheck, gradgradcheck)', function()
    torch.manual_seed(11)
    for i, cs in ipairs(CASES) do
      if i <= 4 then
        local x = torch.randn(cs[1][1], cs[1][2], math.min(cs[1][3], 6), math.min(cs[1][4], 6), {dtype = 'float64', requires_grad = true})
        local w = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = 'float64', requires_grad = true})
        local b = torch.randn(cs[2][1], {dtype = 'float64', requires_grad = true})
        local f = function(a, v, c) return conv(a, v, c, cs) end
        assert.is_true(torch.autograd.gradcheck(f, {x, w, b}))
        assert.is_true(torch.autograd.gradgradcheck(f, {x, w, b}))
      end
    end
  end)

  -- spec/support/conv_ref.lua's shapes reach each of the float32 kernel's roads
  it('gives float32 gradients (input, weight, fused bias) equal to float64 on every kernel path', function()
    local errors = ref.float32_path_errors()
    assert.are.equal(0, #errors, table.concat(errors, '\n'))
  end)

  -- The direct kernel is built once per x86-64 level and picked from cpuid; TH_CONV_ISA
  -- runs a lower one. Each level this CPU has gives the definition's values and float64's
  -- gradients (spec/support/conv_level_checks.lua in a th of its own).
  it('gives the same answers at every x86-64 level the CPU has (TH_CONV_ISA)', function()
    local levels = {'DEFAULT', 'AVX2', 'AVX512'}
    local top = torch._conv_kernel()
    for _, level in ipairs(levels) do
      local ok, out = th.run_env('TH_CONV_ISA=' .. level:lower(), 'spec/support/conv_level_checks.lua')
      assert.is_true(ok, out)
      assert.is_truthy(out:find('DONE 0\n'), level .. ':\n' .. out)
      assert.are.equal(level, out:match('LEVEL (%u+%d*)'), out)
      if level == top then break end
    end
    if top ~= 'AVX512' then pending('this CPU tops at ' .. top .. ': the levels up to it were checked') end
  end)

  it('raises on bad shapes and parameters, naming the op', function()
    local x, w = torch.randn(1, 3, 5, 5), torch.randn(4, 3, 3, 3)
    local function raises(pattern, ...)
      local ok, err = pcall(torch._conv2d, ...)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
    end
    raises('conv2d: expected a 4-D input', torch.randn(3, 5, 5), w, nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: given groups=1', torch.randn(1, 2, 5, 5), w, nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: stride must be positive', x, w, nil, 0, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: kernel size 3x3', torch.randn(1, 3, 2, 2), w, nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: expected a bias of size 4', x, w, torch.randn(3), 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: out_channels', x, torch.randn(3, 3, 3, 3), nil, 1, 1, 0, 0, 0, 0, 1, 1, 2)
    raises('conv2d: expected float32 or float64', x:long(), w:long(), nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
  end)
end)

describe('torch._conv_transpose2d', function()
  it('is the adjoint of conv2d in its input', function()
    -- <conv(x, w), u> = <x, conv_transpose(u, w)> for every x, u
    torch.manual_seed(5)
    for _, cs in ipairs({{{2, 4, 7, 6}, {6, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 2},
                         {{1, 3, 5, 5}, {4, 3, 2, 3}, {1, 1}, {0, 1}, {2, 1}, 1}}) do
      local x = torch.randn(cs[1][1], cs[1][2], cs[1][3], cs[1][4], {dtype = 'float64'})
      local w = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = 'float64'})
      local s, p, d = cs[3], cs[4], cs[5]
      local y = torch._conv2d(x, w, nil, s[1], s[2], p[1], p[1], p[2], p[2], d[1], d[2], cs[6])
      local u = torch.randn(y:size(), {dtype = 'float64'})
      -- the transposed convolution's input is the convolution's output: u (n, o, ...), weight (o, c / g, ...)
      local out_pad = {x:size(3) - ((y:size(3) - 1) * s[1] - 2 * p[1] + d[1] * (w:size(3) - 1) + 1),
                       x:size(4) - ((y:size(4) - 1) * s[2] - 2 * p[2] + d[2] * (w:size(4) - 1) + 1)}
      local z = torch._conv_transpose2d(u, w, nil, s[1], s[2], p[1], p[2], out_pad[1], out_pad[2], d[1], d[2], cs[6])
      assert.are.same(x:size():totable(), z:size():totable())
      assert.is_true(math.abs((y * u):sum():item() - (x * z):sum():item()) < 1e-9)
    end
  end)

  it('matches PyTorch on a small case, with bias', function()
    -- torch.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)
    -- with x = arange(8).view(1,2,2,2)/8, w = arange(18).view(2,1,3,3)/18, b = [0.5]
    local x = torch.arange(0, 8, {dtype = 'float64'}):view(1, 2, 2, 2) / 8
    local w = torch.arange(0, 18, {dtype = 'float64'}):view(2, 1, 3, 3) / 18
    local y = torch._conv_transpose2d(x, w, torch.tensor({0.5}, {dtype = 'float64'}), 2, 2, 1, 1, 1, 1, 1, 1, 1)
    assert.are.same({1, 1, 4, 4}, y:size():totable())
    local want = {0.861111111111111, 1.32638888888889, 0.979166666666667, 1.02083333333333, 1.375, 2.45833333333333,
                  1.61111111111111, 1.72222222222222, 1.09722222222222, 1.79861111111111, 1.21527777777778,
                  1.28472222222222, 1.26388888888889, 2.17361111111111, 1.42361111111111, 1.49305555555556}
    close(torch.tensor(want, {dtype = 'float64'}), y:reshape(-1), 1e-12)
  end)

  it('has derivatives to second order', function()
    torch.manual_seed(13)
    local x = torch.randn(2, 4, 4, 3, {dtype = 'float64', requires_grad = true})
    local w = torch.randn(4, 3, 3, 2, {dtype = 'float64', requires_grad = true})
    local b = torch.randn(6, {dtype = 'float64', requires_grad = true})
    local f = function(a, v, c) return torch._conv_transpose2d(a, v, c, 2, 1, 1, 0, 1, 0, 1, 2, 2) end
    assert.is_true(torch.autograd.gradcheck(f, {x, w, b}))
    assert.is_true(torch.autograd.gradgradcheck(f, {x, w, b}))
  end)
end)
