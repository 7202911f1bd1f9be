-- torch7_ops_spec.lua: Torch7's maths that moontorch adds beside PyTorch's
-- ops: the bitwise ops under both libraries' names (the registry's values
-- are checked against PyTorch in pointwise_spec.lua), Torch7's shifts of
-- floats, conv2 / xcorr2 / conv3 / xcorr3 in 'V' and 'F' modes, histc and
-- bhistc, cross, renorm and dist, with their gradients. Values are hand
-- computed from the definitions, and the relations Torch7's own tests check.
local torch = require 'torch'
local raises = dofile('spec/support/raises.lua')

local function D(t) return torch.tensor(t, {dtype = 'float64'}) end

local function same(want, got, tol)
  assert.are.same(want:size():totable(), got:size():totable())
  local err = (want:double() - got:double()):abs():max():item()
  assert(err <= (tol or 1e-12), 'values differ by ' .. err)
end

-- fn(...) raises, naming this file's line (the caller's), with text. (histc,
-- cross and renorm go through the result-first wrappers of torch7.lua,
-- whose errors do not carry the caller's line: their refusals are checked
-- with raises, by their text.)
local function raises_here(text, fn, ...)
  local args = table.pack(...)
  local ok, err = pcall(function()
    local r = fn(table.unpack(args, 1, args.n))
    return r
  end)
  assert(not ok, 'expected an error containing: ' .. text)
  assert.truthy(tostring(err):find('torch7_ops_spec%.lua:%d+: '), err)
  assert.truthy(tostring(err):find(text, 1, true), err)
end

local function grads_ok(fn, inputs)
  for _, t in ipairs(inputs) do t:requires_grad_() end
  assert.is_true(torch.gradcheck(fn, inputs))
end

describe('bitwise ops', function()
  it('compute and, or, xor, not and the shifts under PyTorch and Torch7 names', function()
    local a, b = torch.tensor{12, 10, -1}, torch.tensor{10, 6, 5}
    assert.are.same({8, 2, 5}, torch.bitwise_and(a, b):totable())
    assert.are.same({8, 2, 5}, a:cbitand(b):totable())
    assert.are.same({14, 14, -1}, torch.cbitor(a, b):totable())
    assert.are.same({6, 12, -6}, a:bitwise_xor(b):totable())
    assert.are.same({4, 2, 7}, a:bitand(7):totable())
    assert.are.same({13, 11, -1}, torch.bitor(a, 1):totable())
    assert.are.same({-13, -11, 0}, a:bitwise_not():totable())
    assert.are.same({false, true}, torch.tensor{true, false}:bitwise_not():totable())
    assert.are.same({true, false}, torch.tensor{true, true}:bitwise_xor(torch.tensor{false, true}):totable())
    assert.are.same({48, 40, -4}, a:bitwise_left_shift(2):totable())
    assert.are.same({3, 2, -1}, torch.bitwise_right_shift(a, 2):totable())
    assert.are.same({24, 40, -32}, torch.clshift(a, torch.tensor{1, 2, 5}):totable())
    assert.are.same({6, 2, -1}, a:crshift(torch.tensor{1, 2, 5}):totable())
    -- broadcasting, and a count outside the width
    assert.are.same({{1, 2}, {2, 4}}, torch.tensor{{1}, {2}}:lshift(torch.tensor{0, 1}):totable())
    assert.are.same({0, -1}, torch.tensor{5, -5}:rshift(64):totable())
    assert.are.same({0}, torch.tensor({1}, {dtype = 'int8'}):lshift(8):totable())
    assert.are.equal('uint8', torch.tensor({3}, {dtype = 'uint8'}):bitand(1).dtype)
  end)

  it('run in place', function()
    local x = torch.tensor{5, 6, 7}
    assert.are.equal(x, x:bitand_(3))
    assert.are.same({1, 2, 3}, x:totable())
    x:lshift_(2)
    assert.are.same({4, 8, 12}, x:totable())
    x:bitwise_xor_(torch.tensor{4, 0, 4})
    assert.are.same({0, 8, 8}, x:totable())
    x:crshift_(torch.tensor{0, 1, 3})
    assert.are.same({0, 4, 1}, x:totable())
    x:bitwise_not_()
    assert.are.same({-1, -5, -2}, x:totable())
  end)

  it("hold Torch7's test relations", function()
    local m = torch.LongTensor(10, 10):random(0, 10000)
    local col = m:clone()
    col:select(2, 3):bitand_(31)
    same(m:select(2, 3):remainder(32), col:select(2, 3))
    same(m:narrow(2, 1, 2), col:narrow(2, 1, 2))
    same(m:div(32, 'floor') * 32 + 31, m:bitor(31))
    same(m * 4, m:lshift(2))
    same(m:div(4, 'floor'), m:rshift(2))
    local t1, t2 = torch.LongTensor(10, 10):random(0, 10000), torch.LongTensor(10, 10):random(10001, 20000)
    local t3 = torch.cbitxor(t1, t2)
    same(t1, torch.cbitxor(t3, t2))
    same(t2, torch.cbitxor(t3, t1))
  end)

  it("shift floats as Torch7: by powers of 2", function()
    same(D{6, 8}, torch.lshift(D{1.5, 2}, 2))
    same(D{0.75, 1}, D{1.5, 2}:rshift(1))
    same(D{3, 1}, D{1.5, 2}:clshift(torch.tensor{1, -1}))
    local x = D{1, 3}
    x:rshift_(2)
    same(D{0.25, 0.75}, x)
    grads_ok(function(v) return v:lshift(3) end, {D{0.5, -1.25}})
  end)

  it('refuse float tensors and bool shifts, naming the op and dtype', function()
    raises_here('bitwise_and: not supported for float32 tensors', torch.bitand, torch.ones(2), 1)
    raises_here('bitwise_or: not supported for float64 tensors', torch.cbitor, D{1}, torch.tensor{1})
    raises_here('bitwise_xor: not supported for float32 tensors', torch.bitwise_xor, torch.tensor{1}, 1.5)
    raises_here('bitwise_not: not supported for float32 tensors', torch.bitwise_not, torch.ones(2))
    raises_here('bitwise_left_shift: not supported for bool tensors', torch.bitwise_left_shift,
                torch.tensor{true}, torch.tensor{false})
    raises_here('lshift: the shift must be a tensor or a number, got string', torch.lshift, torch.ones(1), 'x')
  end)
end)

