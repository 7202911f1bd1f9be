-- shape_spec.lua: cat, stack, split, chunk, flatten, unflatten, repeat, flip,
-- roll, tril/triu, movedim, and the parametric elementwise ops (clamp,
-- softplus, leaky_relu, addcmul/addcdiv, lerp). Expected values come from
-- PyTorch 2.15; results that depend on rounding order (a fused multiply-add
-- or not) are compared within a tolerance.
local torch = require 'torch'

local nan = 0 / 0

-- 0, 1, ..., n-1 as an int64 tensor of the given shape
local function iota(...)
  local shape, n = {...}, 1
  for _, s in ipairs(shape) do n = n * s end
  local values = {}
  for i = 1, n do values[i] = i - 1 end
  return torch.tensor(values):view(table.unpack(shape))
end

-- row-major values of any tensor, contiguous or not
local function values(x)
  local flat, out = x:reshape(-1), {}
  for i = 1, flat:numel() do out[i] = flat[i] end
  return out
end

-- x has this dtype, shape and values (relative tolerance tol when given)
local function check(x, dtype, shape, expected, tol)
  assert.are.equal(dtype, x.dtype)
  assert.are.same(shape, x:size():totable())
  local got = values(x)
  assert.are.equal(#expected, #got)
  for i, e in ipairs(expected) do
    local g = got[i]
    if e ~= e then
      assert.is_true(g ~= g, ('entry %d: expected nan, got %s'):format(i, tostring(g)))
    elseif tol then
      assert.is_true(math.abs(g - e) <= tol * math.max(1, math.abs(e)),
                     ('entry %d: expected %.9g, got %.9g'):format(i, e, g))
    else
      assert.are.equal(e, g, ('entry %d'):format(i))
    end
  end
end

-- the sum of a tensor's values, in Lua
local function total(x)
  local sum = 0
  for _, v in ipairs(values(x)) do sum = sum + v end
  return sum
end

-- fn(...) raises an error whose message contains each of the strings
local function fails(fn, ...)
  local ok, err = pcall(fn)
  assert.is_false(ok)
  for _, s in ipairs({...}) do
    assert.truthy(tostring(err):find(s, 1, true), ('"%s" not in: %s'):format(s, tostring(err)))
  end
end

describe('cat', function()
  it('joins along a dim, PyTorch list form and Torch7 form', function()
    local x = iota(2, 3)
    check(torch.cat({x, x * 10}, 1), 'int64', {4, 3}, {0, 1, 2, 3, 4, 5, 0, 10, 20, 30, 40, 50})
    check(torch.cat({x, x * 10}, 2), 'int64', {2, 6}, {0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50})
    check(torch.cat(x, x * 10, 2), 'int64', {2, 6}, {0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50})
    check(torch.cat(x, x * 10), 'int64', {4, 3}, {0, 1, 2, 3, 4, 5, 0, 10, 20, 30, 40, 50})
    check(torch.cat({x, x}, {dim = -1}), 'int64', {2, 6}, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5})
    check(torch.concat({x}, 1), 'int64', {2, 3}, {0, 1, 2, 3, 4, 5})
  end)

  it('handles non-contiguous inputs and promotes dtypes', function()
    local x = iota(2, 3)
    local y = torch.tensor({{7}, {8}, {9}}, {dtype = 'int32'})
    check(torch.cat({x:t():double(), y}, -1), 'float64', {3, 3}, {0, 3, 7, 1, 4, 8, 2, 5, 9})
    check(torch.cat({x:t(), y}, 2), 'int64', {3, 3}, {0, 3, 7, 1, 4, 8, 2, 5, 9})
    check(torch.cat({torch.tensor({200}, {dtype = 'uint8'}), torch.tensor({-3}, {dtype = 'int8'})}),
          'int16', {2}, {200, -3})
    check(torch.cat({torch.tensor({true}), torch.tensor({false, true})}), 'bool', {3}, {true, false, true})
    check(torch.cat({torch.tensor({0.1, 0.2}):half(), torch.tensor({1 / 3}):half()}), 'float16', {3},
          {0.0999755859375, 0.199951171875, 0.333251953125})
  end)

  it('skips empty 1-D tensors and keeps zero-size dims', function()
    local x = iota(2, 2)
    check(torch.cat({torch.tensor({}), x}), 'float32', {2, 2}, {0, 1, 2, 3})
    check(torch.cat({torch.zeros(0), torch.zeros(0)}), 'float32', {0}, {})
    check(torch.cat({torch.zeros(2, 0), torch.ones(2, 3)}, 2), 'float32', {2, 3}, {1, 1, 1, 1, 1, 1})
    check(torch.cat({torch.zeros(0, 3), torch.ones(1, 3)}, 1), 'float32', {1, 3}, {1, 1, 1})
  end)

  it('is one pass over many small tensors', function()
    local parts = {}
    for i = 1, 500 do parts[i] = torch.tensor({i - 1, -(i - 1)}) end
    local r = torch.cat(parts)
    assert.are.same({1000}, r:size():totable())
    assert.are.equal(499, r[999])
    assert.are.equal(-499, r[1000])
    local rows = torch.cat(parts, 1):view(500, 2)
    assert.are.equal(-250, rows[251][2])
  end)

  it('splits large copies across threads with the same result', function()
    local a, b = torch.ones(300, 200), torch.zeros(300, 100)
    local r = torch.cat({a, b:t():contiguous():t()}, 2)
    assert.are.same({300, 300}, r:size():totable())
    assert.are.equal(1, r[300][200])
    assert.are.equal(0, r[300][201])
    assert.are.equal(200 * 300, total(r))
  end)

  it('raises naming the shapes and the dim', function()
    fails(function() torch.cat({torch.zeros(2, 3), torch.zeros(3, 3)}, 2) end,
          'cat:', '2x3', '3x3', 'dim 2')
    fails(function() torch.cat({torch.zeros(2, 3), torch.zeros(3)}, 1) end, 'same number of dims', '2x3')
    fails(function() torch.cat({torch.tensor(1), torch.tensor(2)}) end, 'zero-dimensional')
    fails(function() torch.cat({}) end, 'non-empty')
    fails(function() torch.cat({torch.zeros(2)}, 3) end, 'cat: dimension 3 out of range')
    fails(function() torch.cat({torch.zeros(2), 5}) end, 'entry 2 of the list must be a tensor')
    fails(function() torch.cat({torch.zeros(2)}, 0) end, '1-based')
  end)
end)

