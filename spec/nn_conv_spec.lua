-- Convolution and pooling (lib/nn/functional/conv.lua and the modules on it): values against PyTorch 2.15
-- (inputs from a fixed formula both sides compute), gradients by gradcheck.
local torch = require 'torch'
local nn = require 'nn'
local F = nn.functional

local function inp(c, ...)
  local shape = {...}
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return ((torch.arange(0, n, {dtype = 'float64'}) * 0.3 + c):cos() * 0.5):view(shape)
end
local function near(a, b, tol) return math.abs(a - b) <= (tol or 1e-10) * math.max(1, math.abs(b)) end

describe('convolution', function()
  local x, w, b = inp(1, 2, 3, 6, 5), inp(2, 4, 3, 3, 2), inp(3, 4)
  it('conv2d with stride and padding matches PyTorch', function()
    local y = F.conv2d(x, w, b, {stride = {2, 1}, padding = {1, 0}})
    assert.are.same({2, 4, 3, 4}, y:size():totable())
    local want = {0.3308333313815859, 0.36390574572671563, 0.32025500297132337, 0.20378029396287045,
                  -1.3393174949479763, -1.5717859883327279}
    local got = y:reshape(-1):_flat_values()
    for i = 1, 6 do assert.is_true(near(got[i], want[i]), i .. ': ' .. got[i]) end
  end)
  it("groups, dilation and padding='same' match PyTorch", function()
    local y = F.conv2d(x:narrow(2, 1, 2), inp(4, 4, 1, 2, 2), nil, {groups = 2, dilation = 2})
    assert.are.same({2, 4, 4, 3}, y:size():totable())
    assert.is_true(near(y:sum():item(), 0.12350308420382833))
    assert.is_true(near(F.conv2d(x, w, b, {padding = 'same'}):sum():item(), -128.6585644741723))
    assert.is_true(near(F.conv1d(inp(5, 2, 3, 7), inp(6, 2, 3, 3), nil, {stride = 2, padding = 1}):sum():item(),
                        1.9117257933701517))
  end)
  it('gradchecks, twice', function()
    local xs, ws, bs = inp(1, 1, 2, 4, 4):requires_grad_(), inp(2, 3, 2, 2, 2):requires_grad_(), inp(3, 3):requires_grad_()
    local f = function(a, c, d) return F.conv2d(a, c, d, {stride = 2, padding = 1}) end
    assert.is_true(torch.autograd.gradcheck(f, {xs, ws, bs}))
    assert.is_true(torch.autograd.gradgradcheck(f, {xs, ws, bs}))
  end)
  it('refuses mismatched channels and kernels larger than the input', function()
    local ok, err = pcall(F.conv2d, x, inp(1, 4, 2, 3, 3))
    assert.truthy(err:find('expects input with 2 channels, got input of size 2x3x6x5', 1, true), err)
    assert.has_error(function() F.conv2d(x, inp(1, 1, 3, 9, 9)) end)
  end)
end)

describe('transposed and 1-D convolution', function()
  -- x = (arange % 7) / 7 - 0.4, w = (arange % 5) / 5 - 0.3, as PyTorch computed them
  local function pattern(m, shift, ...)
    local shape = {...}
    local n = 1
    for _, v in ipairs(shape) do n = n * v end
    return (torch.arange(0, n, {dtype = 'float64'}):remainder(m) / m - shift):view(shape)
  end
  it('F.conv_transpose2d and nn.ConvTranspose2d match PyTorch', function()
    local x, w = pattern(7, 0.4, 2, 3, 4, 4), pattern(5, 0.3, 3, 2, 3, 3)
    local b = torch.tensor({0.1, -0.2}, {dtype = 'float64'})
    local y = F.conv_transpose2d(x, w, b, {stride = 2, padding = 1, output_padding = 1})
    assert.are.same({2, 2, 8, 8}, y:size():totable())
    assert.is_true(near(y:sum():item(), -10.1257142857))
    assert.is_true(near((y * y):sum():item(), 16.944555102))
    local m = nn.ConvTranspose2d(3, 2, 3, {stride = 2, padding = 1, output_padding = 1}):double()
    assert.are.same({3, 2, 3, 3}, m.weight:size():totable())
    torch.no_grad(function() m.weight:copy_(w); m.bias:copy_(b) end)
    assert.is_true(near(m(x):sum():item(), -10.1257142857))
  end)
  it("F.conv1d with padding='same', an even kernel and dilation matches PyTorch", function()
    local y = F.conv1d(pattern(5, 0.5, 2, 3, 9), pattern(3, 0.4, 4, 3, 4), nil, {padding = 'same', dilation = 2})
    assert.are.same({2, 4, 9}, y:size():totable())
    assert.is_true(near(y:sum():item(), 5.76))
    assert.is_true(near((y * y):sum():item(), 4.27306666667))
  end)
end)