describe('conv2 and xcorr2', function()
  local x = D{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}
  local k = D{{1, 2}, {3, 4}}

  it("correlate and convolve a 3x3 image with a 2x2 kernel, 'V' and 'F'", function()
    -- xcorr: sum x[i+a][j+b] k[a][b]; conv: the kernel flipped
    same(D{{37, 47}, {67, 77}}, torch.xcorr2(x, k))
    same(D{{37, 47}, {67, 77}}, x:xcorr2(k, 'V'))
    same(D{{23, 33}, {53, 63}}, torch.conv2(x, k))
    same(D{{4, 11, 18, 9}, {18, 37, 47, 21}, {36, 67, 77, 33}, {14, 23, 26, 9}}, torch.xcorr2(x, k, 'F'))
    same(D{{1, 4, 7, 6}, {7, 23, 33, 24}, {19, 53, 63, 42}, {21, 52, 59, 36}}, x:conv2(k, 'F'))
  end)

  it("keeps one plane per kernel for 3-D inputs and kernels, and sums over planes with 4-D kernels", function()
    local xx, kk = torch.stack({x, x * 2}), torch.stack({k, -k})
    same(torch.stack({torch.conv2(x, k), -2 * torch.conv2(x, k)}), torch.conv2(xx, kk))
    same(torch.stack({torch.xcorr2(x, k, 'F'), -2 * torch.xcorr2(x, k, 'F')}), torch.xcorr2(xx, kk, 'F'))
    local k4 = torch.stack({kk, kk * 3})                          -- 2 outputs x 2 planes
    local one = torch.conv2(x, k) - 2 * torch.conv2(x, k)
    same(torch.stack({one, one * 3}), torch.conv2(xx, k4))
  end)

  it("holds Torch7's relations on random images", function()
    local img, ker = torch.rand(23, 19, {dtype = 'float64'}), torch.rand(6, 4, {dtype = 'float64'})
    same(torch.conv2(img, ker), torch.xcorr2(img, ker:flip({1, 2})), 1e-12)
    same(torch.conv2(img, ker, 'F'), torch.xcorr2(img, ker:flip({1, 2}), 'F'), 1e-12)
    assert.is_true(math.abs((img * img):sum():item() - torch.xcorr2(img, img)[1][1]) < 1e-10)
    assert.are.same({18, 16}, torch.conv2(img, ker):size():totable())
    assert.are.same({28, 22}, torch.conv2(img, ker, 'F'):size():totable())
    local f = torch.xcorr2(img:float(), ker:float())
    assert.are.equal('float32', f.dtype)
    same(torch.xcorr2(img, ker), f, 1e-4)
  end)

  it('is differentiable in the image and the kernel', function()
    grads_ok(function(a, b) return torch.conv2(a, b, 'F') end, {torch.rand(4, 3, {dtype = 'float64'}),
                                                                  torch.rand(2, 2, {dtype = 'float64'})})
    grads_ok(function(a, b) return torch.xcorr2(a, b) end, {torch.rand(2, 4, 3, {dtype = 'float64'}),
                                                            torch.rand(3, 2, 2, 2, {dtype = 'float64'})})
  end)

  it('refuses wrong dims, modes, dtypes and sizes, naming the op', function()
    raises_here("conv2: mode must be 'V' (valid) or 'F' (full), got X", torch.conv2, x, k, 'X')
    raises_here("xcorr2: the kernel 3x3 is larger than the input 2x2 in 'V' mode", torch.xcorr2, k, x)
    raises_here('conv2: expects a 2-D input and kernel', torch.conv2, x, k:view(1, 2, 2))
    raises_here('got input 2x3x3 and kernel 3x2x2', torch.conv2, torch.stack({x, x}), torch.stack({k, k, k}))
    raises_here('conv2: expects input and kernel of one float dtype, got float64 and float32', torch.conv2, x,
                k:float())
    raises_here('conv2: the kernel must be a tensor, got number', torch.conv2, x, 3)
  end)
end)

