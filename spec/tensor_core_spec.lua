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

  it('prints empty tensors as Torch7 and 0-dim tensors as their value', function()
    assert.are.equal('[torch.FloatTensor with no dimension]', tostring(torch.Tensor()))
    assert.are.equal('[torch.FloatTensor of size 0x3]', tostring(torch.zeros(0, 3)))
    assert.are.equal('3.5000', tostring(torch.tensor(3.5)))
    assert.are.equal('7', tostring(torch.tensor(7)))
    assert.are.equal('true', tostring(torch.tensor(true)))
    assert.are.equal('1.0000e-07', tostring(torch.tensor(1e-7, {dtype = 'float64'})))
  end)

  it('prints non-contiguous views by their values', function()
    local x = torch.tensor({{1, 2, 3}, {4, 5, 6}})
    assert.are.equal(lines(' 1  4', ' 2  5', ' 3  6', '[torch.LongTensor of size 3x2]'), tostring(x:t()))
  end)
end)
