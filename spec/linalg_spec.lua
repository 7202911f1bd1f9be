-- linalg_spec.lua: matrix products (mm, mv, dot, bmm, matmul, outer and the
-- add* forms). Expected values were computed with PyTorch 2.15.
local torch = require 'torch'

local function flatten(t, out)
  out = out or {}
  if type(t) ~= 'table' then out[#out + 1] = t return out end
  for _, v in ipairs(t) do flatten(v, out) end
  return out
end

-- x's values (in logical order) against a nested table, within tol
local function assert_close(expected, x, tol)
  local want, got = flatten(expected), x:_flat_values()
  assert.are.equal(#want, #got)
  for i = 1, #want do
    local diff = math.abs(want[i] - got[i])
    if not (diff <= (tol or 0) * math.max(1, math.abs(want[i]))) then
      error(string.format('element %d: expected %.17g, got %.17g', i, want[i], got[i]), 2)
    end
  end
end

local function assert_equal_tensors(a, b)
  assert.are.same(a:size():totable(), b:size():totable())
  assert.are.same(a:_flat_values(), b:_flat_values())
end

local function f64(t) return torch.tensor(t, {dtype = 'float64'}) end

-- n values f(0..n-1) as a 1-D tensor of dtype
local function seq(n, f, dtype)
  local t = {}
  for i = 0, n - 1 do t[i + 1] = f(i) end
  return torch.tensor(t, {dtype = dtype or 'float64'})
end

-- small integers from a fixed linear congruential sequence
local function ints(n, seed, dtype)
  local s = seed
  return seq(n, function()
    s = (s * 1103515245 + 12345) % 2147483648
    return s % 9 - 4
  end, dtype)
end

local A = {{-1.057, -2.0949, 0.9056, -2.5654}, {0.2153, -0.8059, -2.652, 0.0446},
           {-2.775, -0.3981, -2.5809, -2.4557}}
local B = {{-0.4529, 1.9611}, {-2.2572, -1.6606}, {0.7646, 2.6863}, {0.4626, -0.6199}}
local v = {2.8575, -2.7205, 2.1508, -1.2623}
local w = {-2.1345, -2.2932, -1.1491}
local M = {{1.8968, -1.9156}, {0.4896, 0.8335}, {-0.7656, 0.2865}}
local AB = {{4.7129913000000005, 5.42891298}, {-0.28551912999999995, -5.391212770000001},
            {-0.9539741399999999, -10.19175088}}

describe('mm', function()
  it('multiplies float64 matrices', function()
    local r = f64(A):mm(f64(B))
    assert.are.same({3, 2}, r:size():totable())
    assert.are.equal('float64', r.dtype)
    assert.is_true(r:isContiguous())
    assert_close(AB, r, 1e-14)
    assert_close(AB, torch.mm(f64(A), f64(B)), 1e-14)
  end)

  it('takes transposed inputs without changing the answer', function()
    local At, Bt = f64(A):t():contiguous(), f64(B):t():contiguous()
    assert_close(AB, At:t():mm(f64(B)), 1e-14)
    assert_close(AB, f64(A):mm(Bt:t()), 1e-14)
    assert_close(AB, At:t():mm(Bt:t()), 1e-14)
    -- (AB)^T = B^T A^T, written into a fresh row-major result
    local r = Bt:mm(At)
    assert.is_true(r:isContiguous())
    assert_close(AB, r:t(), 1e-14)
  end)

  it('takes sliced and oddly strided inputs', function()
    -- A inside a larger matrix: a leading dim larger than the row
    local big = torch.zeros(5, 7, {dtype = 'float64'})
    big:narrow(1, 2, 3):narrow(2, 3, 4):copy_(f64(A))
    assert_close(AB, big:narrow(1, 2, 3):narrow(2, 3, 4):mm(f64(B)), 1e-14)
    -- B with every other column: no unit stride, so a copy is made
    local wide = torch.zeros(4, 4, {dtype = 'float64'})
    local odd = wide:as_strided({4, 2}, {4, 2})
    odd:copy_(f64(B))
    assert_close(AB, f64(A):mm(odd), 1e-14)
    -- a broadcast row (stride 0)
    local rows = f64({v}):expand(3, 4)
    assert_close({{5.907112549999999, 16.68169936}, {5.907112549999999, 16.68169936},
                  {5.907112549999999, 16.68169936}},
                 rows:mm(f64(B)), 1e-12)
  end)

  it('computes float32 through BLAS', function()
    local r = torch.tensor(A):mm(torch.tensor(B))
    assert.are.equal('float32', r.dtype)
    assert_close({{4.712991714477539, 5.42891263961792}, {-0.2855190336704254, -5.3912129402160645},
                  {-0.9539740085601807, -10.191751480102539}}, r, 1e-6)
    assert_close(AB, torch.tensor(A):t():contiguous():t():mm(torch.tensor(B)), 1e-6)
  end)

  it('computes float16 and bfloat16 through float32', function()
    local h = f64(A):half():mm(f64(B):half())
    assert.are.equal('float16', h.dtype)
    assert_close({{4.71484375, 5.4296875}, {-0.285888671875, -5.390625}, {-0.95263671875, -10.1875}},
                 h, 1e-3)
    local bf = f64(A):bfloat16():t():contiguous():t():mm(f64(B):bfloat16())
    assert.are.equal('bfloat16', bf.dtype)
    assert_close({{4.6875, 5.4375}, {-0.30078125, -5.40625}, {-0.953125, -10.1875}}, bf, 1e-2)
  end)

  it('multiplies integer matrices exactly, wrapping like PyTorch', function()
    local a, b = torch.tensor({{1, -2, 3}, {4, 5, -6}}), torch.tensor({{7, 8}, {-9, 10}, {11, -12}})
    local r = a:mm(b)
    assert.are.equal('int64', r.dtype)
    assert_close({{58, -48}, {-83, 154}}, r)
    assert_close({{58, -48}, {-83, 154}}, a:t():contiguous():t():mm(b:t():contiguous():t()))
    assert_close({{58, -48}, {-83, 154}}, a:int():mm(b:int()))
    local i8 = torch.tensor({{100, -100, 50}, {127, 127, 127}}, {dtype = 'int8'})
    local j8 = torch.tensor({{3, 2}, {-1, 5}, {4, 4}}, {dtype = 'int8'})
    assert_close({{88, -100}, {-6, 117}}, i8:mm(j8))
    local u8 = torch.tensor({{200, 100}}, {dtype = 'uint8'})
    assert_close({{188}}, u8:mm(torch.tensor({{2}, {3}}, {dtype = 'uint8'})))
  end)

  it('agrees between BLAS and the integer loop on larger strided inputs', function()
    local a = ints(37 * 29, 1):view(37, 29)
    local b = ints(41 * 29, 2):view(41, 29):t()
    local exact = a:long():mm(b:long())
    assert_equal_tensors(exact, a:mm(b):long())
    assert_equal_tensors(exact, a:float():mm(b:float()):long())
    assert_equal_tensors(exact, a:t():contiguous():t():mm(b:contiguous()):long())
  end)

  it('handles empty matrices', function()
    local r = torch.zeros(2, 0):mm(torch.zeros(0, 3))
    assert.are.same({2, 3}, r:size():totable())
    assert_close({{0, 0, 0}, {0, 0, 0}}, r)
    assert.are.same({0, 4}, torch.zeros(0, 3):mm(torch.zeros(3, 4)):size():totable())
    assert.are.same({3, 0}, torch.zeros(3, 2):mm(torch.zeros(2, 0)):size():totable())
    assert_close({{0, 0}}, torch.zeros(1, 0, {dtype = 'int64'}):mm(torch.zeros(0, 2, {dtype = 'int64'})))
  end)

  it('raises on bad shapes, dims and dtypes', function()
    assert.has_error(function() torch.zeros(2, 3):mm(torch.zeros(4, 5)) end,
                     'mm: cannot multiply 2x3 by 4x5')
    assert.has_error(function() torch.zeros(2, 3):mm(torch.zeros(3, 2, {dtype = 'float64'})) end,
                     'mm: expected both float32, got float32 and float64')
    assert.has_error(function() torch.zeros(2, 2, 2):mm(torch.zeros(2, 2)) end,
                     'mm: expected 2-D tensors, got 3-D and 2-D')
    assert.has_error(function() torch.zeros(2, 2, {dtype = 'bool'}):mm(torch.zeros(2, 2, {dtype = 'bool'})) end,
                     'mm: not implemented for bool tensors')
    assert.has_error(function() torch.zeros(2, 2):mm(nil) end,
                     'mm: argument 2 must be a tensor, got nil')
    assert.has_error(function() torch.mm(3, torch.zeros(2, 2)) end,
                     'mm: argument 1 must be a tensor, got number')
  end)
end)

describe('mv, dot, outer', function()
  it('multiplies a matrix by a vector', function()
    local want = {7.8648668499999985, -2.9525494800000005, -9.29770106}
    assert_close(want, f64(A):mv(f64(v)), 1e-14)
    assert_close(want, torch.mv(f64(A):t():contiguous():t(), f64(v)), 1e-14)
    -- a vector with stride 2
    local spread = torch.zeros(8, {dtype = 'float64'})
    spread:as_strided({4}, {2}):copy_(f64(v))
    assert_close(want, f64(A):mv(spread:as_strided({4}, {2})), 1e-14)
    assert_close(want, torch.tensor(A):mv(torch.tensor(v)), 1e-6)
    assert_close({7, -9}, torch.tensor({{1, 2}, {3, -4}}):mv(torch.tensor({1, 3})))
    assert_close({0, 0}, torch.zeros(2, 0):mv(torch.zeros(0)))
    assert.has_error(function() torch.zeros(2, 3):mv(torch.zeros(4)) end, 'mv: cannot multiply 2x3 by 4')
    assert.has_error(function() torch.zeros(2, 3):mv(torch.zeros(3, 1)) end,
                     'mv: expected a 2-D matrix and a 1-D vector, got 2-D and 2-D')
  end)

  it('takes dot products as 0-dim tensors', function()
    local d = f64(v):dot(f64(v))
    assert.are.equal(0, d:dim())
    assert.is_true(math.abs(d:item() - 21.785768429999997) < 1e-12)
    assert.are.equal(-1, torch.dot(torch.tensor({1, 2}), torch.tensor({3, -2})):item())
    assert.are.equal(0, torch.zeros(0):dot(torch.zeros(0)):item())
    local x = f64({{1, 2}, {3, 4}})
    assert.are.equal(14, x:select(2, 1):dot(x:select(2, 2)):item())   -- strided vectors
    assert.has_error(function() torch.zeros(3):dot(torch.zeros(4)) end,
                     'dot: tensors have different sizes 3 and 4')
    assert.has_error(function() torch.zeros(3):dot(torch.zeros(3, 1)) end,
                     'dot: expected 1-D tensors, got 1-D and 2-D')
  end)

  it('takes outer products (ger)', function()
    local want = {{-6.09933375, 5.80690725, -4.5908826, 2.69437935},
                  {-6.552819, 6.238650600000001, -4.93221456, 2.8947063600000003},
                  {-3.2835532499999998, 3.12612655, -2.47148428, 1.45050893}}
    assert_close(want, f64(w):outer(f64(v)), 1e-14)
    assert_close(want, torch.ger(f64(w), f64(v)), 1e-14)
    assert_close({{3, 4}, {6, 8}}, torch.outer(torch.tensor({1, 2}), torch.tensor({3, 4})))
    assert.are.same({0, 3}, torch.outer(torch.zeros(0), torch.zeros(3)):size():totable())
  end)
end)

describe('addmm, addmv, addr', function()
  it('computes beta * input + alpha * a @ b', function()
    assert_close({{6.6097913, 3.51331298}, {0.20408087000000003, -4.557712770000001},
                  {-1.7195741399999998, -9.90525088}}, f64(M):addmm(f64(A), f64(B)), 1e-14)
    local want = {{-8.477582600000002, -11.81562596}, {0.8158382599999999, 11.199175540000002},
                  {1.5251482799999998, 20.52675176}}
    assert_close(want, torch.addmm(f64(M), f64(A), f64(B), {beta = 0.5, alpha = -2}), 1e-14)
    -- Torch7's positional scalars
    assert_close(want, torch.addmm(0.5, f64(M), -2, f64(A), f64(B)), 1e-14)
    assert_close(want, f64(M):addmm(0.5, -2, f64(A), f64(B)), 1e-14)
    -- input broadcasts
    assert_close({{5.4629913000000005, 2.4289129799999998}, {0.46448087000000005, -8.391212770000001},
                  {-0.20397413999999991, -13.19175088}},
                 f64({0.25, -1.0}):addmm(f64(A), f64(B), {beta = 3}), 1e-14)
    assert_close({{-172, 148}, {255, -454}},
                 torch.addmm(torch.tensor({{1, 2}, {3, 4}}), torch.tensor({{1, -2, 3}, {4, 5, -6}}),
                             torch.tensor({{7, 8}, {-9, 10}, {11, -12}}), {beta = 2, alpha = -3}))
  end)

  it('ignores input when beta is 0, NaN included', function()
    local nan = torch.full({3, 2}, 0 / 0, {dtype = 'float64'})
    assert_close(AB, nan:addmm(f64(A), f64(B), {beta = 0}), 1e-14)
    assert_close({{-2, -3}, {-2, -3}}, torch.full({2, 2}, 0 / 0):addmm(torch.ones(2, 1),
      torch.tensor({{-2, -3}}, {dtype = 'float32'}), {beta = 0}), 0)
  end)

  it('gives beta * input when the inner dim is 0', function()
    assert_close({{2, 4}, {6, 8}}, torch.tensor({{1, 2}, {3, 4}}, {dtype = 'float64'}):addmm(
      torch.zeros(2, 0, {dtype = 'float64'}), torch.zeros(0, 2, {dtype = 'float64'}), {beta = 2}))
    assert_close({{0, 0}, {0, 0}}, torch.full({2, 2}, 0 / 0):addmm(torch.zeros(2, 0),
      torch.zeros(0, 2), {beta = 0}))
  end)

  it('works in place on strided and aliased targets', function()
    local want = {{-8.477582600000002, -11.81562596}, {0.8158382599999999, 11.199175540000002},
                  {1.5251482799999998, 20.52675176}}
    local m = f64(M)
    local same = m:addmm_(f64(A), f64(B), {beta = 0.5, alpha = -2})
    assert.is_true(same == m)
    assert_close(want, m, 1e-14)
    -- a column-major target
    local t = f64(M):t():contiguous():t()
    t:addmm_(f64(A), f64(B), {beta = 0.5, alpha = -2})
    assert_close(want, t, 1e-14)
    -- a target BLAS cannot write: every other column of a wider matrix
    local wide = torch.zeros(3, 4, {dtype = 'float64'}):fill_(7)
    local odd = wide:as_strided({3, 2}, {4, 2})
    odd:copy_(f64(M))
    odd:addmm_(f64(A), f64(B), {beta = 0.5, alpha = -2})
    assert_close(want, odd, 1e-14)
    assert.are.equal(7, wide[1][2])
    -- the target is also a factor
    local x = f64({{1, 2}, {3, 4}})
    x:addmm_(x, x)
    assert_close({{8, 12}, {18, 26}}, x)
    -- integers in place
    local i = torch.tensor({{1, 2}, {3, 4}})
    i:addmm_(torch.tensor({{1, -2, 3}, {4, 5, -6}}), torch.tensor({{7, 8}, {-9, 10}, {11, -12}}),
             {beta = 2, alpha = -3})
    assert_close({{-172, 148}, {255, -454}}, i)
    -- half in place
    local h = f64(M):half()
    h:addmm_(f64(A):half(), f64(B):half(), {beta = 0.5, alpha = -2})
    assert.are.equal('float16', h.dtype)
    assert_close(want, h, 1e-2)
  end)

  it('computes addmv and addr', function()
    local addmv = {-0.33656657500000087, -6.06267474, -6.94705053}
    assert_close(addmv, f64(w):addmv(f64(A), f64(v), {beta = 2, alpha = 0.5}), 1e-14)
    assert_close(addmv, torch.addmv(2, f64(w), 0.5, f64(A), f64(v)), 1e-14)
    local y = f64(w)
    y:addmv_(f64(A), f64(v), {beta = 2, alpha = 0.5})
    assert_close(addmv, y, 1e-14)
    local strided = torch.zeros(6, {dtype = 'float64'})
    local ys = strided:as_strided({3}, {2})
    ys:copy_(f64(w))
    ys:addmv_(f64(A), f64(v), {beta = 2, alpha = 0.5})
    assert_close(addmv, ys, 1e-14)
    assert.are.equal(0, strided[2])
    local Ao = {{-2.6233, -2.6424, -1.7642, 1.0824}, {-0.4344, -1.1151, 0.5134, -0.2809},
                {-1.2014, 1.7663, 1.194, -1.5354}}
    local addr = {{-15.674701249999998, 20.063121749999997, -12.008447799999999, 7.000738050000001},
                  {-19.224057, 19.831051799999997, -15.31004368, 8.965019080000001},
                  {-8.64925975, 7.612079650000001, -8.60845284, 5.88692679}}
    assert_close(addr, f64(Ao):addr(f64(w), f64(v), {beta = -1, alpha = 3}), 1e-14)
    local o = f64(Ao)
    o:addr_(f64(w), f64(v), {beta = -1, alpha = 3})
    assert_close(addr, o, 1e-14)
  end)

  it('raises on bad inputs', function()
    assert.has_error(function() torch.zeros(3, 3):addmm(torch.zeros(2, 3), torch.zeros(3, 5)) end,
                     "addmm: input of size 3x3 cannot broadcast to the product's size 2x5")
    assert.has_error(function() torch.zeros(2):addmm_(torch.zeros(2, 3), torch.zeros(3, 2)) end,
                     'addmm_: self has size 2 but the product has size 2x2')
    assert.has_error(function() torch.zeros(2, 2, {dtype = 'float64'}):addmm(torch.zeros(2, 2), torch.zeros(2, 2)) end,
                     'addmm: input is float64 but the product is float32')
    assert.has_error(function() torch.zeros(2, 2):addmm(torch.zeros(2, 3), torch.zeros(2, 2)) end,
                     'addmm: cannot multiply 2x3 by 2x2')
    assert.has_error(function()
      torch.zeros(2, 2, {dtype = 'int64'}):addmm(torch.zeros(2, 2, {dtype = 'int64'}),
        torch.zeros(2, 2, {dtype = 'int64'}), {alpha = 0.5})
    end, 'addmm: beta and alpha must be integers for int64 tensors, got 1 and 0.5')
    assert.has_error(function() torch.zeros(2):expand(2, 2):addmm_(torch.zeros(2, 2), torch.zeros(2, 2)) end,
                     'addmm_: unsupported operation: more than one element of the written-to tensor ' ..
                     '(2x2, expanded) refers to a single memory location; clone() it first')
    assert.has_error(function() torch.addmm(torch.zeros(2, 2), torch.zeros(2, 2)) end,
                     'addmm: expected 3 tensors (input and two factors), got 2')
    assert.has_error(function() torch.addmm(torch.zeros(2, 2), 'x', torch.zeros(2, 2), torch.zeros(2, 2)) end)
    assert.has_error(function() torch.addr(torch.zeros(2, 2), torch.zeros(2, 1), torch.zeros(2)) end,
                     'addr: expected 1-D vectors, got 2-D and 1-D')
  end)
end)

describe('bmm, baddbmm, addbmm', function()
  local x = seq(24, function(i) return i * 0.25 - 1 end):view(2, 3, 4)
  local bb = seq(24, function(i) return i % 7 - 3 end):view(2, 4, 3)

  it('multiplies batches', function()
    local want = {1.75, 2.75, 0.25, 0.75, -1.25, 0.25, -0.25, -5.25, 0.25, -6.25, 3.25, -1.25,
                  -8.25, 5.25, -2.25, -10.25, 7.25, -3.25}
    local r = x:bmm(bb)
    assert.are.same({2, 3, 3}, r:size():totable())
    assert_close(want, r, 1e-14)
    assert_close(want, torch.bmm(x:transpose(2, 3):contiguous():transpose(2, 3), bb), 1e-14)
    assert_close(want, torch.bmm(x:float(), bb:float()), 1e-6)
    assert_close(want, torch.bmm(x:half(), bb:half()), 1e-2)
    assert_close(want, torch.bmm(x:mul(4):long(), bb:long()):double():div(4))
    assert.are.same({0, 3, 3}, torch.zeros(0, 3, 4):bmm(torch.zeros(0, 4, 3)):size():totable())
    assert.has_error(function() torch.zeros(2, 3, 4):bmm(torch.zeros(3, 4, 5)) end,
                     'bmm: cannot multiply 2x3x4 by 3x4x5')
    assert.has_error(function() torch.zeros(3, 4):bmm(torch.zeros(3, 4, 5)) end,
                     'bmm: expected 3-D tensors, got 2-D and 3-D')
  end)

  it('adds a scaled input', function()
    local ones = torch.ones(2, 3, 3, {dtype = 'float64'})
    local want = {2.875, 3.375, 2.125, 2.375, 1.375, 2.125, 1.875, -0.625, 2.125, -1.125, 3.625,
                  1.375, -2.125, 4.625, 0.875, -3.125, 5.625, 0.375}
    assert_close(want, ones:baddbmm(x, bb, {beta = 2, alpha = 0.5}), 1e-14)
    assert_close(want, torch.baddbmm(torch.ones(3, {dtype = 'float64'}), x, bb, {beta = 2, alpha = 0.5}), 1e-14)
    ones:baddbmm_(x, bb, {beta = 2, alpha = 0.5})
    assert_close(want, ones, 1e-14)
    local sum = {-0.25, 5.0, 1.5, -1.75, 4.0, 1.0, -3.25, 3.0, 0.5}
    assert_close(sum, torch.ones(3, 3, {dtype = 'float64'}):addbmm(x, bb, {beta = 2, alpha = 0.5}), 1e-14)
    assert_close(sum, torch.addbmm(2, torch.ones(3, 3, {dtype = 'float64'}), 0.5, x, bb), 1e-14)
    local acc = torch.ones(3, 3, {dtype = 'float64'})
    acc:addbmm_(x, bb, {beta = 2, alpha = 0.5})
    assert_close(sum, acc, 1e-14)
    assert_close(sum, torch.ones(3, 3):half():addbmm(x:half(), bb:half(), {beta = 2, alpha = 0.5}), 1e-2)
    -- an empty batch leaves beta * input
    assert_close({{2, 2}, {2, 2}}, torch.ones(2, 2):addbmm(torch.zeros(0, 2, 3), torch.zeros(0, 3, 2), {beta = 2}))
  end)

  it('gives the same answer on any thread count for many small products', function()
    local a = ints(300 * 16 * 16, 3, 'float32'):view(300, 16, 16)
    local b = ints(300 * 16 * 16, 4, 'float32'):view(300, 16, 16):transpose(2, 3)
    local exact = a:long():bmm(b:long())
    local threads = torch.get_num_threads()
    local many = a:bmm(b)
    torch.set_num_threads(1)
    local one = a:bmm(b)
    torch.set_num_threads(threads)
    assert_equal_tensors(exact, many:long())
    assert_equal_tensors(one, many)
  end)
end)

describe('matmul', function()
  it('follows PyTorch for 1-D and 2-D operands', function()
    local d = torch.matmul(f64(v), f64(v))
    assert.are.equal(0, d:dim())
    assert.is_true(math.abs(d:item() - 21.785768429999997) < 1e-12)
    assert_close({7.8648668499999985, -2.9525494800000005, -9.29770106}, f64(A):matmul(f64(v)), 1e-14)
    local wA = f64(w):matmul(f64(A))
    assert.are.same({4}, wA:size():totable())
    assert_close({4.95119304, 6.77711064, 7.114275390000001, 8.19541445}, wA, 1e-14)
    assert_close(AB, torch.matmul(f64(A), f64(B)), 1e-14)
  end)

  it('folds a stack times a matrix into one product', function()
    local x = seq(24, function(i) return i * 0.25 - 1 end):view(2, 3, 4)
    local y = seq(8, function(i) return i % 3 - 1 end):view(4, 2)
    local want = {0.5, 0.25, -0.5, 0.25, -1.5, 0.25, -2.5, 0.25, -3.5, 0.25, -4.5, 0.25}
    local r = x:matmul(y)
    assert.are.same({2, 3, 2}, r:size():totable())
    assert_close(want, r, 1e-14)
    -- a stack whose rows cannot be folded: batched with a broadcast matrix
    local unfoldable = x:transpose(1, 2):contiguous():transpose(1, 2)
    assert_close(want, unfoldable:matmul(y), 1e-14)
    local xv = x:matmul(f64({1, -2, 0.5, 3}))
    assert.are.same({2, 3}, xv:size():totable())
    assert_close({-0.5, 2.0, 4.5, 7.0, 9.5, 12.0}, xv, 1e-14)
  end)

  it('broadcasts batch dims', function()
    local a = seq(12, function(i) return i * 0.5 - 2 end):view(2, 1, 2, 3)
    local b = seq(18, function(i) return i % 5 - 1.5 end):view(3, 3, 2)
    local r = torch.matmul(a, b)
    assert.are.same({2, 3, 2, 2}, r:size():totable())
    local want = {-0.25, 0.25, 2.0, -0.5, 0.25, -4.25, -0.5, -0.5, -4.25, -1.25, -0.5, -0.5, 4.25,
                  -1.25, 6.5, -2.0, -1.25, 3.25, -2.0, 7.0, 3.25, 0.25, 7.0, 1.0}
    assert_close(want, r, 1e-14)
    assert_close(want, torch.matmul(a:float(), b:float()), 1e-6)
    assert_close(want, torch.matmul(a:mul(4):long(), b:mul(2):long()):double():div(8))
    local bb = seq(24, function(i) return i % 7 - 3 end):view(2, 4, 3)
    local vb = f64({1, 0.5, -1, 2}):matmul(bb)
    assert.are.same({2, 3}, vb:size():totable())
    assert_close({-8.0, 1.5, 4.0, -6.0, -3.5, -8.0}, vb, 1e-14)
    local y = seq(8, function(i) return i % 3 - 1 end):view(4, 2)
    local mb = y:t():matmul(bb)
    assert.are.same({2, 2, 3}, mb:size():totable())
    assert_close({4.0, 3.0, 2.0, 3.0, -4.0, -4.0, -1.0, -2.0, 4.0, 3.0, 3.0, 3.0}, mb, 1e-14)
    assert.are.same({0, 2, 4}, torch.zeros(0, 2, 3):matmul(torch.zeros(3, 4)):size():totable())
  end)

  it('raises on bad operands', function()
    assert.has_error(function() torch.zeros(2, 3):matmul(torch.zeros(4, 5)) end,
                     'matmul: cannot multiply 2x3 by 4x5')
    assert.has_error(function() torch.zeros(3):matmul(torch.zeros(4)) end,
                     'matmul: cannot multiply 3 by 4')
    assert.has_error(function() torch.zeros(2, 2, 3):matmul(torch.zeros(3, 3, 4)) end,
                     'matmul: cannot multiply 2x2x3 by 3x3x4: batch dims do not broadcast')
    assert.has_error(function() torch.zeros({}):matmul(torch.zeros(2)) end,
                     'matmul: both arguments need at least 1 dim, got 0-D and 1-D')
    assert.has_error(function() torch.zeros(2, 2):matmul(torch.zeros(2, 2, {dtype = 'int64'})) end,
                     'matmul: expected both float32, got float32 and int64')
  end)
end)

describe('diag and trace', function()
  local function raises(text, f)
    local ok, err = pcall(f)
    assert.is_false(ok)
    assert.truthy(tostring(err):find(text, 1, true), err)
  end

  it('diag puts a vector on diagonal k of a square matrix (PyTorch values)', function()
    local d = torch.tensor({1.0, 2, 3})
    assert_close({{1, 0, 0}, {0, 2, 0}, {0, 0, 3}}, torch.diag(d), 0)
    assert_close({{0, 1, 0, 0}, {0, 0, 2, 0}, {0, 0, 0, 3}, {0, 0, 0, 0}}, d:diag(1), 0)
    local below = torch.diag(d, -2)
    assert.are.same({5, 5}, below:size():totable())
    assert_close({{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}, {1, 0, 0, 0, 0}, {0, 2, 0, 0, 0}, {0, 0, 3, 0, 0}}, below, 0)
    local i = torch.diag(torch.tensor({1, 2}))
    assert.are.equal('int64', i.dtype)
    assert_close({{1, 0}, {0, 2}}, i, 0)
    assert.are.same({{true, false}, {false, false}}, torch.diag(torch.tensor({true, false})):totable())
    assert.are.same({2, 2}, torch.zeros(0):diag(2):size():totable())
    local strided = torch.tensor({{1.0, 2}, {3, 4}}):t():select(1, 2)   -- {2, 4}, stride 2
    assert_close({{2, 0}, {0, 4}}, strided:diag(), 0)
  end)

  it('diag copies diagonal k of a matrix (PyTorch values)', function()
    local m = torch.arange(1.0, 13.0):view(3, 4)
    assert_close({1, 6, 11}, m:diag(), 0)
    assert_close({2, 7, 12}, m:diag(1), 0)
    assert_close({5, 10}, torch.diag(m, -1), 0)
    assert.are.same({0}, m:diag(5):size():totable())
    assert.are.same({0}, m:diag(-3):size():totable())
    assert_close({1, 6, 11}, m:t():diag(), 0)
    local copy = m:diag()
    copy[1] = 100
    assert.are.equal(1, m[1][1])                                      -- a copy, as PyTorch
    raises('diag: expects a 1-D or 2-D tensor, got 2x2x2', function() return torch.zeros(2, 2, 2):diag() end)
    raises('diag: the diagonal must be an integer, got 1.5', function() return m:diag(1.5) end)
  end)

  it('trace sums the main diagonal into a 0-dim tensor', function()
    local t = torch.arange(1.0, 13.0):view(3, 4):trace()
    assert.are.equal(0, t:dim())
    assert.are.equal(18, t:item())
    assert.are.equal(6, torch.tensor({{1, 2, 3}, {4, 5, 6}}):trace():item())
    assert.are.equal('int64', torch.tensor({{1, 2}, {3, 4}}, {dtype = 'int32'}):trace().dtype)
    assert.are.equal(0, torch.zeros(0, 3):trace():item())
    assert.are.equal(4, torch.arange(6):view(2, 3):t():trace():item())
    raises('trace: expects a 2-D tensor, got 2', function() return torch.zeros(2):trace() end)
    raises('trace: not supported for bool tensors', function() return torch.tensor({{true}}):trace() end)
  end)

  it('pass gradients as PyTorch', function()
    local w = torch.tensor({1.0, 2}, {requires_grad = true})
    local y = torch.diag(w, 1) * torch.arange(9.0):view(3, 3)
    y:sum():backward()
    assert_close({1, 5}, w.grad, 0)
    local m = torch.arange(1.0, 10.0):view(3, 3):requires_grad_()
    m:trace():backward()
    assert_close({{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, m.grad, 0)
    local n = torch.arange(1.0, 10.0):view(3, 3):requires_grad_()
    local z = n:diag(1) * torch.tensor({5.0, 7})
    z:sum():backward()
    assert_close({{0, 5, 0}, {0, 0, 7}, {0, 0, 0}}, n.grad, 0)
  end)
end)