describe('conv3 and xcorr3', function()
  it('correlates a small volume by hand', function()
    local x = torch.arange(1, 9, {dtype = 'float64'}):view(2, 2, 2)
    local k = D{{{1, 0}, {0, 0}}, {{0, 0}, {0, 2}}}
    same(D{{{1 + 2 * 8}}}, torch.xcorr3(x, k))
    same(D{{{8 + 2 * 1}}}, torch.conv3(x, k))
    local full = torch.xcorr3(x, k, 'F')
    assert.are.same({3, 3, 3}, full:size():totable())
    assert.are.equal(2, full[1][1][1])                            -- x[1][1][1] under k[2][2][2]
    assert.are.equal(8, full[3][3][3])                            -- x[2][2][2] under k[1][1][1]
  end)

  it("equals sums of 2-D correlations over the depth (Torch7's tests)", function()
    local x, k = torch.rand(7, 9, 8, {dtype = 'float64'}), torch.rand(3, 4, 2, {dtype = 'float64'})
    local v = torch.xcorr3(x, k)
    local want = torch.zeros(v:size(), {dtype = 'float64'})
    for i = 1, v:size(1) do
      for j = 1, k:size(1) do want[i]:add_(torch.xcorr2(x[i + j - 1], k[j])) end
    end
    same(want, v, 1e-12)
    local c = torch.conv3(x, k)
    want:zero()
    for i = 1, c:size(1) do
      for j = 1, k:size(1) do want[i]:add_(torch.conv2(x[i + j - 1], k[k:size(1) - j + 1])) end
    end
    same(want, c, 1e-12)
    local f = torch.conv3(x, k, 'F')
    local wantf = torch.zeros(f:size(), {dtype = 'float64'})
    for i = 1, x:size(1) do
      for j = 1, k:size(1) do wantf[i + j - 1]:add_(torch.conv2(x[i], k[j], 'F')) end
    end
    same(wantf, f, 1e-12)
    local xf = torch.xcorr3(x, k, 'F')
    wantf:zero()
    for i = 1, x:size(1) do
      for j = 1, k:size(1) do wantf[i + j - 1]:add_(torch.xcorr2(x[i], k[k:size(1) - j + 1], 'F')) end
    end
    same(wantf, xf, 1e-12)
    same(torch.conv3(x, k), torch.xcorr3(x, k:flip({1, 2, 3})), 1e-12)
  end)

  it('takes 4-D inputs with 4-D kernels (one output each) and 5-D kernels (summed)', function()
    local x, k = torch.rand(5, 6, 4, {dtype = 'float64'}), torch.rand(2, 3, 2, {dtype = 'float64'})
    local xx, kk = torch.stack({x, x}), torch.stack({k, k * 2})
    local one = torch.conv3(x, k, 'F')
    same(torch.stack({one, one * 2}), torch.conv3(xx, kk, 'F'), 1e-12)
    same(torch.stack({one * 3}), torch.conv3(xx, kk:view(1, 2, 2, 3, 2), 'F'), 1e-12)
    grads_ok(function(a, b) return torch.conv3(a, b) end, {torch.rand(2, 3, 3, 2, {dtype = 'float64'}),
                                                           torch.rand(2, 2, 2, 2, 2, {dtype = 'float64'})})
  end)

  it('refuses wrong dims, naming the op', function()
    raises_here('conv3: expects a 3-D input and kernel', torch.conv3, torch.rand(3, 3), torch.rand(2, 2))
    raises_here("xcorr3: mode must be 'V' (valid) or 'F' (full), got v", torch.xcorr3, torch.rand(3, 3, 3),
                torch.rand(2, 2, 2), 'v')
  end)
end)

