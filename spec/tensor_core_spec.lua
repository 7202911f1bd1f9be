-- tensor_core_spec.lua: creation, geometry, views, conversion, indexing.
local torch = require 'torch'

describe('tensor creation', function()
  it('makes typed tensors of the given size', function()
    local x = torch.Tensor(2, 3)
    assert.are.equal('torch.FloatTensor', x:type())
    assert.are.equal(2, x:size(1))
    assert.are.equal(3, x:size(2))
    assert.are.equal(6, x:nElement())
    assert.are.equal('torch.LongTensor', torch.LongTensor(4):type())
    assert.are.equal('torch.DoubleTensor', torch.DoubleTensor({1, 2}):type())
  end)

  it('infers dtypes in torch.tensor like PyTorch', function()
    assert.are.equal('int64', torch.tensor({1, 2}).dtype)
    assert.are.equal('float32', torch.tensor({1, 2.5}).dtype)
    assert.are.equal('bool', torch.tensor({true, false}).dtype)
    assert.are.equal('float64', torch.tensor({1, 2}, {dtype = 'float64'}).dtype)
    local n = torch.tensor({{1, 2}, {3, 4}})
    assert.are.equal(4, n[2][2])
  end)

  it('rejects ragged tables', function()
    assert.has_error(function() torch.tensor({{1, 2}, {3}}) end)
  end)

  it('fills zeros, ones, full', function()
    assert.are.equal(0, torch.zeros(3)[2])
    assert.are.equal(1, torch.ones(3)[3])
    assert.are.equal(7, torch.full({2, 2}, 7)[2][1])
    assert.are.equal('int64', torch.full({2}, 7).dtype)
  end)

  -- fill_ stores the value at each dtype's width (1, 2, 4 and 8 bytes), on contiguous runs
  -- and on strided ones, where the elements between stay as they were
  it('fills every dtype, contiguous and strided, leaving the other elements alone', function()
    local CASES = {{'bool', true, false}, {'uint8', 200, 7}, {'int8', -5, 3}, {'int16', -300, 9},
                   {'bfloat16', 2.5, -1}, {'float16', -0.125, 3}, {'int32', 70000, -2},
                   {'float32', 1.5, 4}, {'int64', math.maxinteger, 1}, {'float64', 0.1, -7}}
    for _, c in ipairs(CASES) do
      local dt, v, old = c[1], c[2], c[3]
      for _, n in ipairs{1, 7, 300} do
        local x = torch.full({n}, v, {dtype = dt})
        for i = 1, n do assert.are.equal(v, x[i], dt .. ' contiguous') end
        local y = torch.full({n, 3}, old, {dtype = dt})
        y:select(2, 2):fill_(v)
        for i = 1, n do
          assert.are.equal(old, y[i][1], dt .. ' strided: the column before')
          assert.are.equal(v, y[i][2], dt .. ' strided')
          assert.are.equal(old, y[i][3], dt .. ' strided: the column after')
        end
      end
      local z, zero = torch.zeros(5, {dtype = dt}), 0
      if dt == 'bool' then zero = false end
      for i = 1, 5 do assert.are.equal(zero, z[i], dt .. ' zeros') end
    end
  end)
end)

describe('views', function()
  it('share storage and never copy', function()
    local x = torch.zeros(2, 3)
    local t = x:t()
    assert.is_true(t:storage() == x:storage())
    assert.is_false(t:isContiguous())
    assert.are.same({3, 1}, {x:stride(1), x:stride(2)})
    x[{1, 3}] = 5
    assert.are.equal(5, t[3][1])
    local v = x:view(3, 2)
    assert.are.equal(5, v[2][1])
    assert.are.equal(5, x:view(-1)[3])
  end)

  it('narrow, select, unsqueeze, squeeze, expand', function()
    local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
    assert.are.equal(5, x:narrow(2, 2, 2)[2][1])
    assert.are.equal(6, x:select(1, 2)[3])
    assert.are.equal(3, x:unsqueeze(1):dim())
    assert.are.equal(2, x:unsqueeze(2):squeeze():dim())
    local e = torch.tensor({1, 2}):expand(3, 2)
    assert.are.equal(0, e:stride(1))
    assert.are.equal(2, e[3][2])
  end)

  it('errors on incompatible views', function()
    local x = torch.zeros(2, 3)
    assert.has_error(function() x:t():view(6) end)
    assert.has_error(function() x:view(4) end)
    assert.are.equal(6, x:t():reshape(6):nElement())
  end)
end)