describe('pooling', function()
  it('MaxPool2d and AvgPool2d pass ceil_mode, dilation and return_indices to F', function()
    local x = torch.arange(0, 36, {dtype = 'float64'}):view(1, 1, 6, 6)
    local m = nn.MaxPool2d(3, {stride = 2, ceil_mode = true, return_indices = true})
    local v, i = m(x)
    assert.are.same({1, 1, 3, 3}, v:size():totable())     -- PyTorch: ceil((6 - 3) / 2) + 1 = 3
    assert.are.same({15, 17, 18, 27, 29, 30, 33, 35, 36}, i:view(-1):totable())
    assert.are.same({1, 1, 2, 2}, nn.MaxPool2d(2, {stride = 2, dilation = 2})(x):size():totable())
    assert.are.same({1, 1, 3, 3}, nn.AvgPool2d(3, {stride = 2, ceil_mode = true})(x):size():totable())
  end)
  it('max_pool2d with dilation, ceil_mode and padding matches PyTorch; NaN wins', function()
    local x = (torch.arange(0, 2 * 3 * 7 * 6, {dtype = 'float64'}) * 0.37):sin():view(2, 3, 7, 6)
    local v, i = F.max_pool2d(x, {2, 3}, {stride = {1, 2}, dilation = {2, 1}, ceil_mode = true, return_indices = true})
    assert.are.same({2, 3, 5, 3}, v:size():totable())
    assert.is_true(near(v:sum():item(), 62.4798303399))
    assert.are.equal(1991, i:sum():item())
    v, i = F.max_pool2d(x, 3, {stride = 2, padding = 1, return_indices = true})
    assert.are.same({2, 3, 4, 3}, v:size():totable())
    assert.is_true(near(v:sum():item(), 60.9647233853))
    assert.are.equal(1535, i:sum():item())
    local n = torch.tensor({{{{1, 0 / 0, 3}, {4, 5, 6}}}})
    v, i = F.max_pool2d(n, 2, {stride = 1, return_indices = true})
    assert.is_true(v[1][1][1][1] ~= v[1][1][1][1])
    assert.are.same({2, 2}, i:view(-1):totable())
    local xg = x:narrow(4, 1, 5):clone():requires_grad_()
    assert.is_true(torch.autograd.gradgradcheck(function(a) return F.max_pool2d(a, 3, {stride = 2, padding = 1}) end, {xg}))
    assert.has_error(function() F.max_pool2d(x, 2, {padding = 2}) end)
  end)
  local x = inp(1, 2, 3, 6, 5)
  it('max_pool2d values and 1-based indices, with padding, match PyTorch', function()
    local v, i = F.max_pool2d(x, 2, {return_indices = true})
    assert.is_true(near(v:sum():item(), 9.288909030045994))
    assert.are.same({1, 3, 17, 19, 21, 23}, i[1][1]:reshape(-1):totable())
    assert.is_true(near(F.max_pool2d(x, 3, {stride = 2, padding = 1}):sum():item(), 19.188087172130963))
  end)
  it('avg_pool2d (count_include_pad=false) and adaptive_avg_pool2d match PyTorch', function()
    assert.is_true(near(F.avg_pool2d(x, 2, {stride = 1, padding = 1, count_include_pad = false}):sum():item(),
                        -5.414220985597715))
    assert.is_true(near(F.adaptive_avg_pool2d(x, {4, 3}):sum():item(), -1.649692391661767))
  end)
  it('gradcheck', function()
    local xs = inp(2, 1, 2, 4, 4):requires_grad_()
    assert.is_true(torch.autograd.gradcheck(function(a) return F.max_pool2d(a, 2) end, {xs}))
    assert.is_true(torch.autograd.gradcheck(function(a) return F.avg_pool2d(a, 3, {stride = 1, padding = 1}) end, {xs}))
    assert.is_true(torch.autograd.gradcheck(function(a) return F.adaptive_avg_pool2d(a, 3) end, {xs}))
  end)
end)

