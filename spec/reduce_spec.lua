-- reduce_spec.lua: reductions, scans, softmax, sorting and selection, and
-- tensor comparisons. Expected values were computed with PyTorch 2.x and
-- pasted in; indices are 1-based here (PyTorch's + 1).
local torch = require 'torch'

local nan, inf = 0 / 0, math.huge

local function shape(t) return t:size():totable() end

local function near(got, want, tol)
  if want ~= want then return got ~= got end
  if got == want then return true end
  if type(got) ~= 'number' or type(want) ~= 'number' then return false end
  return math.abs(got - want) <= tol * math.max(1, math.abs(want))
end

-- Checks a tensor's shape and values (row-major) against PyTorch's.
local function check(t, want, want_shape, tol)
  assert.is_true(torch.is_tensor(t), 'expected a tensor')
  if want_shape then assert.are.same(want_shape, shape(t)) end
  local got = t:_flat_values()
  assert.are.equal(#want, #got, 'number of elements')
  for i = 1, #want do
    if not near(got[i], want[i], tol or 1e-5) then
      error(string.format('element %d: got %s, expected %s', i, tostring(got[i]), tostring(want[i])), 2)
    end
  end
end

-- Checks that fn raises an error whose message contains each fragment.
local function raises(fn, ...)
  local ok, err = pcall(fn)
  assert.is_false(ok, 'expected an error')
  for _, fragment in ipairs({...}) do
    if not tostring(err):find(fragment, 1, true) then
      error(string.format('error %q does not mention %q', tostring(err), fragment), 2)
    end
  end
end

local A = torch.tensor({{1, -2, 3.5, 0}, {4, 5, -6, 2.25}, {-1.5, 0.5, 7, -3}})
local T = A:t()
local B = torch.tensor({
  {{-0.564480007, -2.39388847, -3.63718963, -3.98997998}, {-3.36588383, -1.9177022, 0, 1.9177022},
   {3.36588383, 3.98997998, 3.63718963, 2.39388847}},
  {{0.564480007, -1.40313292, -3.02721, -3.91012049}, {-3.83569717, -2.8221612, -1.11766195, 0.860479951},
   {2.62794638, 3.75199986, 3.95743299, 3.19394851}}})
local I = torch.tensor({{3, -1, 4}, {1, 5, -9}, {2, 6, 5}})
-- R: sin(1..2000) * 10 as float32, a row long enough for the vector paths
local R
do
  local values = {}
  for i = 1, 2000 do values[i] = math.sin(i) * 10 end
  R = torch.tensor(values)
end
local Rm = R:view(40, 50)

describe('sum', function()
  it('reduces everything to a 0-dim tensor', function()
    local s = A:sum()
    assert.are.equal(0, s:dim())
    assert.are.equal('float32', s.dtype)
    check(s, {10.75}, {})
    check(T:sum(), {10.75}, {})
    check(R:sum(), {17.1657734})
  end)

  it('reduces one dim, with keepdim and negative dims', function()
    check(A:sum(1), {3.5, 3.5, 4.5, -0.75}, {4})
    check(A:sum(2), {2.5, 5.25, 3}, {3})
    check(A:sum(-1), {2.5, 5.25, 3}, {3})
    check(A:sum(2, true), {2.5, 5.25, 3}, {3, 1})
    check(A:sum(2, {keepdim = true}), {2.5, 5.25, 3}, {3, 1})
    check(A:sum({dim = -2, keepdim = true}), {3.5, 3.5, 4.5, -0.75}, {1, 4})
    check(torch.sum(A, 2), {2.5, 5.25, 3}, {3})
    check(T:sum(1), {2.5, 5.25, 3}, {3})
    check(T:sum(2), {3.5, 3.5, 4.5, -0.75}, {4})
    check(Rm:sum(1):narrow(1, 1, 4), {-53.7307358, -2.20589066, 51.3470306, 57.6917458})
    check(Rm:t():sum(2):narrow(1, 1, 4), {-53.7307358, -2.20589066, 51.3470306, 57.6917458})
  end)

  it('reduces lists of dims, adjacent or not', function()
    check(A:sum({1, 2}), {10.75}, {})
    check(A:sum({1, 2}, {keepdim = true}), {10.75}, {1, 1})
    check(B:sum(2), {-0.564480066, -0.321610689, 0, 0.321610689, -0.643270731, -0.473294258,
                     -0.187438726, 0.144307852}, {2, 4})
    check(B:sum({1, 3}), {-18.3615208, -10.2809238, 26.9182701}, {3})
    check(B:permute(3, 1, 2):sum(3), {-0.564480066, -0.643270731, -0.321610689, -0.473294258, 0,
                                      -0.187438726, 0.321610689, 0.144307852}, {4, 2})
    check(A:sum({}), {10.75}, {})
  end)

  it('sums ints and bools to int64, half precision in its own dtype', function()
    local s = I:sum(1)
    assert.are.equal('int64', s.dtype)
    check(s, {6, 10, 0}, {3})
    local b = torch.tensor({true, false, true})
    assert.are.equal('int64', b:sum().dtype)
    assert.are.equal(2, b:sum():item())
    assert.are.equal('int64', torch.tensor({1, 2}, {dtype = 'int32'}):sum().dtype)
    local h = torch.tensor({0.1, 0.2, 0.3, 1000, 2000}, {dtype = 'float16'})
    assert.are.equal('float16', h:sum().dtype)
    check(h:sum(), {3000})
    check(torch.tensor({1.5, 2.25, -3}, {dtype = 'bfloat16'}):sum(), {0.75})
    local d = torch.tensor({1, 2}, {dtype = 'int32'}):sum({dtype = 'float64'})
    assert.are.equal('float64', d.dtype)
    assert.are.equal(3, d:item())
  end)

  it('is exact for int64 beyond 2^53 and accurate for long float32 sums', function()
    assert.are.equal((1 << 53) + 1, torch.tensor({1 << 53, 1}):sum():item())
    assert.are.equal(16777216, torch.ones(16777216):sum():item())
    local rows = torch.ones(4096, 4096)
    assert.are.equal(4096 * 4096, rows:sum(2):sum():item())
    check(rows:sum(1):narrow(1, 1, 3), {4096, 4096, 4096})
  end)

  it('handles 0-dim, empty and expanded tensors', function()
    local z = torch.tensor(3.5)
    check(z:sum(), {3.5}, {})
    check(z:sum(1), {3.5}, {})
    check(z:sum(-1, true), {3.5}, {})
    check(torch.zeros(0):sum(), {0}, {})
    check(torch.zeros(2, 0):sum(2), {0, 0}, {2})
    check(torch.zeros(0, 3):sum(2), {}, {0})
    local e = torch.tensor({1, 2, 3}):expand(4, 3)
    check(e:sum(1), {4, 8, 12}, {3})
    check(e:sum(2), {6, 6, 6, 6}, {4})
    assert.are.equal(24, e:sum():item())
  end)

  it('reduces short inner dims across rows', function()
    local x = torch.ones(1000, 3)
    x[{500, 2}] = 10
    local s = x:sum(2)
    check(s:narrow(1, 499, 3), {3, 12, 3}, {3})
    assert.are.equal(3009, s:sum():item())
  end)

  it('raises on bad dims', function()
    raises(function() A:sum(3) end, 'sum', 'dimension 3 out of range')
    raises(function() A:sum(0) end, 'sum', 'out of range')
    raises(function() A:sum({1, -2}) end, 'sum', 'appears more than once')
    raises(function() A:sum(1, 2) end, 'keepdim')
    raises(function() torch.sum(nil) end, 'sum', 'must be a tensor')
  end)
end)

describe('nansum', function()
  it('is sum with NaN counted as zero, over every element or dims', function()
    local x = torch.tensor({{1, nan, 3}, {nan, nan, 2.5}})
    check(x:nansum(), {6.5}, {})
    check(x:nansum(2), {4, 2.5}, {2})
    check(torch.nansum(x, 1, true), {1, 0, 5.5}, {1, 3})
    check(x:nansum({1, 2}), {6.5}, {})
    assert.are.equal('float32', x:nansum().dtype)
    local i = torch.tensor({{1, 2}, {3, 4}}, {dtype = 'int32'}):nansum(1)
    assert.are.equal('int64', i.dtype)                 -- integers have no NaN and widen as sum's
    check(i, {4, 6}, {2})
    check(torch.zeros(0):nansum(), {0}, {})
    check(x:nansum({dtype = 'float64'}), {6.5}, {})
  end)

  it('passes no gradient to the NaNs', function()
    local x = torch.tensor({1, nan, 3}, {requires_grad = true})
    local y = x:nansum() * 2
    y:backward()
    check(x.grad, {2, 0, 2}, {3})
    assert.are.equal('<NansumBackward>', tostring(x:nansum().grad_fn))
  end)
end)

describe('mean and prod', function()
  it('mean over all, dims and lists', function()
    check(A:mean(2), {0.625, 1.3125, 0.75}, {3})
    check(T:mean(2), {1.16666663, 1.16666663, 1.5, -0.25}, {4})
    check(B:mean({2, 3}, true), {-0.0470400043, -0.0966413692}, {2, 1, 1})
    check(torch.tensor({1, 2}, {dtype = 'float16'}):mean(), {1.5})
    check(torch.tensor({1, 2}):mean({dtype = 'float32'}), {1.5})
  end)

  it('mean of an empty tensor is NaN, of ints an error', function()
    check(torch.zeros(0):mean(), {nan})
    raises(function() torch.tensor({1, 2}):mean() end, 'mean', 'floating point', 'int64')
  end)

  it('prod', function()
    check(A:prod(1), {-6, -5, -147, 0}, {4})
    check(T:prod(1), {0, -270, 15.75}, {3})
    local p = I:prod(2)
    assert.are.equal('int64', p.dtype)
    check(p, {-12, -45, 60}, {3})
    check(torch.zeros(0):prod(), {1}, {})
    assert.are.equal('int64', torch.tensor({true, true}):prod().dtype)
  end)
end)

describe('max and min', function()
  it('without a dim give a 0-dim tensor', function()
    local m = A:max()
    assert.are.equal(0, m:dim())
    assert.are.equal(7, m:item())
    assert.are.equal(-6, A:min():item())
    assert.are.equal(6, I:max():item())
    assert.are.equal('int64', I:max().dtype)
    assert.are.equal(true, torch.tensor({true, false}):max():item())
    check(R:max(), {9.99990749})
  end)

  it('with a dim give values and 1-based indices', function()
    local v, i = A:max(2)
    check(v, {3.5, 5, 7}, {3})
    check(i, {3, 2, 3}, {3})
    assert.are.equal('int64', i.dtype)
    v, i = A:min(1)
    check(v, {-1.5, -2, -6, -3}, {4})
    check(i, {3, 1, 2, 3})
    v, i = T:max(2)
    check(v, {4, 5, 7, 2.25})
    check(i, {2, 2, 3, 2})
    v, i = T:min(1)
    check(v, {-2, -6, -3})
    check(i, {2, 3, 4})
    v, i = B:max(2)
    check(v, {3.36588383, 3.98997998, 3.63718963, 2.39388847, 2.62794638, 3.75199986, 3.95743299,
              3.19394851}, {2, 4})
    check(i, {3, 3, 3, 3, 3, 3, 3, 3})
    v, i = I:max(2, true)
    check(v, {4, 5, 6}, {3, 1})
    check(i, {3, 2, 2}, {3, 1})
    v, i = Rm:max(1)
    check(v:narrow(1, 1, 4), {9.9179039, 9.97164249, 9.99910259, 9.99205589})
    check(i:narrow(1, 1, 4), {23, 26, 30, 10})
    v, i = torch.max(A, {dim = -1, keepdim = true})
    check(i, {3, 2, 3}, {3, 1})
  end)

  it('picks the first of ties and propagates NaN', function()
    local x = torch.tensor({{1, 5, 5, 2}, {2, 2, 7, 7}})
    local _, i = x:max(2)
    check(i, {2, 3})
    _, i = x:min(2)
    check(i, {1, 1})
    local n = torch.tensor({1, nan, 3, nan})
    local v
    v, i = n:max(1)
    check(v, {nan})
    check(i, {2})
    v, i = n:min(1)
    check(i, {2})
    check(n:max(), {nan})
    assert.are.equal(2, n:argmax():item())
  end)

  it('finds extremes in long runs across chunks', function()
    local x = torch.zeros(50000)
    x[40000] = 5
    x[45000] = 5
    local v, i = x:max(1)
    assert.are.equal(5, v:item())
    assert.are.equal(40000, i:item())
    x[30000] = nan
    v, i = x:max(1)
    assert.are.equal(30000, i:item())
    assert.is_true(v:item() ~= v:item())
    assert.are.equal(30000, x:argmin():item())
  end)

  it('finds the first extreme of long runs in every dtype, infinities included', function()
    for _, dtype in ipairs({'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64'}) do
      local x = torch.zeros(300, {dtype = dtype})
      x[66], x[40], x[250] = 7, 7, 7
      x[41], x[299] = 3, 3
      local v, i = x:max(1)
      assert.are.equal(7, v:item(), dtype)
      assert.are.equal(40, i:item(), dtype)
      x:fill(9)
      x[41], x[299] = 3, 3
      v, i = x:min(1)
      assert.are.equal(3, v:item(), dtype)
      assert.are.equal(41, i:item(), dtype)
    end
    local f = torch.zeros(200)
    f[150], f[120], f[7] = inf, inf, -inf
    local v, i = f:max(1)
    assert.are.equal(inf, v:item())
    assert.are.equal(120, i:item())
    v, i = f:min(1)
    assert.are.equal(-inf, v:item())
    assert.are.equal(7, i:item())
    check(torch.ones(3, 200):amax(2), {1, 1, 1})
  end)

  it('of two tensors are elementwise', function()
    check(torch.max(torch.tensor({1, 5}), torch.tensor({3, 2})), {3, 5})
    check(torch.tensor({1, 5}):min(torch.tensor({3, 2})), {1, 2})
  end)

  it('0-dim and empty', function()
    local v, i = torch.tensor(3):max(1)
    check(v, {3}, {})
    check(i, {1}, {})
    raises(function() torch.zeros(0):max() end, 'max', 'empty')
    raises(function() torch.zeros(2, 0):max(2) end, 'max', 'dim 2', 'empty')
    v, i = torch.zeros(0, 3):max(2)
    check(v, {}, {0})
    check(i, {}, {0})
    raises(function() torch.zeros(0, 3):amin(1) end, 'amin', 'empty')
    raises(function() A:max(3) end, 'max', 'out of range')
    raises(function() A:max({1, 2}) end, 'max', 'single dim')
  end)

  it('amax and amin reduce lists of dims', function()
    check(I:amax({1, 2}), {6}, {})
    check(A:amin(2, true), {-2, -6, -3}, {3, 1})
  end)
end)

describe('reductions along an outer dim', function()
  -- 37 rows (blocks of 8 rows and a tail), 2070 columns (a full tile of
  -- columns, then a part tile whose width is no multiple of the vector width)
  local R, C = 37, 2070
  local X = torch.arange(0, R * C):float():view(R, C)     -- X[i][j] = (i - 1) * C + j - 1

  it('sum and mean each column of a known sequence', function()
    local s, m = X:sum(1), X:mean(1)
    assert.are.same({C}, shape(s))
    for _, j in ipairs({1, 2, 16, 17, 2048, 2049, 2070}) do
      local want = C * R * (R - 1) / 2 + R * (j - 1)         -- exact in float32
      assert.are.equal(want, s[j])
      assert.are.equal(want / R, m[j])
    end
    local v = X:var(1)                                       -- column j: j - 1 + C * (0 .. R - 1)
    assert.is_true(near(v[1], C * C * R * (R + 1) / 12, 1e-6))
    assert.is_true(near(v[C], v[1], 1e-6))
    check(X:int():sum(1):narrow(1, C - 1, 2), {C * R * (R - 1) / 2 + R * (C - 2), C * R * (R - 1) / 2 + R * (C - 1)})
  end)

  it('sum strided columns, and one row or none', function()
    local wide = torch.arange(0, R * C * 2):float():view(R, C, 2)
    local odd = wide:select(3, 1)                            -- columns two floats apart
    for _, j in ipairs({1, 2070}) do
      assert.are.equal(2 * (C * R * (R - 1) / 2 + R * (j - 1)), odd:sum(1)[j])
    end
    check(X:narrow(1, 1, 1):sum(1):narrow(1, 2069, 2), {2068, 2069})
    check(torch.zeros(0, 5):sum(1), {0, 0, 0, 0, 0}, {5})
    check(torch.zeros(5, 0):sum(1), {}, {0})
  end)

  it('max and min: the first of ties, NaN before any number, in every column', function()
    local x = torch.zeros(R, C)
    x[{3, 1}], x[{20, 1}] = 5, 5                             -- a tie in the first column
    x[{37, 2070}] = 5                                        -- the last row of the last column
    x[{5, 500}], x[{10, 500}], x[{30, 500}] = 9, nan, nan    -- a NaN after a larger number
    x[{2, 501}], x[{9, 501}] = -inf, -inf
    local v, i = x:max(1)
    check(v:index(1, torch.tensor({1, 2, 500, 501, 2070})), {5, 0, nan, 0, 5})
    check(i:index(1, torch.tensor({1, 2, 500, 501, 2070})), {3, 1, 10, 1, 37})
    v, i = x:min(1)
    check(v:index(1, torch.tensor({1, 500, 501, 2070})), {0, nan, -inf, 0})
    check(i:index(1, torch.tensor({1, 500, 501, 2070})), {1, 10, 2, 1})
    check(x:amax(1):narrow(1, 499, 3), {0, nan, 0})
    v, i = x:narrow(1, 3, 1):max(1)                          -- one row
    check(v:narrow(1, 1, 2), {5, 0})
    check(i:narrow(1, 1, 2), {1, 1})
  end)

  it('max and min of strided columns, and of every dtype', function()
    local wide = torch.zeros(R, C, 2)
    wide[{12, 7, 1}], wide[{30, 7, 1}], wide[{31, 7, 2}] = 4, 4, 6
    local v, i = wide:select(3, 1):max(1)
    assert.are.same({4, 12}, {v[7], i[7]})
    for _, dtype in ipairs({'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64'}) do
      local x = torch.zeros(R, C, {dtype = dtype})
      x[{17, 2070}], x[{35, 2070}], x[{36, 3}] = 7, 7, 2
      v, i = x:max(1)
      assert.are.equal(7, v[2070], dtype)
      assert.are.equal(17, i[2070], dtype)
      assert.are.equal(36, i[3], dtype)
      x:fill(9)
      x[{36, 3}] = 1
      v, i = x:min(1)
      assert.are.equal(1, v[3], dtype)
      assert.are.equal(36, i[3], dtype)
      assert.are.equal(1, i[4], dtype)
    end
  end)
end)

describe('argmax and argmin', function()
  it('flatten without a dim, in row-major order of the tensor', function()
    check(A:argmax(), {11}, {})
    check(A:argmin(), {7}, {})
    check(T:argmax(), {9}, {})
    check(T:argmin(), {8}, {})
    check(B:permute(3, 1, 2):argmax(), {9}, {})
    check(R:argmax(), {1409})
    check(A:argmax({keepdim = true}), {11}, {1, 1})
    raises(function() torch.zeros(0):argmax() end, 'argmax', 'empty')
  end)

  it('along a dim', function()
    check(A:argmax(2), {3, 2, 3}, {3})
    check(A:argmin(1, true), {3, 1, 2, 3}, {1, 4})
    check(torch.tensor({2.0, 1.0}):argmax(1, true), {1}, {1})
    assert.are.equal('int64', A:argmax(1).dtype)
  end)
end)

describe('var and std', function()
  it('are unbiased by default', function()
    check(A:var(), {13.652936}, {})
    check(A:var(2), {5.22916651, 25.057291, 19.416666}, {3})
    check(T:var(2), {7.58333349, 12.583333, 45.25, 6.9375}, {4})
    check(B:var(1), {0.637275338, 0.490798295, 0.18603757, 0.00318876957, 0.110362291, 0.409023046,
                     0.624584138, 0.558859468, 0.272275835, 0.0283172708, 0.0512779057, 0.320048034},
          {3, 4}, 1e-4)
    check(B:std({1, 3}), {1.68165338, 2.07498431, 0.595338762}, {3})
    check(R:var(), {50.052063})
    check(R:std(), {7.07474804})
    check(Rm:var(1):narrow(1, 1, 3), {47.253334, 55.8120842, 47.9971428})
  end)

  it('take unbiased=false, correction and keepdim', function()
    check(A:std(1, {unbiased = false}), {2.24845624, 2.89635777, 5.49241924, 2.15058136}, {4})
    check(T:std(1, false), {1.98037243, 4.33508587, 3.81608438}, {3})
    check(torch.tensor({1, 2, 4}):float():var({unbiased = false}), {1.5555556})
    local D = A:double()
    local v = D:var(2, {correction = 0, keepdim = true})
    assert.are.equal('float64', v.dtype)
    check(v, {3.921875, 18.79296875, 14.5625}, {3, 1}, 1e-12)
    check(D:std(), {3.6949879}, {}, 1e-7)
    check(torch.tensor({1.0, 2.0}):var({correction = 3}), {inf})
  end)

  it('of one element or none is NaN; ints raise', function()
    check(torch.tensor({1.0}):var(), {nan})
    check(torch.zeros(0):std(), {nan})
    raises(function() I:var() end, 'var', 'floating point')
    raises(function() I:std(1) end, 'std', 'floating point')
  end)
end)

describe('norm', function()
  it('is the 2-norm by default and takes any p', function()
    check(A:norm(), {12.6416969}, {})
    check(T:norm(), {12.6416969}, {})
    check(A:norm(1, 2), {6.5, 17.25, 12}, {3})
    check(T:norm(1, 2), {6.5, 7.5, 16.5, 5.25}, {4})
    check(A:norm(3, 1), {4.08914471, 5.10606766, 8.44310379, 3.37345624}, {4})
    check(T:norm(3, 1), {3.72951818, 7.46735859, 7.20162058}, {3})
    check(A:norm(inf, 2), {3.5, 6, 7}, {3})
    check(T:norm('inf', 2, true), {4, 5, 7, 3}, {4, 1})
    check(A:norm(-inf), {0}, {})
    check(A:norm(0.5), {352.697876}, {})
    check(A:norm(0), {11}, {})
    check(torch.tensor({1, -2, 3}):float():norm(-1), {0.545454545})
    check(B:norm(2, 3), {5.93282652, 4.32253838, 6.79771757, 5.17111826, 4.96656418, 6.84442759}, {2, 3})
    check(A:norm({p = 1, dim = 1, keepdim = true}), {6.5, 7.5, 16.5, 5.25}, {1, 4})
    check(A:norm('fro'), {12.6416969})
    check(R:norm(), {316.313507})
    check(Rm:norm(2, 2):narrow(1, 1, 3), {50.1155701, 50.1524506, 50.1473999})
  end)

  it('of empty tensors is 0, or an error without an identity', function()
    check(torch.zeros(0):norm(), {0}, {})
    raises(function() torch.zeros(0):norm(inf) end, 'norm', 'empty')
    raises(function() torch.zeros(0, 3):norm(-1, 1) end, 'norm', 'empty')
    raises(function() I:norm() end, 'norm', 'floating point')
    raises(function() A:norm('nuc') end, 'norm', 'nuc')
  end)
end)

describe('logsumexp', function()
  it('is stable and matches PyTorch', function()
    check(A:logsumexp(2), {3.61008167, 5.35894918, 7.00175095}, {3})
    check(A:logsumexp(1), {4.05247259, 5.01194906, 7.02975273, 2.35494256}, {4})
    check(T:logsumexp(2), {4.05247259, 5.01194906, 7.02975273, 2.35494256}, {4})
    check(B:logsumexp({1, 2}), {3.81082487, 4.57680702, 4.51862717, 3.79658222}, {4})
    check(A:double():logsumexp(1), {4.05247275, 5.0119492, 7.02975261, 2.3549425}, nil, 1e-8)
    check(R:logsumexp(1), {15.5452662})
    check(torch.tensor({1000.0, 1000.0}):logsumexp(1), {1000.693147})
  end)

  it('handles infinities, empty tensors and ints', function()
    check(torch.tensor({-inf, -inf}):logsumexp(1), {-inf})
    check(torch.tensor({inf, 1}):logsumexp(1), {inf})
    check(torch.zeros(0):logsumexp(1), {-inf})
    local l = I:logsumexp(2)
    assert.are.equal('float32', l.dtype)
    check(l, {4.31817532, 5.01815081, 6.32656288})
  end)
end)

describe('cumsum and cumprod', function()
  it('run along a dim', function()
    check(A:cumsum(2), {1, -1, 2.5, 2.5, 4, 9, 3, 5.25, -1.5, -1, 6, 3}, {3, 4})
    check(A:cumprod(1), {1, -2, 3.5, 0, 4, -10, -21, 0, -6, -5, -147, 0}, {3, 4})
    check(T:cumsum(2), {1, 5, 3.5, -2, 3, 3.5, 3.5, -2.5, 4.5, 0, 2.25, -0.75}, {4, 3})
    check(T:cumprod(1), {1, 4, -1.5, -2, 20, -0.75, -7, -120, -5.25, 0, -270, 15.75}, {4, 3})
    check(B:cumsum(2), {-0.564480007, -2.39388847, -3.63718963, -3.98997998, -3.93036389, -4.31159067,
                        -3.63718963, -2.07227778, -0.564480007, -0.321610689, 0, 0.321610689,
                        0.564480007, -1.40313292, -3.02721, -3.91012049, -3.27121711, -4.22529411,
                        -4.14487171, -3.04964066, -0.643270791, -0.473294258, -0.187438965,
                        0.144307971}, {2, 3, 4})
    check(Rm:cumsum(1):select(1, 40):narrow(1, 1, 3), {-53.730732, -2.20589399, 51.3470345})
    check(torch.cumsum(A, -1):select(2, 4), {2.5, 5.25, 3})
  end)

  it('accumulate ints and bools in int64', function()
    local c = I:cumsum(1)
    assert.are.equal('int64', c.dtype)
    check(c, {3, -1, 4, 4, 4, -5, 6, 10, 0}, {3, 3})
    check(I:cumprod(2), {3, -3, -12, 1, 5, -45, 2, 12, 60})
    assert.are.equal('int64', torch.tensor({1, 2}, {dtype = 'int32'}):cumsum(1).dtype)
    local b = torch.tensor({true, true, false}):cumsum(1)
    assert.are.equal('int64', b.dtype)
    check(b, {1, 2, 2})
    local f = torch.tensor({1, 2}):cumsum(1, {dtype = 'float32'})
    assert.are.equal('float32', f.dtype)
    check(f, {1, 3})
  end)

  it('handles 0-dim and empty tensors, and needs a dim', function()
    check(torch.tensor(3.0):cumsum(1), {3}, {})
    check(torch.zeros(2, 0):cumsum(2), {}, {2, 0})
    raises(function() A:cumsum() end, 'cumsum', 'expects a dim')
    raises(function() A:cumprod(3) end, 'cumprod', 'out of range')
  end)
end)

describe('all, any and count_nonzero', function()
  it('give bool results', function()
    local b = torch.tensor({{true, false}, {true, true}})
    assert.are.equal(false, b:all():item())
    assert.are.equal(true, b:any():item())
    check(b:all(2), {false, true}, {2})
    check(b:any(1, true), {true, true}, {1, 2})
    assert.are.equal('bool', I:all().dtype)
    check(torch.tensor({{1, 2}, {3, 4}}):all(2), {true, true})
    assert.are.equal(true, torch.tensor({0, nan}):any():item())
    assert.are.equal(true, torch.zeros(0):all():item())
    assert.are.equal(false, torch.zeros(0):any():item())
  end)

  it('keep uint8 as uint8, as PyTorch does', function()
    local u = torch.tensor({1, 2}, {dtype = 'uint8'}):all()
    assert.are.equal('uint8', u.dtype)
    assert.are.equal(1, u:item())
  end)

  it('count nonzeros', function()
    local c = torch.tensor({{1.0, 0}, {2, 0}}):count_nonzero(1)
    assert.are.equal('int64', c.dtype)
    check(c, {2, 0})
    assert.are.equal(11, A:count_nonzero():item())
  end)
end)

describe('softmax and log_softmax', function()
  it('match PyTorch along either dim, contiguous or transposed', function()
    check(A:softmax(2), {0.0735285431, 0.00366077083, 0.895761073, 0.0270496402, 0.256930619,
                         0.698409855, 1.16646324e-05, 0.0446478464, 0.000203112431, 0.0015008091,
                         0.998250663, 4.53205103e-05}, {3, 4})
    check(A:softmax(1), {0.0472419634, 0.000901050575, 0.0293121673, 0.0948989615, 0.948880255,
                         0.988121986, 2.19406934e-06, 0.90037632, 0.00387785677, 0.0109770428,
                         0.970685661, 0.00472474145}, {3, 4})
    check(T:softmax(2), {0.0472419634, 0.948880255, 0.00387785677, 0.000901050633, 0.988121986,
                         0.0109770438, 0.0293121673, 2.19406934e-06, 0.970685661, 0.0948989615,
                         0.90037632, 0.00472474145}, {4, 3})
    check(torch.softmax(T, 1), {0.0735285431, 0.256930649, 0.000203112446, 0.00366077083, 0.698409855,
                                0.00150080922, 0.895761073, 1.16646324e-05, 0.998250663, 0.0270496402,
                                0.0446478464, 4.53205139e-05}, {4, 3})
    check(A:log_softmax(2), {-2.61008167, -5.61008167, -0.110081568, -3.61008167, -1.35894918,
                             -0.358949125, -11.3589487, -3.10894918, -8.50175095, -6.50175095,
                             -0.0017508429, -10.0017509}, {3, 4})
    check(A:log_softmax(1), {-3.05247259, -7.01194906, -3.52975273, -2.35494256, -0.0524726883,
                             -0.0119491499, -13.0297527, -0.104942478, -5.55247259, -4.51194906,
                             -0.0297526158, -5.35494232}, {3, 4})
    check(torch.log_softmax(T, -1), {-3.05247259, -0.0524726883, -5.55247259, -7.01194906,
                                     -0.0119491499, -4.51194906, -3.52975273, -13.0297527,
                                     -0.0297526158, -2.35494256, -0.104942478, -5.35494232})
  end)

  it('on 3-D tensors, long rows and columns', function()
    check(B:softmax(2), {0.0192358624, 0.00168116949, 0.000674836629, 0.0010405106, 0.00116809306,
                         0.00270655192, 0.0256336238, 0.382754385, 0.979596019, 0.995612264,
                         0.973691583, 0.616205096, 0.112543054, 0.00572866388, 0.000919395767,
                         0.000748559949, 0.00138148444, 0.00138604455, 0.00620595412, 0.088322632,
                         0.886075497, 0.992885292, 0.992874622, 0.910928845}, {2, 3, 4})
    check(B:log_softmax(1), {-1.40914106, -1.30651188, -1.04394269, -0.733873963, -0.48558104,
                             -0.339867055, -0.28295356, -0.298191279, -0.390756786, -0.581219792,
                             -0.866033971, -1.1711421, -0.28018105, -0.315756321, -0.43396309,
                             -0.654014468, -0.955394387, -1.24432611, -1.40061545, -1.35541356,
                             -1.1286943, -0.81919992, -0.545790613, -0.371082038}, {2, 3, 4})
    check(R:softmax(1):narrow(1, 1, 5), {0.000800274254, 0.00157690467, 7.27199051e-07,
                                         9.16274071e-11, 1.21400875e-11})
    check(R:log_softmax(1):narrow(1, 1998, 3), {-16.074295, -7.42817593, -6.24487114})
    check(Rm:softmax(1):select(1, 1):narrow(1, 1, 4), {0.0626214296, 0.0680027455, 3.07690825e-05,
                                                       3.87690813e-09})
    check(Rm:t():log_softmax(2):select(1, 1):narrow(1, 1, 4), {-2.77064753, -4.48306561, -6.66509962,
                                                               -9.16385937})
    assert.is_true(math.abs(R:softmax(1):sum():item() - 1) < 1e-5)
  end)

  it('in float64, half precision and with dtype=', function()
    local d = A:double():softmax(2)
    assert.are.equal('float64', d.dtype)
    check(d, {0.0735285442, 0.00366077066, 0.895761045, 0.0270496397, 0.256930628, 0.698409858,
              1.16646325e-05, 0.0446478485, 0.000203112454, 0.00150080931, 0.998250758,
              4.53205143e-05}, nil, 1e-7)
    local h = torch.tensor({1.5, 2.25, -3}, {dtype = 'bfloat16'}):softmax(1)
    assert.are.equal('bfloat16', h.dtype)
    check(h, {0.3203125, 0.67578125, 0.00355529785}, nil, 1e-2)
    local i = torch.tensor({1, 2}):softmax(1, {dtype = 'float64'})
    assert.are.equal('float64', i.dtype)
    check(i, {0.268941421, 0.731058579}, nil, 1e-8)
  end)

  it('handles -inf rows, NaN, 0-dim and empty tensors', function()
    check(torch.tensor({-inf, -inf}):softmax(1), {nan, nan})
    check(torch.tensor({1, nan}):softmax(1), {nan, nan})
    check(torch.tensor({0, -inf}):softmax(1), {1, 0})
    check(torch.tensor({0, -inf}):log_softmax(1), {0, -inf})
    check(torch.tensor({-200.0, 0}):softmax(1), {0, 1})
    check(torch.tensor(3.0):softmax(1), {1}, {})
    check(torch.zeros(2, 0):softmax(2), {}, {2, 0})
  end)

  it('raise on ints, a missing dim or a bad dim', function()
    raises(function() I:softmax(1) end, 'softmax', 'floating point', 'int64')
    raises(function() A:softmax() end, 'softmax', 'expects a dim')
    raises(function() A:log_softmax(3) end, 'log_softmax', 'out of range')
  end)
end)

describe('sort and argsort', function()
  it('sort along a dim, ascending or descending', function()
    local v, i = A:sort(2)
    check(v, {-2, 0, 1, 3.5, -6, 2.25, 4, 5, -3, -1.5, 0.5, 7}, {3, 4})
    check(i, {2, 4, 1, 3, 3, 4, 1, 2, 4, 1, 2, 3}, {3, 4})
    v, i = A:sort(1, true)
    check(v, {4, 5, 7, 2.25, 1, 0.5, 3.5, 0, -1.5, -2, -6, -3})
    check(i, {2, 2, 3, 2, 1, 3, 1, 1, 3, 1, 2, 3})
    v, i = T:sort()
    check(v, {-1.5, 1, 4, -2, 0.5, 5, -6, 3.5, 7, -3, 0, 2.25}, {4, 3})
    check(i, {3, 1, 2, 1, 3, 2, 2, 1, 3, 3, 1, 2})
    v, i = T:sort({dim = 1, descending = true})
    check(v, {3.5, 5, 7, 1, 4, 0.5, 0, 2.25, -1.5, -2, -6, -3})
    check(i, {3, 2, 3, 1, 1, 2, 4, 4, 1, 2, 3, 4})
    v, i = B:sort(2, {descending = true})
    check(i, {3, 3, 3, 3, 1, 2, 2, 2, 2, 1, 1, 1, 3, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1, 1}, {2, 3, 4})
    v, i = Rm:sort(2)
    check(v:select(1, 1):narrow(1, 1, 4), {-9.99990177, -9.91778851, -9.88031578, -9.61397457})
    check(i:select(1, 1):narrow(1, 1, 4), {11, 36, 30, 17})
    v, i = I:sort(1)
    check(v, {1, -1, -9, 2, 5, 4, 3, 6, 5})
    check(i, {2, 1, 2, 3, 2, 1, 1, 3, 3})
    assert.are.equal('int64', v.dtype)
  end)

  it('is stable and puts NaN last (first when descending)', function()
    local x = torch.tensor({3, 1, 3, 1})
    local _, i = x:sort()
    check(i, {2, 4, 1, 3})
    _, i = x:sort(1, true)
    check(i, {1, 3, 2, 4})
    local v
    v, i = torch.tensor({1, nan, 3}):sort()
    check(v, {1, 3, nan})
    check(i, {1, 3, 2})
    v, i = torch.tensor({1, nan, 3}):sort(true)
    check(v, {nan, 3, 1})
    check(i, {2, 3, 1})
    v, i = torch.tensor({true, false}):sort()
    check(v, {false, true})
    check(i, {2, 1})
  end)

  it('handles 0-dim and empty tensors', function()
    local v, i = torch.tensor(3.0):sort()
    check(v, {3}, {})
    check(i, {1}, {})
    v, i = torch.zeros(0):sort()
    check(v, {}, {0})
    check(i, {}, {0})
    raises(function() A:sort(3) end, 'sort', 'out of range')
  end)

  it('argsort gives the indices', function()
    check(A:argsort(2), {2, 4, 1, 3, 3, 4, 1, 2, 4, 1, 2, 3}, {3, 4})
    check(torch.argsort(A, 1, true), {2, 2, 3, 2, 1, 3, 1, 1, 3, 1, 2, 3})
  end)
end)

describe('topk, kthvalue, median, mode', function()
  it('topk', function()
    local v, i = A:topk(2)
    check(v, {3.5, 1, 5, 4, 7, 0.5}, {3, 2})
    check(i, {3, 1, 2, 1, 3, 2})
    v, i = A:topk(2, 1, false)
    check(v, {-1.5, -2, -6, -3, 1, 0.5, 3.5, 0}, {2, 4})
    check(i, {3, 1, 2, 3, 1, 3, 1, 1})
    v, i = T:topk(2, 2)
    check(v, {4, 1, 5, 0.5, 7, 3.5, 2.25, 0}, {4, 2})
    check(i, {2, 1, 2, 3, 3, 1, 2, 1})
    v, i = T:topk(2, {dim = 1, largest = false})
    check(v, {-2, -6, -3, 0, 2.25, -1.5}, {2, 3})
    check(i, {2, 3, 4, 4, 4, 1})
    v, i = Rm:topk(3, 1)
    check(v:select(2, 1), {9.9179039, 9.90594959, 9.23493099})
    check(i:select(2, 1), {23, 22, 24})
    v, i = torch.tensor({1, 2, 2, 3}):float():topk(2, {largest = false})
    check(i, {1, 2})
    v = A:topk(0)
    check(v, {}, {3, 0})
    raises(function() torch.tensor({1.0, 2.0}):topk(3) end, 'topk', 'out of range')
    raises(function() A:topk(-1) end, 'topk', 'out of range')
  end)

  it('kthvalue', function()
    local v, i = A:kthvalue(2, 2)
    check(v, {0, 2.25, -1.5}, {3})
    check(i, {4, 4, 1})
    v, i = T:kthvalue(2, 2, true)
    check(v, {1, 0.5, 3.5, 0}, {4, 1})
    check(i, {1, 3, 1, 1}, {4, 1})
    v, i = torch.tensor({{3, 1, 2, nan}}):kthvalue(4, 2)
    check(v, {nan})
    check(i, {4})
    raises(function() torch.tensor({1.0, 2.0}):kthvalue(3) end, 'kthvalue', 'out of range')
    raises(function() torch.tensor({1.0, 2.0}):kthvalue(0) end, 'kthvalue', 'out of range')
  end)

  it('median', function()
    check(A:median(), {0.5}, {})
    check(T:median(), {0.5}, {})
    check(torch.tensor({1.0, 2, 3, 4}):median(), {2})
    check(I:median(), {3}, {})
    check(R:median(), {-0.000301443535})
    local v, i = A:median(1)
    check(v, {1, 0.5, 3.5, 0}, {4})
    check(i, {1, 3, 1, 1})
    v, i = T:median(1, true)
    check(v, {0, 2.25, -1.5}, {1, 3})
    check(i, {4, 4, 1}, {1, 3})
    check(torch.tensor({1, nan, 2}):median(), {nan})
    v, i = torch.tensor({{1, nan, 2, nan}}):median(2)
    check(v, {nan})
    check(i, {2})
    check(torch.zeros(0):median(), {nan})
    raises(function() torch.zeros(2, 0):median(2) end, 'median', 'empty')
  end)

  it('mode', function()
    local v, i = torch.tensor({1, 2, 2, 3, 3, 1}):mode()
    check(v, {1}, {})
    check(i, {6}, {})
    v, i = torch.tensor({3, 3, 1, 1, 2}):mode()
    check(v, {1})
    check(i, {4})
    v, i = torch.tensor({{1, 2, 2}, {5, 5, 4}}):mode(2, true)
    check(v, {2, 5}, {2, 1})
    check(i, {3, 2}, {2, 1})
    raises(function() torch.zeros(2, 0):mode() end, 'mode', 'empty')
  end)
end)

describe('equal, allclose, isclose', function()
  it('equal compares shape and values', function()
    assert.is_true(torch.equal(A, A:clone()))
    assert.is_true(A:equal(T:t()))
    assert.is_false(torch.equal(A, A + 1))
    assert.is_true(torch.equal(torch.tensor({1, 2}), torch.tensor({1.0, 2.0})))
    assert.is_false(torch.equal(torch.tensor({1, 2}), torch.tensor({{1, 2}})))
    assert.is_false(torch.equal(torch.tensor({nan}), torch.tensor({nan})))
    assert.is_true(torch.equal(torch.zeros(0), torch.zeros(0)))
    raises(function() torch.equal(A, 1) end, 'equal', 'must be a tensor')
  end)

  it('allclose and isclose', function()
    assert.is_true(torch.allclose(A, A * 1.000001))
    assert.is_false(torch.allclose(A, A + 1e-3))
    assert.is_true(torch.allclose(A, A + 1e-3, {atol = 1e-2}))
    assert.is_true(torch.allclose(A, A * 1.001, 1e-2))
    assert.is_false(torch.allclose(torch.tensor({1.0, 2.0}), torch.tensor({1.0})))
    assert.is_false(torch.allclose(torch.tensor({1, nan}), torch.tensor({1, nan})))
    assert.is_true(torch.allclose(torch.tensor({1, nan}), torch.tensor({1, nan}), {equal_nan = true}))
    check(torch.isclose(torch.tensor({1.0, nan, inf, 2.0, -inf}), torch.tensor({1.000005, nan, inf, 2.1, inf})),
          {true, false, true, false, false})
    raises(function() torch.allclose(torch.tensor({1}), torch.tensor({1.0})) end, 'isclose', 'dtypes must match')
    raises(function() torch.allclose(A, torch.zeros(2)) end, 'isclose', 'cannot broadcast')
  end)
end)

describe('threads', function()
  it('never change a result', function()
    local n = torch.getnumthreads()
    local x = torch.ones(300000):cumsum(1):sin() * 3
    local m = x:view(600, 500)
    local wide = x:narrow(1, 1, 40 * 4100):view(40, 4100)    -- three tiles of columns
    local function run()
      return {x:sum(), x:var(), x:norm(3), x:logsumexp(1), m:sum(1), m:sum(2), m:std(1),
              m:softmax(2), m:log_softmax(1), m:cumsum(1), (m:max(1)), (select(2, m:min(2))),
              x:argmax(), (m:sort(1)), wide:sum(1), wide:var(1), (select(2, wide:max(1)))}
    end
    torch.setnumthreads(1)
    local one = run()
    torch.setnumthreads(2)
    local two = run()
    torch.setnumthreads(n)
    for k = 1, #one do assert.is_true(torch.equal(one[k], two[k]), 'result ' .. k) end
  end)
end)
