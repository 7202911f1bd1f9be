-- size_overflow_spec.lua: sizes, strides and offsets from plain Lua can never
-- reach outside a tensor's storage. Each case was an overflow that wrapped
-- past a bounds check (start + len, (size - 1) * stride, a shape's product);
-- now each is a Lua error naming the op and the numbers at fault, and the
-- legitimate edge cases beside it still work.
local torch = require 'torch'
local nn = require 'nn'
local F = nn.F

local MAX, MIN = math.maxinteger, math.mininteger
local HUGE = (1 << 62) + 3

local function raises(pattern, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, 'expected an error matching ' .. pattern)
  assert.is_truthy(tostring(err):find(pattern), 'error "' .. tostring(err) .. '" lacks "' .. pattern .. '"')
end

describe('views cannot reach outside their storage', function()
  it('narrow: start + length past the end is refused however large the length', function()
    raises('narrow: start 10 and length ' .. (MAX - 8) .. ' out of range for dim 1 of size 10',
           function() return torch.randn(10):narrow(1, 10, MAX - 8) end)
    raises('narrow: .* out of range', function() return torch.randn(10):narrow(1, MAX, 1) end)
    raises('narrow: .* out of range', function() return torch.randn(10):narrow(1, -1, MAX) end)
    -- the edges that are in range: the last element, and an empty narrow at the end
    assert.are.equal(9, torch.arange(10):narrow(1, 10, 1)[1])
    assert.are.equal(0, torch.randn(4, 4):narrow(2, 2, 1):narrow(1, 5, 0):numel())
  end)

  it('index ranges and slices: huge bounds are refused or clipped, never wrapped', function()
    local x = torch.arange(10)
    raises('index: range', function() return x[{{1, MAX}}] end)
    raises('index: index ' .. MAX .. ' out of range', function() return x[MAX] end)
    raises('select: index', function() return x:select(1, MAX) end)
    assert.are.equal(10, x[{{1, 10}}]:numel())
  end)

  it('as_strided: a stride whose reach overflows is refused', function()
    local x = torch.randn(10)
    raises('as_strided: a view of shape 3, strides ' .. ((1 << 62) + 1000) .. ' and offset 0 reaches outside its storage of 10 elements',
           function() return x:as_strided({3}, {(1 << 62) + 1000}) end)
    raises('as_strided: .*reaches outside', function() return x:as_strided({2, 2}, {MAX, 1}) end)
    raises('as_strided: .*reaches outside', function() return x:as_strided({2}, {1}, MAX) end)
    raises('as_strided: negative size', function() return x:as_strided({-1}, {1}) end)
    raises('as_strided: storage offset %' .. MIN .. ' is out of range', function() return x:as_strided({1}, {1}, MIN) end)
    -- the whole storage exactly, and an empty view, are fine
    assert.are.same({{1, 2}, {3, 4}}, torch.arange(1, 5):as_strided({2, 2}, {2, 1}):totable())
    assert.are.equal(0, x:as_strided({0, 3}, {1, 1}):numel())
  end)

  it('view, reshape and unflatten: a shape whose product wraps is refused', function()
    local x = torch.randn(24)
    raises("view: shape '" .. HUGE .. "x8' is invalid for input of size 24", function() return x:view(HUGE, 8) end)
    raises("reshape: shape '" .. HUGE .. "x8' is invalid for input of size 24", function() return x:reshape(HUGE, 8) end)
    raises("view: shape '%-1x" .. HUGE .. "x8' is invalid", function() return x:view(-1, HUGE, 8) end)
    raises('unflatten: sizes %[' .. HUGE .. ', 8%] don\'t multiply up', function() return x:unflatten(1, {HUGE, 8}) end)
    raises('unflatten: sizes', function() return x:unflatten(1, {-1, HUGE}) end)
    -- a zero size does not hide a huge one
    raises('view: .*too large', function() return torch.randn(0):view(0, 1 << 62, 8) end)
    assert.are.same({3, 8}, torch.randn(24):view(-1, 8):size():totable())
    assert.are.same({2, 3, 4}, torch.randn(24):unflatten(1, {2, -1, 4}):size():totable())
  end)

  it('repeat and expand: counts that wrap and negative sizes are refused', function()
    raises('repeat: repeating 2 by 6148914691236517206 overflows',
           function() return torch.randn(2)['repeat'](torch.randn(2), 6148914691236517206) end)
    raises('expand: invalid size %-2 for dim 1', function() return torch.randn(1, 6):expand(-2, 6) end)
    raises('expand: .*too large', function() return torch.zeros(1):expand(1 << 62, 1 << 62) end)
    assert.are.same({3, 6}, torch.randn(1, 6):expand(3, -1):size():totable())
  end)

  it('cat and creation functions: sizes that add or multiply past the limit are refused', function()
    local big = torch.zeros(1):expand(1 << 59)
    local many = {}
    for i = 1, 20 do many[i] = big end
    raises('cat: size arithmetic overflows', function() return torch.cat(many) end)
    raises('empty: size 0x4611686018427387904x8 is too large', function() return torch.empty(0, 1 << 62, 8) end)
    raises('zeros: negative size %-1 in dim 2', function() return torch.zeros(2, -1) end)
  end)

  it('diagonal, unfold and unsqueeze keep working at extreme offsets and steps', function()
    local m = torch.arange(1, 10):view(3, 3)
    assert.are.equal(0, m:diagonal(MAX):numel())
    assert.are.equal(0, m:diagonal(MIN):numel())
    assert.are.same({7}, m:diagonal(-2):totable())
    assert.are.same({{1, 2}}, torch.arange(1, 11):unfold(1, 2, MAX):totable())
    local empty = torch.empty(0, 1 << 59):t()
    assert.are.same({1, 1 << 59, 0}, empty:unsqueeze(1):size():totable())
  end)
end)

describe('output sizes of convolution, pooling and padding cannot wrap', function()
  local x = torch.randn(1, 1, 4, 4)
  local w = torch.randn(1, 1, 3, 3)
  it('convolution with huge padding, dilation or stride is an error', function()
    raises('conv2d: too large: a 3x3 kernel %(dilation 1x1, padding ' .. MAX, function() return F.conv2d(x, w, nil, {padding = MAX}) end)
    raises('conv2d: too large: a 3x3 kernel %(dilation ' .. MAX, function() return F.conv2d(x, w, nil, {dilation = MAX}) end)
    raises('conv_transpose2d: too large: stride ' .. MAX,
           function() return F.conv_transpose2d(x, w, nil, {stride = MAX}) end)
  end)
  it('pooling, padding and interpolation with huge sizes are errors', function()
    raises('max_pool2d: padding ' .. MAX .. ' must be between 0 and half the kernel size 2',
           function() return F.max_pool2d(x, 2, {padding = MAX}) end)
    raises('max_pool2d: kernel 2x2 %(dilation ' .. MAX, function() return F.max_pool2d(x, 2, {dilation = MAX}) end)
    raises('avg_pool2d: the output height would be 0', function() return F.avg_pool2d(x, MAX) end)
    raises('avg_pool2d: padding', function() return F.avg_pool2d(x, 2, {padding = MAX}) end)
    raises('pad: padding %(' .. MAX .. ', ' .. MAX .. '%) of the input width 4 overflows',
           function() return F.pad(x, {MAX, MAX, 1, 1}, {mode = 'replicate'}) end)
    raises('too large', function() return F.interpolate(x, {size = {MAX, MAX}}) end)
  end)
end)

describe('integer arithmetic wraps as in PyTorch', function()
  -- two's complement wrapping, PyTorch's int64/int32 behaviour (no error, and
  -- no undefined behaviour in C: the sanitizer build checks the latter)
  it('int64 add, sub, mul, neg, abs and square wrap', function()
    local a = torch.tensor({MAX, MIN, 5}, {dtype = 'int64'})
    assert.are.same({MIN, MIN + 1, 6}, (a + 1):totable())
    assert.are.same({MAX - 1, MAX, 4}, (a - 1):totable())
    assert.are.same({-2, 0, 10}, (a * 2):totable())
    assert.are.same({MIN + 1, MIN, -5}, (-a):totable())
    assert.are.same({MAX, MIN, 5}, a:abs():totable())
    assert.are.same({1, 0, 25}, a:square():totable())
    assert.are.same({MIN, MIN + 1, 6}, a:add(torch.ones(3, {dtype = 'int64'})):totable())
  end)
  it('int32 add, mul and neg wrap', function()
    local b = torch.tensor({2147483647, -2147483648}, {dtype = 'int32'})
    assert.are.same({-2147483648, -2147483647}, (b + 1):totable())
    assert.are.same({-2, 0}, (b * 2):totable())
    assert.are.same({-2147483647, -2147483648}, (-b):totable())
    assert.are.same({2147483645, -2147483648}, torch.addcmul(b, b, torch.tensor({2, 2}, {dtype = 'int32'})):totable())
  end)
  it('float negation keeps the sign of zero', function()
    local r = -torch.tensor({0.0, -0.0})
    assert.are.equal(-math.huge, 1 / r[1])
    assert.are.equal(math.huge, 1 / r[2])
  end)
end)