describe('conv modules', function()
  it('a small CNN runs forward and backward, with Torch7 names', function()
    local cnn = nn.Sequential(nn.Conv2d(1, 4, 3, {padding = 1}), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2),
                              nn.SpatialConvolution(4, 6, 3, 3, 1, 1, 1, 1), nn.ReLU(),
                              nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(6, 3))
    local y = cnn(torch.randn(5, 1, 8, 8))
    assert.are.same({5, 3}, y:size():totable())
    y:sum():backward()
    assert.are.same({4, 1, 3, 3}, cnn[1].weight.grad:size():totable())
    assert.truthy(tostring(cnn):find('Conv2d(1, 4, kernel_size={3, 3}, padding=1)', 1, true), tostring(cnn))
    assert.are.same({1, 2, 6, 6}, nn.ZeroPad2d(1)(torch.ones(1, 2, 4, 4)):size():totable())
  end)
end)

-- reference values from PyTorch 2.15 (positions there 0-based)
describe('1-D pooling', function()
  local x = torch.tensor({{{1, 5, 2, 8, 3, 3, 9}, {0, -1, 4, 4, 2, 7, 1}}}, {dtype = 'float64'})
  local function same(want, got) assert.are.same(want, got:totable()) end

  it('max_pool1d gives values and 1-based positions, with padding, dilation and ceil_mode', function()
    local v, i = nn.functional.max_pool1d(x, 3, {stride = 2, padding = 1, return_indices = true})
    same({{{5, 8, 8, 9}, {0, 4, 7, 7}}}, v)
    same({{{2, 4, 4, 7}, {1, 3, 6, 6}}}, i)
    same({{{2, 3, 9}, {4, 4, 2}}}, nn.functional.max_pool1d(x, 2, {ceil_mode = true, dilation = 2}))
    same({{5, 8, 3}, {0, 4, 7}}, nn.MaxPool1d(2)(x[1]))
    same({{5, 0}, {8, 4}, {3, 7}}, nn.TemporalMaxPooling(2)(x[1]:t()))
    local xg = torch.randn(2, 3, 9, {dtype = 'float64', requires_grad = true})
    assert.is_true(torch.autograd.gradcheck(function(a) return nn.functional.max_pool1d(a, 3, {stride = 2, padding = 1}) end, {xg}))
    assert.has_error(function() nn.functional.max_pool1d(torch.randn(2, 3, 4, 5), 2) end,
      'F.max_pool1d: expected a 2-D or 3-D input ((N,) C, L), got size 2x3x4x5')
  end)

  it('avg_pool1d counts the padding unless count_include_pad is false', function()
    local function near(want, got)
      assert.is_true((torch.tensor(want, {dtype = 'float64'}) - got):abs():max():item() < 1e-4)
    end
    near({{{2, 5, 4.666667, 4}, {-0.333333, 2.333333, 4.333333, 2.666667}}},
         nn.functional.avg_pool1d(x, 3, {stride = 2, padding = 1}))
    near({{{3, 5, 4.666667, 6}, {-0.5, 2.333333, 4.333333, 4}}},
         nn.functional.avg_pool1d(x, 3, {stride = 2, padding = 1, count_include_pad = false}))
    near({{{3, 3.5, 5, 5.5, 3, 6}, {-0.5, 1.5, 4, 3, 4.5, 4}}}, nn.AvgPool1d(2, {stride = 1})(x))
  end)
end)