describe('histc and bhistc', function()
  it("count values into bins of [min, max], max in the last (Torch7's test)", function()
    same(torch.Tensor{0, 3, 0, 2, 1}, torch.histc(torch.Tensor{2, 4, 2, 2, 5, 4}, 5, 1, 5))
    -- outside the range: not counted; NaN neither
    same(torch.Tensor{1, 1}, torch.histc(torch.Tensor{-1, 0, 0.5, 1, 2, 0 / 0}, 2, 0, 0.9))
    -- the data's range by default, 100 bins
    local h = torch.tensor({1, 2, 3, 4}, {dtype = 'float64'}):histc()
    assert.are.same({100}, h:size():totable())
    assert.are.equal('float64', h.dtype)
    assert.are.same({1, 1, 1, 1}, {h[1], h[34], h[67], h[100]})
    assert.are.equal(4, h:sum():item())
    -- one value: the range widened by 1 either way
    same(torch.Tensor{0, 3, 0}, torch.Tensor{7, 7, 7}:histc(3))
    same(torch.LongTensor{2, 1}, torch.histc(torch.LongTensor{1, 1, 3}, 2))
  end)

  it("count each row (Torch7's bhistc test), with one range for all rows by default", function()
    local x = torch.Tensor{{2, 4, 2, 2, 5, 4}, {3, 5, 1, 5, 3, 5}, {3, 4, 2, 5, 5, 1}}
    same(torch.Tensor{{0, 3, 0, 2, 1}, {1, 0, 2, 0, 3}, {1, 1, 1, 1, 2}}, torch.bhistc(x, 5, 1, 5))
    same(torch.Tensor{{1, 0, 2, 0, 3}}, x:narrow(1, 2, 1):bhistc(5))            -- range [1, 5]
    -- [2, 5] in 5 bins of 0.6: 2 in the first, 4 in the fourth, 5 in the last
    same(torch.Tensor{{3, 0, 0, 2, 1}}, x:narrow(1, 1, 1):bhistc(5))
    same(torch.Tensor{{1, 3}, {4, 0}}, torch.bhistc(torch.Tensor{{1, 9, 9, 9}, {1, 1, 1, 0}}, 2, 0, 9))
  end)

  it('refuses bad bins and ranges, naming the op', function()
    raises('histc: bins must be a positive integer, got 0', torch.histc, torch.ones(3), 0)
    raises('histc: max must not be below min, got min 2 and max 1', torch.histc, torch.ones(3), 4, 2, 1)
    raises_here('bhistc: range of [-inf, 1] is not finite', torch.bhistc, torch.Tensor{{-math.huge, 1}}, 4)
    raises('histc: the input must be a tensor, got number', torch.histc, 3)
  end)
end)