describe('conversions', function()
  it('converts between dtypes', function()
    local x = torch.tensor({1.7, -2.5})
    assert.are.equal('torch.LongTensor', x:long():type())
    assert.are.equal(1, x:long()[1])
    assert.are.equal('float64', x:to('float64').dtype)
    assert.are.equal('torch.DoubleTensor', x:type('torch.DoubleTensor'):type())
    assert.is_true(x:half()[1] > 1.69 and x:half()[1] < 1.71)
    assert.are.equal(true, x:bool()[1])
  end)
end)

describe('arithmetic', function()
  it('broadcasts and promotes', function()
    local a = torch.tensor({{1}, {2}})
    local b = torch.tensor({10.5, 20})
    local c = a + b
    assert.are.equal('float32', c.dtype)
    assert.are.same({2, 2}, {c:size(1), c:size(2)})
    assert.are.equal(22, c[2][2])
    assert.are.equal('int64', (a + 1).dtype)
    assert.are.equal('float32', (a + 1.5).dtype)
    assert.are.equal('float32', (a / 2).dtype)
  end)

  it('raises on shapes that cannot broadcast', function()
    local ok, err = pcall(function() return torch.zeros(2, 3) + torch.zeros(4) end)
    assert.is_false(ok)
    assert.truthy(err:find('add: shapes 2x3 and 4 cannot broadcast', 1, true))
  end)
end)

describe('printing (Torch7 format)', function()
  local function lines(...) return table.concat({...}, '\n') end

  it('aligns integer-valued tensors without decimals, with the type footer', function()
    assert.are.equal(lines(' 1  1  1', ' 1  1  1', '[torch.FloatTensor of size 2x3]'), tostring(torch.ones(2, 3)))
    assert.are.equal(lines('   1', ' -20', ' 300', '[torch.LongTensor of size 3]'),
                     tostring(torch.tensor({1, -20, 300})))
    assert.are.equal(lines(' 10000000000', '           2', '[torch.LongTensor of size 2]'),
                     tostring(torch.tensor({10000000000, 2})))
  end)

  it('prints four decimals, a scale line when all values are small or large', function()
    assert.are.equal(lines(' 1.5000', ' 2.2500', '[torch.DoubleTensor of size 2]'),
                     tostring(torch.tensor({1.5, 2.25}, {dtype = 'float64'})))
    assert.are.equal(lines('0.001 *', '  1.0000  2.0000', '  3.0000 -4.0000', '[torch.DoubleTensor of size 2x2]'),
                     tostring(torch.tensor({{1e-3, 2e-3}, {3e-3, -4e-3}}, {dtype = 'float64'})))
    assert.are.equal(lines('1e-05 *', ' 1.0000', ' 2.0000', '[torch.DoubleTensor of size 2]'),
                     tostring(torch.tensor({1e-5, 2e-5}, {dtype = 'float64'})))
    assert.are.equal(lines('100000 *', ' 1.2346', ' 2.3457', '[torch.DoubleTensor of size 2]'),
                     tostring(torch.tensor({123456.5, 234567.25}, {dtype = 'float64'})))
  end)

  it('switches to exponents when magnitudes differ widely', function()
    assert.are.equal(lines(' 1.0000e-05', ' 1.0000e+00', '[torch.DoubleTensor of size 2]'),
                     tostring(torch.tensor({1e-5, 1}, {dtype = 'float64'})))
  end)

  it('prints nan, inf and booleans in the columns', function()
    assert.are.equal(lines('    nan', ' 1.5000', '   -inf', '[torch.FloatTensor of size 3]'),
                     tostring(torch.tensor({0 / 0, 1.5, -math.huge})))
    assert.are.equal(lines(' true false', '[torch.BoolTensor of size 1x2]'), tostring(torch.tensor({{true, false}})))
  end)

  it('prints >2-D tensors as (i,j,.,.) slices', function()
    local x = torch.tensor({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}})
    assert.are.equal(lines('(1,.,.) = ', '  1  2', '  3  4', '', '(2,.,.) = ', '  5  6', '  7  8',
                           '[torch.LongTensor of size 2x2x2]'), tostring(x))
    local s = tostring(torch.zeros(2, 1, 1, 1))
    assert.truthy(s:find('(1,1,.,.) = ', 1, true) and s:find('(2,1,.,.) = ', 1, true), s)
  end)

  it('splits wide matrices into column blocks of 80 characters', function()
    local s = tostring(torch.ones(2, 30))
    assert.truthy(s:find('^Columns 1 to 26\n'), s)
    assert.truthy(s:find('\n\nColumns 27 to 30\n', 1, true), s)
    for line in s:gmatch('[^\n]+') do assert.is_true(#line <= 80, line) end
  end)

  it('prints empty tensors by their size and 0-dim tensors as their value and a 0-dim footer', function()
    assert.are.equal('[torch.FloatTensor of size 0]', tostring(torch.Tensor()))
    assert.are.equal('[torch.FloatTensor of size 0x3]', tostring(torch.zeros(0, 3)))
    assert.are.equal('3.5000\n[torch.FloatTensor of size [] (0-dim)]', tostring(torch.tensor(3.5)))
    assert.are.equal('7\n[torch.LongTensor of size [] (0-dim)]', tostring(torch.tensor(7)))
    assert.are.equal('true\n[torch.BoolTensor of size [] (0-dim)]', tostring(torch.tensor(true)))
    assert.are.equal('1.0000e-07\n[torch.DoubleTensor of size [] (0-dim)]', tostring(torch.tensor(1e-7, {dtype = 'float64'})))
  end)

  it('prints non-contiguous views by their values', function()
    local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
    assert.are.equal(lines(' 1  4', ' 2  5', ' 3  6', '[torch.LongTensor of size 3x2]'), tostring(x:t()))
  end)
end)

