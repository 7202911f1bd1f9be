-- index_spec.lua: indexing with tensors -- index_select/add/copy/fill,
-- gather/scatter, masks, x[mask] and x[idx], where and nonzero. Expected
-- values were computed with PyTorch 2.15, indices shifted to 1-based.
local torch = require 'torch'

-- t has the given shape, dtype (when given) and row-major values
local function check(t, shape, values, dtype)
  local size = t:size()
  assert.are.same(shape, {table.unpack(size)})
  if dtype then assert.are.equal(dtype, t.dtype) end
  local got = t:_flat_values()
  assert.are.equal(#values, #got)
  for i = 1, #values do
    local want = values[i]
    if want ~= want then
      assert.is_true(got[i] ~= got[i], 'element ' .. i .. ' should be NaN')
    else
      assert.is_true(got[i] == want, ('element %d: expected %s, got %s'):format(i, tostring(want), tostring(got[i])))
    end
  end
end

-- f() raises an error whose message contains text
local function raises(text, f)
  local ok, err = pcall(f)
  assert.is_false(ok, 'expected an error containing: ' .. text)
  assert.is_truthy(tostring(err):find(text, 1, true), 'expected "' .. text .. '" in: ' .. tostring(err))
end

-- a float32 tensor of a, a + step, ..., b (torch.range lives in another area)
local function range(a, b, step)
  local values = {}
  for v = a, b, step or 1 do values[#values + 1] = v end
  return torch.tensor(values, {dtype = 'float32'})
end

local function x34() return range(1, 12):view(3, 4) end

describe('index_select', function()
  it('selects along each dim, with repeats and negative indices', function()
    local x = x34()
    check(x:index_select(1, torch.tensor({3, 1, 3})), {3, 4}, {9, 10, 11, 12, 1, 2, 3, 4, 9, 10, 11, 12}, 'float32')
    check(x:index_select(2, torch.tensor({4, -3})), {3, 2}, {4, 2, 8, 6, 12, 10})
    check(torch.index_select(x, -1, {4, 2}), {3, 2}, {4, 2, 8, 6, 12, 10})
    check(x:index(1, torch.LongTensor({2})), {1, 4}, {5, 6, 7, 8})
  end)

  it('works on views, int32 indices and Lua tables', function()
    local x = x34()
    check(x:t():index_select(2, torch.tensor({2, 3}, {dtype = 'int32'})), {4, 2}, {5, 9, 6, 10, 7, 11, 8, 12})
    check(x:t():index_select(2, {2, 3}), {4, 2}, {5, 9, 6, 10, 7, 11, 8, 12})
    local strided_index = torch.tensor({3, 9, 1, 9}):narrow(1, 1, 4):view(2, 2):select(2, 1)
    check(x:index_select(1, strided_index), {2, 4}, {9, 10, 11, 12, 1, 2, 3, 4})
    -- whole rows of a view whose rows are strided (the columns of x)
    check(x:t():index_select(1, {4, 1}), {2, 3}, {4, 8, 12, 1, 5, 9})
    -- whole rows of a wide byte matrix, as a data loader gathers a batch of images
    local img = torch.arange(0, 5 * 300):remainder(251):to('uint8'):view(5, 300)
    local rows = img:index_select(1, {5, 2, 5})
    for r, src in ipairs({5, 2, 5}) do
      for c = 1, 300, 37 do assert.are.equal(((src - 1) * 300 + c - 1) % 251, rows[r][c]) end
    end
  end)

  it('handles every dtype', function()
    local xi = torch.tensor({{1, -2, 3}, {4, 5, -6}}, {dtype = 'int8'})
    check(xi:index_select(2, {3, 3, 1}), {2, 3}, {3, 3, 1, -6, -6, 4}, 'int8')
    local xb = torch.tensor({{true, false}, {false, true}})
    check(xb:index_select(1, {2, 1, 2}), {3, 2}, {false, true, true, false, false, true}, 'bool')
    local xh = torch.tensor({0.5, -1.5, 2.25}, {dtype = 'float16'})
    check(xh:index_select(1, {3, 1}), {2}, {2.25, 0.5}, 'float16')
    for _, dtype in ipairs({'float64', 'bfloat16', 'uint8', 'int16', 'int32', 'int64'}) do
      local x = torch.tensor({{1, 2}, {3, 4}}, {dtype = dtype})
      check(x:index_select(1, {2}), {1, 2}, {3, 4}, dtype)
    end
  end)

  it('takes empty and 0-dim indices and 0-dim tensors', function()
    check(x34():index_select(1, torch.LongTensor(0)), {0, 4}, {})
    check(range(0, 4):index_select(1, torch.tensor(3)), {1}, {2})
    check(torch.tensor(5.5):index_select(1, torch.tensor(1)), {}, {5.5})
  end)

  it('raises on bad indices, before reading anything', function()
    local x = range(1, 5)
    raises('index_select: index 7 out of range for dim 1 of size 5', function() x:index_select(1, {7}) end)
    raises('index_select: index -6 out of range for dim 1 of size 5', function() x:index_select(1, {-6}) end)
    raises('index 0 out of range for dim 1 of size 5 (indices are 1-based)', function() x:index_select(1, {0}) end)
    raises('index_select: index must be an int64 or int32 tensor, got float32',
      function() x:index_select(1, torch.tensor({1.0})) end)
    raises('index_select: index must be 0-D or 1-D, got shape 1x2', function() x:index_select(1, torch.tensor({{1, 2}})) end)
    raises('index_select: dimension 2 out of range', function() x:index_select(2, {1}) end)
    raises('index_select: index entry 2 is not an integer', function() x:index_select(1, {1, 1.5}) end)
    raises('index_select: index 1 out of range for dim 1 of size 0', function() torch.zeros(0):index_select(1, {1}) end)
    raises('a 0-dim tensor takes exactly one index', function() torch.tensor(1):index_select(1, {1, 1}) end)
  end)
end)

describe('index_add_, index_copy_, index_fill_', function()
  it('index_add_ accumulates repeats, with alpha', function()
    local a = torch.zeros(3, 4)
    local r = a:index_add_(1, torch.tensor({1, 3, 1}), range(0, 11):view(3, 4), {alpha = 2})
    assert.are.equal(a, r)
    check(a, {3, 4}, {16, 20, 24, 28, 0, 0, 0, 0, 8, 10, 12, 14})
    local ai = torch.zeros(5, {dtype = 'int64'})
    ai:index_add_(1, torch.tensor({5, 5, 2}), torch.tensor({1, 2, 3}), {alpha = 3})
    check(ai, {5}, {0, 9, 0, 0, 9}, 'int64')
  end)

  it('index_add_ writes through a view', function()
    local base = torch.ones(4, 3)
    local a = base:t()
    a:index_add_(2, torch.tensor({4, 1}), torch.tensor({{1.0, 2}, {3, 4}, {5, 6}}))
    check(a, {3, 4}, {3, 1, 1, 2, 5, 1, 1, 4, 7, 1, 1, 6})
    check(base, {4, 3}, {3, 5, 7, 1, 1, 1, 1, 1, 1, 2, 4, 6})
  end)

  it('index_copy_ and index_fill_', function()
    local c = torch.zeros(3, 3)
    c:index_copy_(1, torch.tensor({3, 1}), torch.tensor({{1.0, 2, 3}, {4, 5, 6}}))
    check(c, {3, 3}, {4, 5, 6, 0, 0, 0, 1, 2, 3})
    local d = torch.zeros(3, 3, {dtype = 'float64'})
    d:indexCopy(2, torch.tensor({2}), torch.tensor({{7}, {8}, {9}}, {dtype = 'float64'}))
    check(d, {3, 3}, {0, 7, 0, 0, 8, 0, 0, 9, 0}, 'float64')
    local f = torch.zeros(3, 3, {dtype = 'int32'})
    f:index_fill_(2, torch.tensor({1, 3}), -4)
    check(f, {3, 3}, {-4, 0, -4, -4, 0, -4, -4, 0, -4}, 'int32')
    local g = torch.zeros(2, 3)
    g:t():index_fill_(2, {2}, 2.5)
    check(g, {2, 3}, {0, 0, 0, 2.5, 2.5, 2.5})
    local big = torch.zeros(2, {dtype = 'int64'}):index_fill_(1, {2}, math.maxinteger)
    assert.are.equal(math.maxinteger, big[2])
  end)

  it('out-of-place forms leave self alone', function()
    local x = torch.zeros(3)
    check(x:index_add(1, {2}, torch.tensor({5.0})), {3}, {0, 5, 0})
    check(torch.index_copy(x, 1, {3}, torch.tensor({6.0})), {3}, {0, 0, 6})
    check(x:index_fill(1, {1, 2}, 1), {3}, {1, 1, 0})
    check(x, {3}, {0, 0, 0})
  end)

  it('raises on mismatched sources and bad indices', function()
    local x = torch.zeros(3, 4)
    raises('index_add_: self (float32) and source (float64) must have the same dtype',
      function() x:index_add_(1, {1}, torch.zeros(1, 4, {dtype = 'float64'})) end)
    raises('index_copy_: source must have shape 2x4', function() x:index_copy_(1, {1, 2}, torch.zeros(2, 3)) end)
    raises('index_fill_: index 5 out of range for dim 2 of size 4', function() x:index_fill_(2, {5}, 1) end)
    raises('index_fill_: value must be a number or a 0-dim tensor', function() x:index_fill_(2, {1}, torch.zeros(2)) end)
    check(x, {3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
  end)
end)

describe('gather and scatter', function()
  it('gathers along either dim, on views and in 3-D', function()
    local g = torch.tensor({{1, 2, 3}, {4, 5, 6}})
    check(g:gather(2, torch.tensor({{3, 1}, {2, 2}})), {2, 2}, {3, 1, 5, 5}, 'int64')
    check(torch.gather(g, 1, torch.tensor({{2, 1, 2}})), {1, 3}, {4, 2, 6})
    check(g:t():gather(1, torch.tensor({{2, 2}, {1, 3}})), {2, 2}, {2, 5, 1, 6})
    local g3 = range(0, 23):view(2, 3, 4)
    check(g3:gather(2, torch.tensor({{{3, 1, 2, 3}}, {{1, 1, 3, 2}}})), {2, 1, 4}, {8, 1, 6, 11, 12, 13, 22, 19})
    check(g:gather(2, torch.tensor({{-1}, {-3}})), {2, 1}, {3, 4})
  end)

  it('gather raises on bad shapes and indices', function()
    local g = torch.zeros(2, 3)
    raises('gather: index must have as many dims as self (2), got 1', function() g:gather(2, torch.tensor({1})) end)
    raises('gather: index 3x1 is larger than self 2x3 in dim 1', function() g:gather(2, torch.tensor({{1}, {2}, {2}})) end)
    raises('gather: index 4 out of range for dim 2 of size 3', function() g:gather(2, torch.tensor({{1}, {4}})) end)
  end)

  it('scatter_ from a tensor or a value; repeated indices keep the last', function()
    local s = torch.zeros(3, 4)
    s:scatter_(2, torch.tensor({{4, 1}, {2, 3}, {1, 1}}), torch.tensor({{1.0, 2, 9}, {3, 4, 9}, {5, 6, 9}}))
    check(s, {3, 4}, {2, 0, 0, 1, 0, 3, 4, 0, 6, 0, 0, 0})
    local v = torch.zeros(2, 4):scatter_(2, torch.tensor({{1}, {4}}), 7)
    check(v, {2, 4}, {7, 0, 0, 0, 0, 0, 0, 7})
  end)

  it('scatter_add_, reduce=add and the out-of-place forms', function()
    local s = torch.ones(3, 2)
    s:scatter_add_(1, torch.tensor({{1, 2}, {1, 2}, {3, 3}}), torch.tensor({{1.0, 2}, {3, 4}, {5, 6}}))
    check(s, {3, 2}, {5, 1, 1, 7, 6, 7})
    local r = torch.zeros(3, {dtype = 'int64'}):scatter_(1, torch.tensor({2, 2, 3}), torch.tensor({5, 6, 7}), {reduce = 'add'})
    check(r, {3}, {0, 11, 7})
    local z = torch.zeros(3)
    check(z:scatter(1, torch.tensor({3}), 1.5), {3}, {0, 0, 1.5})
    check(torch.scatter_add(z, 1, torch.tensor({1, 1}), torch.tensor({1.0, 2.0})), {3}, {3, 0, 0})
    check(z, {3}, {0, 0, 0})
    -- PyTorch 2.15: a 0-dim tensor is a value; a value with reduce='add' adds at every index
    check(z:scatter(1, torch.tensor({2}), torch.tensor(2.0)), {3}, {0, 2, 0})
    check(torch.zeros(2, 3):scatter(2, torch.tensor({{1}, {3}}), 5.0, {reduce = 'add'}), {2, 3}, {5, 0, 0, 0, 0, 5})
    check(torch.zeros(3):scatter(1, torch.tensor({2, 2}), 1.5, {reduce = 'add'}), {3}, {0, 3, 0})
    -- an out-of-place form's error names it as called
    raises('index_add: index 5 out of range for dim 1 of size 3',
      function() torch.zeros(3):index_add(1, torch.tensor({5}), torch.ones(1)) end)
    raises('scatter: index 5 out of range for dim 1 of size 3',
      function() torch.zeros(3):scatter(1, torch.tensor({5}), 1.0) end)
  end)

  it('scatter writes through a transposed view', function()
    local base = torch.zeros(2, 3)
    base:t():scatter_(1, torch.tensor({{3, 1}}), torch.tensor({{1.0, 2.0}}))
    check(base, {2, 3}, {0, 0, 1, 2, 0, 0})
  end)

  it('scatter raises on bad dtypes, shapes and indices', function()
    local s = torch.zeros(2, 2)
    raises('scatter_: self (float32) and src (float64) must have the same dtype',
      function() s:scatter_(1, torch.tensor({{1, 1}}), torch.zeros(1, 2, {dtype = 'float64'})) end)
    raises('scatter_: index 1x3 is larger than self 2x2 in dim 2',
      function() s:scatter_(1, torch.tensor({{1, 1, 1}}), torch.zeros(1, 3)) end)
    raises('scatter_add_: index 1x2 is larger than src 1x1 in dim 2',
      function() s:scatter_add_(1, torch.tensor({{1, 1}}), torch.zeros(1, 1)) end)
    raises('scatter_: index 3 out of range for dim 1 of size 2', function() s:scatter_(1, torch.tensor({{3, 1}}), 1) end)
    raises("scatter_: reduce must be 'add'", function() s:scatter_(1, torch.tensor({{1, 1}}), 2, {reduce = 'multiply'}) end)
    check(s, {2, 2}, {0, 0, 0, 0})
  end)
end)

describe('masks', function()
  local m = torch.tensor({{true, false, true, false}, {false, false, false, false}, {true, true, true, true}})

  it('masked_select, broadcasting and on views', function()
    local x = x34()
    check(x:masked_select(m), {6}, {1, 3, 9, 10, 11, 12})
    check(torch.masked_select(x, torch.tensor({false, true, true, false})), {6}, {2, 3, 6, 7, 10, 11})
    check(x:t():maskedSelect(m:t()), {6}, {1, 9, 10, 3, 11, 12})
    check(x:masked_select(torch.zeros(3, 4, {dtype = 'bool'})), {0}, {})
  end)

  it('masked_fill broadcasts; masked_fill_ keeps self\'s shape', function()
    check(torch.zeros(3):masked_fill(torch.tensor({{true}, {false}}), 1), {2, 3}, {1, 1, 1, 0, 0, 0})
    local y = torch.zeros(2, 3)
    y:masked_fill_(torch.tensor({true, false, true}), -1)
    check(y, {2, 3}, {-1, 0, -1, -1, 0, -1})
    check(torch.tensor({1, 2, 3}):masked_fill(torch.tensor({true, false, true}), 2.7), {3}, {2, 2, 2}, 'int64')
    check(torch.zeros(2, {dtype = 'bool'}):masked_fill(torch.tensor({false, true}), true), {2}, {false, true})
    local base = torch.zeros(2, 3)
    base:t():masked_fill_(torch.tensor({{true, false}, {false, false}, {false, true}}), torch.tensor(4.0))
    check(base, {2, 3}, {4, 0, 0, 0, 0, 4})
    raises('masked_fill_: mask of shape 2x1 cannot broadcast to self\'s shape 3',
      function() torch.zeros(3):masked_fill_(torch.tensor({{true}, {false}}), 1) end)
    raises('masked_fill: value must be a number or a 0-dim tensor',
      function() torch.zeros(3):masked_fill(torch.tensor({true, false, true}), torch.tensor({5.0})) end)
  end)

  it('masked_scatter_ takes the source in row-major order', function()
    local ms = torch.zeros(2, 3)
    ms:masked_scatter_(torch.tensor({{true, false, true}, {false, true, false}}), torch.tensor({{1.0, 2}, {3, 4}}))
    check(ms, {2, 3}, {1, 0, 2, 0, 3, 0})
    local mb = torch.zeros(2, 3):maskedCopy(torch.tensor({false, true, true}), range(1, 6))
    check(mb, {2, 3}, {0, 1, 2, 0, 3, 4})
    raises('masked_scatter_: source has 1 elements but the mask selects 2',
      function() torch.zeros(3):masked_scatter_(torch.tensor({true, false, true}), torch.tensor({1.0})) end)
  end)

  it('accepts uint8 masks with Torch7 meaning; rejects other dtypes', function()
    local x = x34()
    check(x:masked_select(m:byte()), {6}, {1, 3, 9, 10, 11, 12})
    check(x[torch.ByteTensor({0, 2, 0})], {1, 4}, {5, 6, 7, 8})
    raises('masked_select: mask must be a bool (or uint8) tensor, got int64',
      function() x:masked_select(torch.tensor({1, 0, 1, 0})) end)
    raises('index: a tensor key must be int64 or int32 (indices) or bool or uint8 (a mask), got float32',
      function() return x[torch.tensor({1.0})] end)
  end)
end)

describe('x[mask] and x[idx]', function()
  it('x[mask] with a full mask gives a 1-D tensor', function()
    local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
    check(x[x:gt(2)], {4}, {3, 4, 5, 6}, 'int64')
    check(x:t()[x:t():lt(3)], {2}, {1, 2})
    check(x[x:gt(10)], {0}, {})
  end)

  it('x[mask] with a leading-dims mask gives rows', function()
    check(x34()[torch.tensor({true, false, true})], {2, 4}, {1, 2, 3, 4, 9, 10, 11, 12})
    check(torch.tensor(5.0)[torch.tensor(true)], {1}, {5})
    check(torch.tensor(5.0)[torch.tensor(false)], {0}, {})
    raises('index: mask of shape 3x3 does not match the leading dims of the indexed tensor 3x4',
      function() return x34()[torch.ones(3, 3, {dtype = 'bool'})] end)
    raises('index: mask of shape 4 does not match the leading dims of the indexed tensor 3x4',
      function() return x34()[torch.tensor({true, false, true, true})] end)
  end)

  it('x[mask] = value: numbers, tensors, broadcast rows', function()
    local y = x34()
    y[torch.tensor({true, false, true})] = torch.tensor({10.0, 20, 30, 40})
    check(y, {3, 4}, {10, 20, 30, 40, 5, 6, 7, 8, 10, 20, 30, 40})
    y = x34()
    y[torch.tensor({false, true, false})] = 0
    check(y, {3, 4}, {1, 2, 3, 4, 0, 0, 0, 0, 9, 10, 11, 12})
    y = x34()
    y[y:gt(6)] = torch.tensor({-1, -2, -3, -4, -5, -6})      -- int64 values convert
    check(y, {3, 4}, {1, 2, 3, 4, 5, 6, -1, -2, -3, -4, -5, -6}, 'float32')
    local base = torch.zeros(2, 3)
    local v = base:t()
    v[v:ge(0)] = range(1, 6)
    check(base, {2, 3}, {1, 3, 5, 2, 4, 6})
    raises('index assignment: value of shape 2 cannot broadcast to the indexed shape 3',
      function() local z = torch.zeros(3); z[z:eq(0)] = torch.tensor({1.0, 2.0}) end)
  end)

  it('x[idx] selects along dim 1 with any index shape', function()
    local x = x34()
    check(x[torch.tensor({{3, 1}, {2, 3}})], {2, 2, 4}, {9, 10, 11, 12, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
    check(x[torch.tensor({-1, 1})], {2, 4}, {9, 10, 11, 12, 1, 2, 3, 4})
    check(x[torch.tensor({2}, {dtype = 'int32'})], {1, 4}, {5, 6, 7, 8})
    check(range(1, 5)[torch.tensor(2)], {}, {2})
    raises('index: index 4 out of range for dim 1 of size 3', function() return x[torch.tensor({4})] end)
    raises('index: cannot index a 0-dim tensor with an index tensor', function() return torch.tensor(1)[torch.tensor({1})] end)
  end)

  it('x[idx] = value', function()
    local y = x34()
    y[torch.tensor({1, 3})] = torch.tensor({{1.0, 2, 3, 4}})
    check(y, {3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4})
    y = x34()
    y[torch.tensor({2})] = 5
    check(y, {3, 4}, {1, 2, 3, 4, 5, 5, 5, 5, 9, 10, 11, 12})
    y = x34()
    y:t()[torch.tensor({-1})] = 0
    check(y, {3, 4}, {1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0})
    raises('index assignment: index 0 out of range for dim 1 of size 3 (indices are 1-based)',
      function() y[torch.tensor({0})] = 1 end)
    raises('index assignment: value of shape 3 cannot broadcast to the indexed shape 1x4',
      function() y[torch.tensor({1})] = torch.zeros(3) end)
  end)
end)

describe('where', function()
  it('broadcasts condition and operands', function()
    local c = torch.tensor({{true, false, true}})
    check(torch.where(c, torch.tensor({{1.0}, {2.0}}), torch.tensor({10.0, 20, 30})), {2, 3}, {1, 20, 1, 2, 20, 2})
    check(torch.where(c:t(), 1, torch.tensor({0, 5})), {3, 2}, {1, 1, 0, 5, 1, 1}, 'int64')
  end)

  it('promotes like PyTorch', function()
    local c = torch.tensor({true, false})
    local i32 = torch.tensor({1, 2}, {dtype = 'int32'})
    check(torch.where(c, i32, 5.5), {2}, {1, 5.5}, 'float32')
    check(torch.where(c, i32, 5), {2}, {1, 5}, 'int32')
    check(torch.where(c, i32, torch.tensor(5.5, {dtype = 'float64'})), {2}, {1, 5.5}, 'float64')
    check(torch.where(c, 1.0, 0), {2}, {1, 0}, 'float32')
    check(torch.where(c, 1, 0), {2}, {1, 0}, 'int64')
    check(torch.where(c, true, false), {2}, {true, false}, 'bool')
    local u8 = torch.tensor({{1}, {0}}, {dtype = 'uint8'})
    check(torch.where(u8, torch.tensor({1.5, 2.5}, {dtype = 'float16'}), torch.tensor({-1, -2}, {dtype = 'float64'})),
      {2, 2}, {1.5, 2.5, -1, -2}, 'float64')
  end)

  -- contiguous runs take branch-free loops (tensor/tensor, scalar/tensor, tensor/scalar);
  -- strided and broadcast operands the general walk: all must agree with arithmetic
  it('selects elementwise on contiguous, scalar, strided and broadcast operands of every size', function()
    torch.manual_seed(4)
    for _, dtype in ipairs({'float32', 'float64', 'int64', 'int16', 'uint8'}) do
      local m = torch.rand(37, 41):gt(0.5)
      local a = torch.randint(0, 100, {37, 41}):to(dtype)
      local b = torch.randint(0, 100, {41, 37}):to(dtype):t()           -- strided
      local mf = m:to(dtype)
      local function same(want, got) assert.are.same(want:totable(), got:totable()) end
      same(a * mf + b * (1 - mf), torch.where(m, a, b))
      same(a * mf + b:contiguous() * (1 - mf), torch.where(m, a, b:contiguous()))
      same(mf * 7 + b * (1 - mf), torch.where(m, 7, b:contiguous()))
      same(a * mf + (1 - mf) * 3, torch.where(m, a, 3))
      same(a * mf + (1 - mf) * b[1], torch.where(m, a, b[1]))         -- broadcast row
      local f = a:clone()
      f:masked_fill_(m, 9)
      same(mf * 9 + a * (1 - mf), f)
    end
  end)

  it('x:where(cond, y) is torch.where(cond, x, y)', function()
    check(torch.tensor({1.0, 2, 3}):where(torch.tensor({true, false, true}), torch.tensor(0.0)), {3}, {1, 0, 3})
  end)

  it('raises on bad conditions and shapes', function()
    raises('where: condition must be a bool (or uint8) tensor, got float32',
      function() torch.where(torch.zeros(2), 1, 0) end)
    raises('where: shapes 2 and 3 cannot broadcast', function() torch.where(torch.tensor({true, false}), torch.zeros(3), 0) end)
    raises('where: argument 3 must be a tensor, a number or a boolean, got no value',
      function() torch.where(torch.tensor({true}), 1) end)
  end)
end)

describe('nonzero and where(cond)', function()
  local x = torch.tensor({{0, 1, 0}, {2, 0, 3}})

  it('gives N x D 1-based indices in row-major order', function()
    check(x:nonzero(), {3, 2}, {1, 2, 2, 1, 2, 3}, 'int64')
    check(x:t():nonzero(), {3, 2}, {1, 2, 2, 1, 3, 2})
    check(torch.nonzero(torch.tensor({0.0, -0.0, 0 / 0, 1})), {2, 1}, {3, 4})
    check(torch.tensor(3):nonzero(), {1, 0}, {})
    check(torch.zeros(2, 0):nonzero(), {0, 2}, {})
    check(torch.tensor({0, 7}, {dtype = 'float16'}):nonzero(), {1, 1}, {2})
  end)

  it('as_tuple and where(cond) give one index tensor per dim', function()
    local t = x:t():nonzero({as_tuple = true})
    assert.are.equal(2, #t)
    check(t[1], {3}, {1, 2, 3}, 'int64')
    check(t[2], {3}, {2, 1, 2})
    local w = torch.where(x:t())
    check(w[1], {3}, {1, 2, 3})
    check(w[2], {3}, {2, 1, 2})
    local s = torch.where(torch.tensor(3))
    assert.are.equal(1, #s)
    check(s[1], {1}, {1})
    check(torch.where(torch.zeros(0))[1], {0}, {})
  end)
end)

describe('large tensors (threaded kernels)', function()
  it('agree with closed forms', function()
    local n = 100000
    local x = range(1, n)
    local rev = range(n, 1, -1):long()
    local y = x:index_select(1, rev)
    assert.are.equal(n, y[1])
    assert.are.equal(1, y[n])
    assert.are.equal(n - 1233, y[1234])
    local even = x:remainder(2):eq(0)
    local sel = x[even]
    assert.are.equal(n / 2, sel:size(1))
    assert.are.equal(2468, sel[1234])
    local w = torch.where(even, x, -x)
    assert.are.equal(-1233, w[1233])
    assert.are.equal(1234, w[1234])
    local filled = x:masked_fill(even, 0)
    assert.are.equal(0, filled[n])
    assert.are.equal(n - 1, filled[n - 1])
    local g = x:view(1000, 100):gather(2, torch.ones(1000, 3, {dtype = 'int64'}) * 100)
    assert.are.equal(1000 * 100, g[{1000, 3}])
  end)
end)