describe('cross', function()
  it('takes the first dim of size 3 by default, or the dim given', function()
    same(D{0, 0, 1}, torch.cross(D{1, 0, 0}, D{0, 1, 0}))
    same(D{-3, 6, -3}, D{1, 2, 3}:cross(D{4, 5, 6}))
    local a, b = torch.rand(4, 3, 5, {dtype = 'float64'}), torch.rand(4, 3, 5, {dtype = 'float64'})
    local c = torch.cross(a, b)
    same(c, torch.cross(a, b, 2))
    same(c:select(3, 2):select(1, 4), torch.cross(a:select(3, 2):select(1, 4), b:select(3, 2):select(1, 4)))
    same(c, torch.cross(a:transpose(2, 3), b:transpose(2, 3), 3):transpose(2, 3))
    assert.is_true(torch.cross(a, b):mul(a):sum(2):abs():max():item() < 1e-12)   -- orthogonal to a
  end)

  it('has PyTorch linalg.cross along the last dim, broadcasting', function()
    local a, b = torch.rand(3, 3, {dtype = 'float64'}), torch.rand(3, {dtype = 'float64'})
    local c = torch.linalg.cross(a, b)
    for i = 1, 3 do same(torch.cross(a[i], b), c[i]) end
    same(torch.cross(a, b:expand(3, 3), 1), torch.linalg.cross(a, b:expand(3, 3), {dim = 1}))
  end)

  it('is differentiable', function()
    grads_ok(function(a, b) return torch.cross(a, b) end, {torch.rand(3, 2, {dtype = 'float64'}),
                                                           torch.rand(3, 2, {dtype = 'float64'})})
  end)

  it('refuses shapes without a dim of size 3, naming the op', function()
    raises('cross: no dimension of size 3 in 2x4', torch.cross, torch.rand(2, 4), torch.rand(2, 4))
    raises('cross: dim 2 of 3x2 has size 2, not 3', torch.cross, torch.rand(3, 2), torch.rand(3, 2), 2)
    raises_here('linalg.cross: shapes 2x3 and 4x3 do not broadcast', torch.linalg.cross, torch.rand(2, 3),
                torch.rand(4, 3))
  end)
end)

describe('renorm and dist', function()
  it('scales the sub-tensors along dim whose norm is above maxnorm', function()
    local x = D{{3, 4}, {0.3, 0.4}}
    same(D{{0.6, 0.8}, {0.3, 0.4}}, torch.renorm(x, 2, 1, 1), 1e-6)
    same(D{{3, 4}, {0.3, 0.4}} * D{{1, 4 / (4 + 0.4 + 1e-7)}}, x:renorm(1, 2, 4), 1e-12)
    local y = x:clone()
    assert.are.equal(y, y:renorm_(2, 1, 1))
    same(D{{0.6, 0.8}, {0.3, 0.4}}, y, 1e-6)
  end)

  it("matches Torch7's test: norms over the other dims capped", function()
    local m = torch.randn(10, 5, {dtype = 'float64'})
    local maxnorm = m:norm(2, 1):mean():item()
    local r = m:renorm(2, 2, maxnorm)
    local norms = r:norm(2, 1)
    for j = 1, 5 do
      local before = m:select(2, j):norm():item()
      local want = before > maxnorm and maxnorm * before / (before + 1e-7) or before
      assert.is_true(math.abs(norms[j] - want) < 1e-9)
    end
    local m3 = torch.randn(3, 4, 5, {dtype = 'float64'})
    local r3 = m3:renorm(3, 2, 1)
    for j = 1, 4 do assert.is_true(r3:select(2, j):norm(3):item() <= 1 + 1e-9) end
  end)

  it('is differentiable', function()
    grads_ok(function(v) return v:renorm(2, 1, 1) end, {D{{3, 4}, {0.3, 0.4}}})
    grads_ok(function(a, b) return torch.dist(a, b, 3) end, {D{1, 2, 3}, D{0.5, -1, 2}})
  end)

  it('gives the p-norm of a - b as a 0-dim tensor', function()
    local d = torch.dist(D{1, 2}, D{4, 6})
    assert.are.equal(0, d:dim())
    assert.are.equal(5, d:item())
    assert.are.equal(7, D{1, 2}:dist(D{4, 6}, 1):item())
    assert.are.equal(4, torch.dist(D{1, 2}, D{4, 6}, 'inf'):item())
  end)

  it('refuses bad arguments, naming the op', function()
    raises('renorm: expects at least 2 dims, got 3', torch.renorm, D{1, 2, 3}, 2, 1, 1)
    raises('renorm: dim 3 out of range for 2x2', torch.renorm, D{{1, 2}, {3, 4}}, 2, 3, 1)
    raises('renorm: p must be a positive number, got 0', torch.renorm, D{{1, 2}, {3, 4}}, 0, 1, 1)
    raises('renorm: expects a float tensor, got int64', torch.renorm, torch.tensor{{1, 2}}, 2, 1, 1)
    raises_here('dist: b must be a tensor or a number, got string', torch.dist, D{1}, 'x')
  end)
end)