describe('geometry of views', function()
  it('storageOffset counts from 1 and follows every view', function()
    local x = torch.arange(12):view(3, 4)
    assert.are.equal(1, x:storageOffset())
    assert.are.equal(2, x:narrow(2, 2, 2):storageOffset())           -- PyTorch storage_offset() 1
    assert.are.equal(5, x[2]:storageOffset())
    assert.are.equal(3, x:select(2, 3):storageOffset())
    assert.are.equal(1, x:t():storageOffset())
    assert.are.equal(12, x:narrow(1, 3, 1):narrow(2, 4, 1):storageOffset())
    assert.are.equal(2, x:diagonal(1):storageOffset())
    assert.are.equal(6, x[{2, {2, 3}}]:storageOffset())
    assert.are.equal(7, x:view(-1):narrow(1, 7, 2):storageOffset())
    assert.are.equal(1, x:narrow(2, 2, 2):clone():storageOffset())  -- a copy starts its own storage
  end)

  it('expand_as and Torch7 expandAs broadcast to the other tensor without copying', function()
    local x = torch.tensor({1, 2})
    local target = torch.zeros(3, 2)
    for _, name in ipairs({'expand_as', 'expandAs'}) do
      local e = x[name](x, target)
      assert.are.same({3, 2}, e:size():totable())
      assert.are.same({0, 1}, e:stride():totable())
      assert.is_true(e:storage() == x:storage())
      assert.are.same({1, 2, 1, 2, 1, 2}, e:_flat_values())
      assert.has_error(function() x[name](x, torch.zeros(3, 3)) end)
    end
  end)
end)