describe('stack', function()
  it('joins along a new dim', function()
    local x = iota(2, 3)
    check(torch.stack({x, x * 10}), 'int64', {2, 2, 3}, {0, 1, 2, 3, 4, 5, 0, 10, 20, 30, 40, 50})
    check(torch.stack({x, x * 10}, 2), 'int64', {2, 2, 3}, {0, 1, 2, 0, 10, 20, 3, 4, 5, 30, 40, 50})
    check(torch.stack({x, x * 10}, -1), 'int64', {2, 3, 2}, {0, 0, 1, 10, 2, 20, 3, 30, 4, 40, 5, 50})
    check(torch.stack({x:t(), x:t()}, 3), 'int64', {3, 2, 2}, {0, 0, 3, 3, 1, 1, 4, 4, 2, 2, 5, 5})
    check(torch.stack({torch.tensor({1, 2}, {dtype = 'int32'}), torch.tensor({0.5, 1.5})}), 'float32',
          {2, 2}, {1, 2, 0.5, 1.5})
    check(torch.stack({torch.tensor(1.5), torch.tensor(2.5)}), 'float32', {2}, {1.5, 2.5})
  end)

  it('raises on unequal shapes and bad dims', function()
    fails(function() torch.stack({torch.zeros(2, 3), torch.zeros(2)}) end, 'stack:', '2x3', '2', 'tensor 2')
    fails(function() torch.stack({}) end, 'non-empty')
    fails(function() torch.stack({torch.zeros(2)}, 3) end, 'stack: dimension 3 out of range')
  end)
end)