describe('new tensors from a tensor', function()
  it('x:new() makes tensors of x\'s type, as Torch7', function()
    local x = torch.tensor({{1, 2}, {3, 4}}, {dtype = 'int32'})
    local e = x:new()
    assert.are.equal('torch.IntTensor', e:type())
    assert.are.equal(0, e:nElement())
    local z = x:new(2, 3)
    assert.are.equal('torch.IntTensor', z:type())
    assert.are.same({2, 3}, z:size():totable())
    assert.are.same({0, 0, 0, 0, 0, 0}, z:_flat_values())
    assert.are.same({5, 6}, x:new({5, 6}):_flat_values())
    assert.are.equal('int32', x:new({5, 6}).dtype)
    assert.is_true(x:new(x):storage() == x:storage())                -- Torch7: same storage
    assert.are.same({2, 2}, x:new(x:size()):size():totable())
  end)

  it('new_zeros, new_ones, new_full, new_empty keep x\'s dtype unless told (PyTorch values)', function()
    local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
    local z = x:new_zeros(2, 3)
    assert.are.equal('int64', z.dtype)
    assert.are.same({0, 0, 0, 0, 0, 0}, z:_flat_values())
    assert.are.same({1, 1}, x:new_ones({2}):_flat_values())
    assert.are.same({1, 1, 1, 1}, x:new_full({2, 2}, 1.5):_flat_values())   -- PyTorch: 1.5 into int64 is 1
    assert.are.same({3}, x:new_empty(3):size():totable())
    assert.are.same({2, 3}, x:new_zeros(x:size()):size():totable())
    local d = torch.zeros(2, {dtype = 'float64'}):new_full({2}, 7)
    assert.are.equal('float64', d.dtype)
    assert.are.same({7, 7}, d:_flat_values())
    assert.are.equal('float32', x:new_zeros(2, {dtype = 'float32'}).dtype)
    assert.are.equal(4, x:new_full(3, 4)[3])
    -- never part of x's history; requires_grad when asked
    local w = torch.zeros(2, {requires_grad = true})
    assert.is_false(w:new_zeros(2).requires_grad)
    assert.is_true(w:new_ones(2, {requires_grad = true}).requires_grad)
    assert.has_error(function() x:new_full({2}) end, 'new_full: expects a fill value after the size')
  end)

  it('type_as and Torch7 typeAs convert to the other tensor\'s dtype', function()
    local f = torch.arange(6.0):view(2, 3)
    local i = f:type_as(torch.zeros(1, {dtype = 'int32'}))
    assert.are.equal('torch.IntTensor', i:type())
    assert.are.same({0, 1, 2, 3, 4, 5}, i:_flat_values())
    assert.are.equal('torch.DoubleTensor', f:typeAs(torch.zeros(1, {dtype = 'float64'})):type())
    assert.is_true(rawequal(f, f:type_as(torch.zeros(1))))            -- same dtype: x itself
    local w = torch.ones(2, {requires_grad = true})
    assert.is_not_nil(w:type_as(torch.zeros(1, {dtype = 'float64'})).grad_fn)
  end)
end)

describe('resize_ and resizeAs_ (Torch7 resize)', function()
  it('keep the storage when it is large enough, from the same offset', function()
    local a = torch.arange(6.0)
    local storage = a:storage()
    assert.is_true(rawequal(a, a:resize_(2, 2)))
    assert.are.same({2, 2}, a:size():totable())
    assert.is_true(a:isContiguous())
    assert.is_true(a:storage() == storage)
    assert.are.same({0, 1, 2, 3}, a:_flat_values())
    local y = torch.arange(6.0)
    local z = y:narrow(1, 3, 4)
    z:resize_({2, 2})
    assert.are.equal(3, z:storageOffset())
    assert.are.same({2, 3, 4, 5}, z:_flat_values())
    assert.is_true(z:storage() == y:storage())
    z:resizeAs_(torch.zeros(4))
    assert.are.same({4}, z:size():totable())
    z:resize(1, 1)                                                    -- Torch7 names
    assert.are.same({1, 1}, z:size():totable())
    z:resizeAs(torch.zeros(2))
    assert.are.same({2}, z:size():totable())
  end)

  it('grow into a larger storage of their own that starts with the old values', function()
    local a = torch.arange(6.0)
    local storage = a:storage()
    a:resize_(3, 3)
    assert.are.same({3, 3}, a:size():totable())
    assert.is_false(a:storage() == storage)
    assert.are.same({0, 1, 2, 3, 4, 5}, {table.unpack(a:_flat_values(), 1, 6)})
    a:resize_(0)
    assert.are.equal(0, a:nElement())
  end)

  it('refuse tensors that require grad and negative sizes', function()
    local w = torch.zeros(2, {requires_grad = true})
    assert.has_error(function() w:resize_(3) end, 'resize_: cannot resize a tensor that requires grad')
    assert.has_error(function() w:resizeAs_(torch.zeros(3)) end, 'resizeAs_: cannot resize a tensor that requires grad')
    assert.has_error(function() torch.zeros(2):resize_(2, -1) end, 'resize_: negative size -1 in dim 2')
  end)
end)