describe('split and chunk', function()
  it('returns views of equal parts, the last one shorter', function()
    local x = iota(5, 2)
    local parts = x:split(2)
    assert.are.equal(3, #parts)
    check(parts[1], 'int64', {2, 2}, {0, 1, 2, 3})
    check(parts[3], 'int64', {1, 2}, {8, 9})
    parts[2][1][1] = 100
    assert.are.equal(100, x[3][1])
    local cols = torch.split(x, 1, -1)
    assert.are.equal(2, #cols)
    check(cols[2], 'int64', {5, 1}, {1, 3, 5, 7, 9})
    assert.is_false(cols[2]:isContiguous())
  end)

  it('splits by a table of sizes', function()
    local x = iota(2, 6)
    local parts = x:split({1, 3, 2}, 2)
    assert.are.equal(3, #parts)
    check(parts[2], 'int64', {2, 3}, {1, 2, 3, 7, 8, 9})
    check(parts[3], 'int64', {2, 2}, {4, 5, 10, 11})
    check(x:t():split({4, 0, 2})[2], 'int64', {0, 2}, {})
  end)

  it('chunks as PyTorch does', function()
    local sizes = function(parts)
      local s = {}
      for i, p in ipairs(parts) do s[i] = p:size(1) end
      return s
    end
    assert.are.same({2, 2, 1}, sizes(torch.zeros(5):chunk(3)))
    assert.are.same({2, 2, 2}, sizes(torch.zeros(6):chunk(4)))
    assert.are.same({0, 0, 0, 0}, sizes(torch.zeros(0):chunk(4)))
    assert.are.same({0}, sizes(torch.zeros(0):split(2)))
    local c = iota(2, 4):chunk(2, 2)
    check(c[2], 'int64', {2, 2}, {2, 3, 6, 7})
  end)

  it('raises on sizes that do not add up', function()
    fails(function() torch.zeros(5):split({2, 2}) end, 'split:', '[2, 2]', 'sum to 4', 'size 5')
    fails(function() torch.zeros(5):split({2, -1, 4}) end, 'negative size')
    fails(function() torch.zeros(5):split(0) end, 'split size can only be 0')
    fails(function() torch.zeros(5):chunk(0) end, 'chunk:', 'positive')
    fails(function() torch.zeros(5):split(2, 2) end, 'split: dimension 2 out of range')
    fails(function() torch.tensor(1):split(1) end, '0-dim')
  end)
end)

describe('unbind', function()
  it('returns the slices along a dim as views without it (PyTorch values)', function()
    local x = iota(2, 3)
    local rows = x:unbind()
    assert.are.equal(2, #rows)
    check(rows[1], 'int64', {3}, {0, 1, 2})
    check(rows[2], 'int64', {3}, {3, 4, 5})
    local cols = torch.unbind(x, 2)
    assert.are.equal(3, #cols)
    check(cols[3], 'int64', {2}, {2, 5})
    check(x:unbind(-1)[2], 'int64', {2}, {1, 4})
    assert.is_true(cols[1]:storage() == x:storage())                -- views
    cols[2][2] = 40
    assert.are.equal(40, x[2][2])
    check(x:t():unbind(1)[1], 'int64', {2}, {0, 3})
    local t = iota(2, 3, 4):unbind(2)
    check(t[2], 'int64', {2, 4}, {4, 5, 6, 7, 16, 17, 18, 19})
  end)

  it('gives no slices of an empty dim and empty slices of an empty row', function()
    assert.are.equal(0, #torch.zeros(0, 2):unbind(1))
    local parts = torch.zeros(2, 0):unbind(1)
    assert.are.equal(2, #parts)
    assert.are.same({0}, parts[1]:size():totable())
    fails(function() torch.tensor(3.0):unbind() end, 'unbind: a 0-dim tensor has no dim to unbind')
    fails(function() iota(2, 3):unbind(3) end, 'unbind: dimension 3 out of range')
  end)

  it('passes gradients back to the slices they came from', function()
    local g = torch.arange(6.0):view(2, 3):requires_grad_()
    local cols = g:unbind(2)
    assert.is_not_nil(cols[1].grad_fn)
    local y = cols[1] + cols[3] * 3
    y:sum():backward()
    check(g.grad, 'float32', {2, 3}, {1, 0, 3, 1, 0, 3})
  end)
end)

describe('flatten and unflatten', function()
  it('flattens to a view when the layout allows, else a copy', function()
    local x = iota(2, 3, 4)
    local f = x:flatten()
    assert.are.same({24}, f:size():totable())
    assert.is_true(f:storage() == x:storage())
    check(x:flatten(2, 3), 'int64', {2, 12}, values(x))
    local t = x:transpose(1, 3)
    local g = t:flatten(1, 2)
    check(g, 'int64', {12, 2}, {0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23})
    assert.is_false(g:storage() == x:storage())
    assert.is_true(x:flatten(-1, -1):isSetTo(x))
    check(torch.tensor(3.5):flatten(), 'float32', {1}, {3.5})
    check(torch.flatten(torch.zeros(2, 0, 3), 2), 'float32', {2, 0}, {})
  end)

  it('unflattens one dim into several', function()
    local x = iota(2, 12)
    local u = x:unflatten(2, {3, -1})
    check(u, 'int64', {2, 3, 4}, values(x))
    assert.is_true(u:storage() == x:storage())
    check(x:t():unflatten(1, 4, 3), 'int64', {4, 3, 2}, values(x:t()))
    check(torch.unflatten(x, -1, {12}), 'int64', {2, 12}, values(x))
  end)

  it('raises on bad dims and sizes', function()
    fails(function() torch.zeros(2, 3):flatten(2, 1) end, 'flatten:', 'comes after')
    fails(function() torch.zeros(6):unflatten(1, {4, -1}) end, 'unflatten:', '[4, -1]', '(6)')
    fails(function() torch.zeros(6):unflatten(1, {-1, -1}) end, 'only one -1')
    fails(function() torch.zeros(6):unflatten(1, {}) end, 'non-empty')
    fails(function() torch.zeros(6):flatten(3) end, 'flatten: dimension 3 out of range')
  end)
end)

describe('movedim', function()
  it('moves dims and keeps the rest in order', function()
    local x = iota(2, 3, 4)
    check(x:movedim({1, 2}, {3, 1}), 'int64', {3, 4, 2},
          {0, 12, 1, 13, 2, 14, 3, 15, 4, 16, 5, 17, 6, 18, 7, 19, 8, 20, 9, 21, 10, 22, 11, 23})
    assert.are.same({4, 2, 3}, x:movedim(-1, 1):size():totable())
    assert.are.same({3, 4, 2}, torch.movedim(x, 1, -1):size():totable())
    assert.is_true(x:moveaxis(1, 2):storage() == x:storage())
  end)

  it('raises on repeated or unmatched dims', function()
    fails(function() iota(2, 3, 4):movedim({1, 1}, {3, 1}) end, 'source dim 1 repeated')
    fails(function() iota(2, 3, 4):movedim({1, 2}, {3, 3}) end, 'destination dim 3 repeated')
    fails(function() iota(2, 3, 4):movedim({1, 2}, {3}) end, '2 source dims but 1 destination')
  end)
end)

describe('repeat', function()
  local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})

  it('tiles, with new leading dims', function()
    check(x['repeat'](x, 2, 1, 2), 'int64', {2, 2, 6},
          {1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6, 1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6})
    check(x:t():repeatTensor(1, 2), 'int64', {3, 4}, {1, 4, 1, 4, 2, 5, 2, 5, 3, 6, 3, 6})
    check(torch.repeatTensor(torch.tensor({7, 8}), {3}), 'int64', {6}, {7, 8, 7, 8, 7, 8})
    check(torch.tensor(3.5):repeatTensor(2, 3), 'float32', {2, 3}, {3.5, 3.5, 3.5, 3.5, 3.5, 3.5})
    check(x:repeatTensor(0, 2), 'int64', {0, 6}, {})
    check(x:double():repeatTensor(x:size()), 'float64', {4, 9}, values(x:repeatTensor(2, 3)))
  end)

  it('raises on too few or negative counts', function()
    fails(function() x:repeatTensor(2) end, 'repeat:', '1 repeat counts for a tensor of 2 dims')
    fails(function() x:repeatTensor(-1, 2) end, 'negative repeat count')
  end)
end)

describe('flip', function()
  it('reverses the given dims into a copy', function()
    local x = iota(2, 3, 4)
    check(x:flip({1, 3}), 'int64', {2, 3, 4},
          {15, 14, 13, 12, 19, 18, 17, 16, 23, 22, 21, 20, 3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8})
    check(x:flip(1, 3), 'int64', {2, 3, 4}, values(x:flip({3, 1})))
    local m = iota(3, 4)
    check(m:t():flip(-1), 'int64', {4, 3}, {8, 4, 0, 9, 5, 1, 10, 6, 2, 11, 7, 3})
    check(torch.flip(m:float(), {}), 'float32', {3, 4}, values(m))
    check(torch.tensor({true, false, false}):flip(1), 'bool', {3}, {false, false, true})
    check(torch.zeros(0, 2):flip(1), 'float32', {0, 2}, {})
    check(m:fliplr(), 'int64', {3, 4}, {3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8})
    check(m:flipud(), 'int64', {3, 4}, {8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3})
    local f = m:flip(1)
    f[1][1] = 99
    assert.are.equal(8, m[3][1])
  end)

  it('raises on repeated or bad dims', function()
    fails(function() iota(2, 3):flip(1, 1) end, 'flip: dim 1 appears more than once')
    fails(function() iota(2, 3):flip(3) end, 'flip: dimension 3 out of range')
    fails(function() iota(3):fliplr() end, 'fliplr: needs at least 2 dims')
  end)
end)

describe('roll', function()
  local x = iota(3, 4)

  it('rotates along dims', function()
    check(x:roll(1, 1), 'int64', {3, 4}, {8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6, 7})
    check(x:roll(-1, 2), 'int64', {3, 4}, {1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8})
    check(x:roll(7, -1), 'int64', {3, 4}, {1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8})
    check(x:roll({1, 2}, {1, 2}), 'int64', {3, 4}, {10, 11, 8, 9, 2, 3, 0, 1, 6, 7, 4, 5})
    check(x:roll({1, 1}, {2, 2}), 'int64', {3, 4}, {2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9})
    check(x:t():roll(1, 2), 'int64', {4, 3}, {8, 0, 4, 9, 1, 5, 10, 2, 6, 11, 3, 7})
    check(torch.roll(x:double(), 0, 1), 'float64', {3, 4}, values(x))
  end)

  it('rotates the flattened tensor without dims', function()
    check(x:roll(5), 'int64', {3, 4}, {7, 8, 9, 10, 11, 0, 1, 2, 3, 4, 5, 6})
    check(x:t():roll(1), 'int64', {4, 3}, {11, 0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7})
    check(torch.tensor(5.5):roll(1), 'float32', {}, {5.5})
    check(torch.zeros(0, 3):roll(1, 1), 'float32', {0, 3}, {})
  end)

  it('raises on unpaired shifts and dims', function()
    fails(function() x:roll({1}, {1, 2}) end, 'roll:', '1 shifts but 2 dims')
    fails(function() x:roll({1, 2}) end, 'without dims, expects one shift')
    fails(function() x:roll(1, 3) end, 'roll: dimension 3 out of range')
    fails(function() torch.tensor(1):roll(1, 1) end, '0-dim')
  end)
end)

describe('tril and triu', function()
  local x = iota(3, 4)

  it('keep a triangle relative to a diagonal', function()
    check(x:tril(), 'int64', {3, 4}, {0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0})
    check(x:tril(-1), 'int64', {3, 4}, {0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0})
    check(x:triu(1), 'int64', {3, 4}, {0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11})
    check(torch.triu(x, -1), 'int64', {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 0, 9, 10, 11})
    check(x:tril(10), 'int64', {3, 4}, values(x))
    check(x:triu(10), 'int64', {3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
    check(x:t():tril(1), 'int64', {4, 3}, {0, 4, 0, 1, 5, 9, 2, 6, 10, 3, 7, 11})
    check(x:float():tril(-100), 'float32', {3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
  end)

  it('work on batches, other dtypes and in place', function()
    local b = iota(2, 3, 3)
    check(b:tril(), 'int64', {2, 3, 3}, {0, 0, 0, 3, 4, 0, 6, 7, 8, 9, 0, 0, 12, 13, 0, 15, 16, 17})
    check(b:transpose(2, 3):triu(), 'int64', {2, 3, 3}, {0, 3, 6, 0, 4, 7, 0, 0, 8, 9, 12, 15, 0, 13, 16, 0, 0, 17})
    check(torch.ones(2, 2):bool():triu(), 'bool', {2, 2}, {true, true, false, true})
    check(torch.ones(2, 2):half():tril(), 'float16', {2, 2}, {1, 0, 1, 1})
    local y = x:double()
    assert.are.equal(y, y:tril_(1))
    check(y, 'float64', {3, 4}, {0, 1, 0, 0, 4, 5, 6, 0, 8, 9, 10, 11})
    local z = x:clone()
    z:t():triu_()                              -- through a non-contiguous view
    check(z, 'int64', {3, 4}, {0, 0, 0, 0, 4, 5, 0, 0, 8, 9, 10, 0})
    check(torch.zeros(2, 0, 3):tril(), 'float32', {2, 0, 3}, {})
    local big = torch.ones(300, 300):tril()
    assert.are.equal(300 * 301 / 2, total(big))
  end)

  it('raise below 2 dims', function()
    fails(function() torch.zeros(3):tril() end, 'tril: needs at least 2 dims, got 3')
    fails(function() torch.tensor(1):triu_() end, 'triu_: needs at least 2 dims')
    fails(function() torch.zeros(1, 3):expand(2, 3):tril_() end, 'tril_: unsupported operation')
  end)
end)

describe('clamp', function()
  local c = torch.tensor({-2, -0.5, 0, 0.5, 2, nan})

  it('clamps floats, NaN passing through', function()
    check(c:clamp(-1, 1), 'float32', {6}, {-1, -0.5, 0, 0.5, 1, nan})
    check(c:clamp(0.25), 'float32', {6}, {0.25, 0.25, 0.25, 0.5, 2, nan})
    check(c:clamp(nil, 0.25), 'float32', {6}, {-2, -0.5, 0, 0.25, 0.25, nan})
    check(c:clamp({max = 0.25}), 'float32', {6}, {-2, -0.5, 0, 0.25, 0.25, nan})
    check(torch.clamp(c, {min = -1, max = 1}), 'float32', {6}, {-1, -0.5, 0, 0.5, 1, nan})
    check(c:clip(-1, 1), 'float32', {6}, {-1, -0.5, 0, 0.5, 1, nan})
    check(c:clamp_min(0.25), 'float32', {6}, {0.25, 0.25, 0.25, 0.5, 2, nan})
    check(c:clamp_max(0.25), 'float32', {6}, {-2, -0.5, 0, 0.25, 0.25, nan})
    check(c:half():clamp(-1, 0.3), 'float16', {6}, {-1, -0.5, 0, 0.300048828125, 0.300048828125, nan})
    check(torch.tensor({1, 2, 3}):float():clamp(3, 1), 'float32', {3}, {1, 1, 1})
    check(torch.tensor({1, 2, 3}):float():clamp(nan, 2.5), 'float32', {3}, {nan, nan, nan})
    check(torch.tensor(5.5):clamp(0, 1), 'float32', {}, {1})
    check(torch.zeros(0, 3):clamp(0, 1), 'float32', {0, 3}, {})
  end)

  it('clamps integers and promotes with float bounds', function()
    local i = torch.tensor({1, 2, 3, 4})
    check(i:clamp(2, 3), 'int64', {4}, {2, 2, 3, 3})
    check(i:int():t():clamp(2), 'int32', {4}, {2, 2, 3, 4})
    check(i:clamp(1.5, 3.5), 'float32', {4}, {1.5, 2, 3, 3.5})
    local u = torch.tensor({1, 2, 3}, {dtype = 'uint8'})
    check(u:clamp(-5), 'uint8', {3}, {1, 2, 3})
    check(u:clamp(nil, 300), 'uint8', {3}, {1, 2, 3})
    check(torch.tensor({true, false}):clamp(0, 1), 'int64', {2}, {1, 0})
  end)

  it('works in place on non-contiguous views', function()
    local m = torch.tensor({{1, -5}, {7, 2}}):float()
    local v = m:t()
    assert.are.equal(v, v:clamp_(0, 3))
    check(m, 'float32', {2, 2}, {1, 0, 3, 2})
    m:clip_({min = 1.5})
    check(m, 'float32', {2, 2}, {1.5, 1.5, 3, 2})
  end)

  it('takes tensor bounds with broadcasting', function()
    local lo, hi = torch.tensor({2, 2, 2}):float(), torch.tensor({{2.5}, {4}})
    check(torch.tensor({{1, 5, 3}}):float():clamp(lo, hi), 'float32', {2, 3}, {2, 2.5, 2.5, 2, 4, 3})
    check(torch.tensor({1, 2}):float():clamp(torch.tensor(1.5)), 'float32', {2}, {1.5, 2})
    check(torch.tensor({1, 5}):clamp(torch.tensor({2, 0}), 4), 'int64', {2}, {2, 4})
  end)

  it('raises on missing, out-of-range or mistyped bounds', function()
    fails(function() c:clamp() end, 'clamp: at least one of min and max')
    fails(function() torch.tensor({1, 2}):clamp_(1.5) end, "clamp_: result type float32 can't be cast", 'int64')
    fails(function() torch.tensor({1}, {dtype = 'uint8'}):clamp(300) end, 'outside the representable range of uint8')
    fails(function() torch.tensor({true}):clamp_(0) end, "can't be cast")
    fails(function() c:clamp('a') end, 'clamp: min must be a number or a tensor, got string')
    fails(function() c:clamp_(torch.zeros(2, 6)) end, 'clamp_: output of shape 6', 'broadcast shape 2x6')
    fails(function() c:clamp(torch.zeros(4)) end, 'clamp: shapes 6 and 4 cannot broadcast')
    fails(function() c:roll() end, 'roll: expects shifts')
    fails(function() torch.zeros(1):expand(3):clamp_(0, 1) end, 'clamp_: unsupported operation')
  end)
end)

describe('softplus and leaky_relu', function()
  local x = torch.tensor({-30, -1, 0, 1, 10, 19.9, 20, 25})

  it('softplus with beta and threshold', function()
    check(x:softplus(), 'float32', {8},
          {9.357622912219837e-14, 0.3132616877555847, 0.6931471824645996, 1.31326162815094,
           10.000045776367188, 19.899999618530273, 20.0, 25.0}, 1e-6)
    check(torch.softplus(x, {beta = 2, threshold = 10}), 'float32', {8},
          {4.37825544636038e-27, 0.06346400082111359, 0.3465735912322998, 1.0634640455245972,
           10.0, 19.899999618530273, 20.0, 25.0}, 1e-6)
    check(x:double():t():softplus(0.5), 'float64', {8},
          {6.11804547427441e-07, 0.9481539683602134, 1.3862943611198906, 1.9481539683602134,
           10.013430696978237, 19.900095071538498, 20.000090797798435, 25.000007453292458}, 1e-12)
    check(torch.tensor({0.1, 1.3}):bfloat16():softplus(), 'bfloat16', {2}, {0.74609375, 1.5390625})
    check(torch.tensor(-1.0):softplus(), 'float32', {}, {0.3132616877555847}, 1e-6)
    check(torch.zeros(2, 0):softplus(), 'float32', {2, 0}, {})
    fails(function() torch.tensor({1, 2}):softplus() end, 'softplus: needs a float tensor, got int64')
  end)

  it('leaky_relu out of place and in place', function()
    local y = torch.tensor({-2, -0.5, 0, 3})
    check(y:leaky_relu(), 'float32', {4}, {-0.019999999552965164, -0.004999999888241291, 0, 3})
    check(torch.leaky_relu(y, 0.2), 'float32', {4}, {-0.4000000059604645, -0.10000000149011612, 0, 3})
    check(y:leaky_relu({negative_slope = 0.2}), 'float32', {4}, {-0.4000000059604645, -0.10000000149011612, 0, 3})
    local m = torch.tensor({{-1, 2}, {3, -4}}):double()
    m:t():leaky_relu_(0.5)
    check(m, 'float64', {2, 2}, {-0.5, 2, 3, -2})
    fails(function() torch.tensor({1, -2}):leaky_relu_() end, 'leaky_relu_: needs a float tensor')
    fails(function() torch.zeros(1):expand(2):leaky_relu_() end, 'leaky_relu_: unsupported operation')
  end)
end)

describe('addcmul and addcdiv', function()
  local a, t1, t2 = torch.tensor({1, 2, 3}), torch.tensor({{1}, {2}}), torch.tensor({0.5, 0.25, 2})
  a, t1 = a:float(), t1:float()

  it('broadcast and take value in each form', function()
    check(a:addcmul(t1, t2, {value = 0.5}), 'float32', {2, 3}, {1.25, 2.125, 4, 1.5, 2.25, 5})
    check(torch.addcmul(a, t1, t2, {value = 0.5}), 'float32', {2, 3}, {1.25, 2.125, 4, 1.5, 2.25, 5})
    check(a:addcmul(0.5, t1, t2), 'float32', {2, 3}, {1.25, 2.125, 4, 1.5, 2.25, 5})
    check(a:addcdiv(t1, t2, {value = -2}), 'float32', {2, 3}, {-3, -6, 2, -7, -14, 1})
    check(a:addcdiv(-2, t1, t2), 'float32', {2, 3}, {-3, -6, 2, -7, -14, 1})
    check(a:view(3, 1):addcmul(t1:t(), t2:view(3, 1)), 'float32', {3, 2}, {1.5, 2, 2.25, 2.5, 5, 7})
    check(torch.tensor({0.1, 1.3}):half():addcmul(torch.tensor({2.1, -1.3}):half(),
          torch.tensor({1.1, 0.3}):half(), {value = 0.7}), 'float16', {2}, {1.7158203125, 1.0263671875}, 1e-3)
  end)

  it('promotes and keeps integers exact', function()
    local i = torch.tensor({1, 2, 3})
    check(i:addcmul(torch.tensor({2, 3, 4}), torch.tensor({5, 6, 7}), {value = 3}), 'int64', {3}, {31, 56, 87})
    check(i:addcmul(torch.tensor({2.5, 3, 4}), torch.tensor({5, 6, 7})), 'float32', {3}, {13.5, 20, 31})
    check(i:int():addcmul(i, torch.tensor({1, 2, 3}, {dtype = 'uint8'}), {value = 3}), 'int64', {3}, {4, 14, 30})
  end)

  it('work in place', function()
    local x = a:clone()
    assert.are.equal(x, x:addcmul_(t2, t2, {value = 2}))
    check(x, 'float32', {3}, {1.5, 2.125, 11})
    local d = torch.tensor({{1, 2}, {3, 4}}):double()
    d:t():addcdiv_(torch.ones(2, 2):double(), torch.tensor({2, 4}):double())
    check(d, 'float64', {2, 2}, {1.5, 2.5, 3.25, 4.25})
    local f = torch.tensor({1, 2}):float()
    f:addcmul_(torch.tensor({1, 2}), torch.tensor({1, 2}), {value = 3})
    check(f, 'float32', {2}, {4, 14})
    -- computed in the promoted dtype, then cast into the output
    local h = torch.tensor({0.1, 1.3}):half()
    h:addcmul_(torch.tensor({2.1, -1.3}), torch.tensor({1.1, 0.3}), {value = 0.7})
    check(h, 'float16', {2}, {1.716796875, 1.0263671875})
    local i = torch.tensor({1, 2}, {dtype = 'int32'})
    i:addcmul_(torch.tensor({3000000000, 1}), torch.tensor({1, 1}))
    check(i, 'int32', {2}, {-1294967295, 3})
  end)

  it('raise on bad shapes and dtypes', function()
    fails(function() a:addcmul(t1, torch.zeros(4)) end, 'addcmul: shapes', 'cannot broadcast')
    fails(function() a:clone():addcmul_(t1, t2) end, 'addcmul_: output of shape 3', 'broadcast shape 2x3')
    fails(function() torch.tensor({1, 2}):addcmul_(torch.zeros(2), torch.zeros(2)) end,
          "addcmul_: result type float32 can't be cast", 'int64')
    fails(function() torch.tensor({1, 2}):addcdiv(torch.tensor({1, 2}), torch.tensor({1, 2})) end,
          'addcdiv: integer division is not supported')
    fails(function() torch.tensor({1, 2}):addcmul(torch.tensor({1, 2}), torch.tensor({1, 2}), {value = 0.5}) end,
          'addcmul: value must be an integer')
    fails(function() torch.tensor({true}):addcmul(torch.tensor({true}), torch.tensor({true})) end, 'bool')
    fails(function() a:addcmul(t1) end, 'addcmul: argument 3 (tensor2) must be a tensor, got no value')
    fails(function() torch.zeros(1):expand(3):addcmul_(a, a) end, 'addcmul_: unsupported operation', 'single memory location')
  end)
end)

describe('lerp', function()
  local s, e = torch.tensor({1, 2, 3, 4}):float(), torch.tensor({10, 20, 30, 40}):float()

  it('interpolates with a number or a tensor weight', function()
    check(s:lerp(e, 0.3), 'float32', {4}, {3.700000047683716, 7.400000095367432, 11.100000381469727, 14.800000190734863}, 1e-6)
    check(torch.lerp(s, e, 0.7), 'float32', {4}, {7.299999713897705, 14.59999942779541, 21.899999618530273, 29.19999885559082}, 1e-6)
    check(s:lerp(e, 1), 'float32', {4}, values(e))
    check(torch.tensor(1.0):lerp(torch.tensor(3.0), 0.5), 'float32', {}, {2})
    check(torch.zeros(0):lerp(torch.zeros(0), 0.5), 'float32', {0}, {})
    check(s:lerp(torch.tensor({{10}, {20}}):float(), torch.tensor({0, 0.25, 0.75, 1})), 'float32', {2, 4},
          {1, 4, 8.25, 10, 1, 6.5, 15.75, 20})
    check(torch.tensor({0.1, 0.2}, {dtype = 'float64'}):lerp(torch.tensor({1.7, -3.3}, {dtype = 'float64'}), 0.6), 'float64', {2},
          {1.06, -1.8999999999999997}, 1e-15)
    check(s:lerp(e, torch.tensor(0.5, {dtype = 'float64'})), 'float32', {4}, {5.5, 11, 16.5, 22})
    check(torch.tensor({0.1, 1.3}):half():lerp(torch.tensor({2.1, -1.3}):half(), 0.3), 'float16', {2},
          {0.69970703125, 0.52001953125}, 1e-3)
  end)

  it('works in place', function()
    local m = torch.tensor({{0, 1}, {2, 3}}):float()
    assert.are.equal(m, m:lerp_(torch.ones(2, 2) * 4, 0.5))
    check(m, 'float32', {2, 2}, {2, 2.5, 3, 3.5})
    m:t():lerp_(torch.zeros(2), torch.tensor({{1, 0}, {0, 1}}):float())
    check(m, 'float32', {2, 2}, {0, 2.5, 3, 0})
  end)

  it('raises on dtypes and shapes PyTorch rejects', function()
    fails(function() s:lerp(e:double(), 0.5) end, 'lerp: expected dtype float32 for end but got float64')
    fails(function() s:lerp(e, torch.ones(4):double()) end, 'for weight')
    fails(function() torch.tensor({1, 2}):lerp(torch.tensor({1, 2}), 0.5) end, 'lerp: needs a float tensor')
    fails(function() s:clone():lerp_(torch.zeros(2, 4), 0.5) end, 'lerp_: output of shape 4', '2x4')
    fails(function() s:lerp(e, 'x') end, 'weight must be a number or a tensor')
    fails(function() torch.zeros(1):expand(4):lerp_(e, 0.5) end, 'lerp_: unsupported operation')
  end)
end)