describe('in-place scans cumsum_ and cumprod_', function()
  it('scan in the tensor\'s own dtype, on views too (PyTorch values)', function()
    local x = torch.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = 'int32'})
    assert.is_true(rawequal(x, x:cumsum_(2)))
    assert.are.equal('int32', x.dtype)
    assert.are.same({1, 3, 6, 4, 9, 15}, x:_flat_values())
    local u = torch.tensor({200, 100}, {dtype = 'uint8'})
    u:cumsum_(1)
    assert.are.same({200, 44}, u:_flat_values())                     -- wraps, as PyTorch
    local p = torch.tensor({{1, 2, 3}, {4, 5, 6}}, {dtype = 'float64'})
    p:cumprod_(1)
    assert.are.same({1, 2, 3, 4, 10, 18}, p:_flat_values())
    local t = torch.tensor({{1, 2, 3}, {4, 5, 6.0}}):t()
    t:cumsum_(1)
    assert.are.same({1, 4, 3, 9, 6, 15}, t:_flat_values())
    assert.are.equal(1, t:stride(1))                                  -- still the same view
    local c = torch.tensor({{1, 2}, {3, 4.0}})
    c:cumsum_({dim = -1})
    assert.are.same({1, 3, 3, 7}, c:_flat_values())
  end)

  it('refuse bool, expanded tensors, another dtype and a missing dim', function()
    assert.has_error(function() torch.tensor({true, true}):cumsum_(1) end, 'cumsum_: not supported for bool tensors')
    assert.has_error(function() torch.tensor({1.0, 2}):expand(2, 2):cumsum_(2) end)
    assert.has_error(function() torch.tensor({1.0, 2}):cumprod_(1, {dtype = 'float64'}) end,
                     "cumprod_: dtype float64 differs from the tensor's float32")
    assert.has_error(function() torch.tensor({1.0, 2}):cumsum_() end, 'cumsum_: expects a dim')
  end)

  it('record history under autograd (PyTorch gradients)', function()
    local w = torch.tensor({1.0, 2, 3}, {requires_grad = true})
    local y = w * 1
    y:cumprod_(1)
    assert.is_not_nil(y.grad_fn)
    y:sum():backward()
    assert.are.same({9, 4, 2}, w.grad:_flat_values())
    assert.has_error(function() w:cumsum_(1) end)                       -- a leaf, as PyTorch
  end)
end)

describe('global settings', function()
  it('torch.setdefaulttensortype switches the float type of new tensors', function()
    local before = torch.getdefaulttensortype()
    assert.are.equal('torch.FloatTensor', before)
    local ok, err = pcall(function()
      torch.setdefaulttensortype('torch.DoubleTensor')
      assert.are.equal('torch.DoubleTensor', torch.getdefaulttensortype())
      assert.are.equal('float64', torch.get_default_dtype())
      assert.are.equal('torch.DoubleTensor', torch.Tensor(2):type())
      assert.are.equal('float64', torch.zeros(2).dtype)
      assert.are.equal('float64', torch.tensor({1.5}).dtype)
      assert.are.equal('int64', torch.tensor({1}).dtype)
      assert.are.equal('float64', (torch.tensor({1}) / 2).dtype)
      assert.are.equal('float64', torch.rand(2).dtype)
      assert.are.equal('torch.FloatTensor', torch.FloatTensor(2):type())
    end)
    torch.setdefaulttensortype(before)
    assert(ok, err)
    assert.are.equal('float32', torch.zeros(1).dtype)
    assert.has_error(function() torch.setdefaulttensortype('torch.LongTensor') end)
    assert.are.equal('float32', torch.get_default_dtype())
  end)

  it('torch.setnumthreads sets the count torch.getnumthreads reports; results do not change', function()
    local before = torch.getnumthreads()
    local x = torch.arange(1, 200001, {dtype = 'float64'})
    local ok, err = pcall(function()
      torch.setnumthreads(3)
      assert.are.equal(3, torch.getnumthreads())
      assert.are.equal(3, torch.get_num_threads())
      local s3 = (x * 2):sum():item()
      torch.setnumthreads(1)
      assert.are.equal(1, torch.getnumthreads())
      assert.are.equal(s3, (x * 2):sum():item())
      assert.are.equal(200001 * 200000, s3)
    end)
    torch.setnumthreads(before)
    assert(ok, err)
    assert.are.equal(before, torch.getnumthreads())
  end)
end)
