-- Derivatives of sort/topk/kthvalue/median/mode values, cumprod, the
-- scatter and index_put family, masked_scatter, broadcast masked_select,
-- as_strided (src/autograd), and index assignment with autograd.
local torch = require 'torch'

local function randd(...)
  local dims = table.pack(...)
  dims[dims.n + 1] = {dtype = 'float64'}
  return torch.randn(table.unpack(dims, 1, dims.n + 1))
end
local function leaf(t) return t:clone():requires_grad_() end
local function check(f, inputs) assert.is_true(torch.autograd.gradcheck(f, inputs)) end
local function check2(f, inputs) assert.is_true(torch.autograd.gradgradcheck(f, inputs)) end

describe('derivatives of selected values', function()
  -- distinct values, so that the selections are stable under finite differences
  local function distinct(r, c)
    return (torch.randperm(r * c):double() + randd(r * c) * 0.1):view(r, c)
  end

  it('sort, topk and kthvalue values, also on non-contiguous inputs', function()
    local x = leaf(distinct(3, 5))
    check(function(t) return (t:sort(2)) end, {x})
    check(function(t) return (t:sort(1, true)) end, {x})
    check(function(t) return (t:t():sort(2)) end, {x})
    check(function(t) return (t:topk(2, 2)) end, {x})
    check(function(t) return (t:kthvalue(2, 2)) end, {x})
    check(function(t) return (t:kthvalue(3, 1, true)) end, {x})
    check2(function(t) return (t:sort(2)) end, {x})
    local v = x:sort(2)
    assert.are.equal('SortBackward', v.grad_fn:name())
  end)

  it('median (with and without dim) and mode values', function()
    local x = leaf(distinct(3, 5))
    check(function(t) return (t:median(2)) end, {x})
    check(function(t) return (t:median(1, true)) end, {x})
    check(function(t) return t:median() end, {x})
    local m = leaf(torch.tensor({{1, 2, 2, 3}, {5, 5, 4, 4}}, {dtype = 'float64'}))
    local vals = m:mode(2)
    vals:sum():backward()
    assert.are.equal(2, m.grad:sum():item())
    assert.are.equal(1, m.grad[1][2] + m.grad[1][3])
  end)
end)

describe('cumprod', function()
  it('gradchecks and double-differentiates without zeros', function()
    local x = leaf(randd(3, 4) + 3)
    check(function(t) return t:cumprod(2) end, {x})
    check(function(t) return t:cumprod(1) end, {x})
    check2(function(t) return t:cumprod(2) end, {x})
  end)

  it('is exact with zeros, first and second order', function()
    local x = leaf(torch.tensor({{2.0, 0.0, 3.0, 0.5}, {0.0, 0.0, 1.5, 2.0}}, {dtype = 'float64'}))
    check(function(t) return t:cumprod(2) end, {x})
    check2(function(t) return t:cumprod(2) end, {x})
    -- by hand: d/dx sum(cumprod(x)) for x = 2 0 3 0.5: 1 + 0 + 0 + 0, 2 + 2*3 + 2*3*0.5, 0, 0
    x.grad = nil
    x:cumprod(2):sum():backward()
    assert.are.same({1, 11, 0, 0}, x.grad[1]:totable())
  end)
end)

describe('prod', function()
  it('is exact with zeros, first and second order, over a dim, several dims or all', function()
    local x = leaf(torch.tensor({{2.0, 0.0, 3.0}, {1.5, 2.0, 0.5}, {0.0, 0.0, 1.0}}, {dtype = 'float64'}))
    for _, f in ipairs({function(t) return t:prod(2) end, function(t) return t:prod(1, true) end,
                        function(t) return t:prod() end, function(t) return t:prod({1, 2}) end}) do
      check(f, {x})
      check2(f, {x})
    end
    x.grad = nil
    x:prod(2):sum():backward()
    assert.are.same({0, 6, 0}, x.grad[1]:totable())
  end)
end)

describe('scatter and index_put derivatives', function()
  local index = torch.tensor({{1, 2, 1}, {3, 1, 2}})
  it('scatter, scatter with a value and scatter_add', function()
    local x, src = leaf(randd(3, 3)), leaf(randd(2, 3))
    check(function(a, b) return a:scatter(1, index, b) end, {x, src})
    check(function(a) return a:scatter(1, index, 2.5) end, {x})
    check(function(a, b) return a:scatter_add(1, index, b) end, {x, src})
    check2(function(a, b) return a:scatter_add(1, index, b) * a end, {x, src})
  end)

  it('index_add (with alpha), index_copy and index_fill', function()
    local x, src = leaf(randd(4, 3)), leaf(randd(2, 3))
    local idx = torch.tensor({4, 2})
    check(function(a, b) return a:index_add(1, idx, b) end, {x, src})
    check(function(a, b) return a:index_add(1, idx, b, {alpha = -2}) end, {x, src})
    check(function(a, b) return a:index_copy(1, idx, b) end, {x, src})
    check(function(a) return a:index_fill(2, torch.tensor({1, 3}), -1) end, {x})
    check2(function(a, b) return a:index_add(1, idx, b) * a end, {x, src})
  end)

  it('masked_scatter, and masked_select with a broadcast mask', function()
    local mask = torch.tensor({{true, false, true}, {false, true, false}})
    local x, src = leaf(randd(2, 3)), leaf(randd(5))
    check(function(a, b) return a:masked_scatter(mask, b) end, {x, src})
    local row = torch.tensor({true, false, true})
    check(function(a) return a:masked_select(row) end, {x})
    assert.are.same({4}, x:masked_select(row):size():totable())
  end)

  it('as_strided, overlapping windows summed', function()
    local x = leaf(randd(6))
    check(function(a) return a:as_strided({3, 3}, {1, 1}) end, {x})   -- sliding windows: overlaps
    check(function(a) return a:as_strided({2, 2}, {3, 1}, 2) end, {x})
    check2(function(a) return a:as_strided({2, 3}, {2, 1}) * a:as_strided({2, 3}, {1, 2}) end, {x})
    assert.has_error(function() leaf(randd(3, 3)):t():as_strided({2}, {1}) end)
  end)

  it('in-place forms on tensors with history go through the same derivatives', function()
    local x, src = leaf(randd(4, 3)), leaf(randd(2, 3))
    local y = x * 1
    y:index_add_(1, torch.tensor({1, 2}), src)
    y:scatter_(2, torch.tensor({{1}, {2}, {3}, {1}}), 0)
    y:sum():backward()
    assert.are.same({0, 1, 1}, x.grad[1]:totable())
    assert.are.same({0, 1, 1}, src.grad[1]:totable())
  end)
end)

describe('index assignment with autograd', function()
  it('x[i] = v, slices, masks and index tensors carry gradients to both sides', function()
    local w = leaf(torch.tensor({1.0, 2.0}, {dtype = 'float64'}))
    local out = torch.zeros(3, 2, {dtype = 'float64'})
    out[2] = w * 3                                   -- a plain tensor gets history
    out[{3, {1, 1}}] = w:narrow(1, 1, 1) * 10         -- a slice of the last row
    assert.is_true(out.requires_grad)
    ;(out * torch.tensor({{1.0, 1.0}, {1.0, 2.0}, {5.0, 7.0}}, {dtype = 'float64'})):sum():backward()
    assert.are.same({3 + 50, 6}, w.grad:totable())
    -- a 0-dim value through a mask, and a vector through indices (repeated: each place's gradient)
    local s = leaf(torch.tensor({1.5, -2.0}, {dtype = 'float64'}))
    local y = torch.zeros(4, {dtype = 'float64'})
    y[torch.tensor({true, false, true, false})] = s:sum()
    y[torch.tensor({4, 4})] = s:narrow(1, 2, 1) * 3
    ;(y * torch.tensor({1.0, 10, 100, 1000}, {dtype = 'float64'})):sum():backward()
    assert.are.same({1 + 100, 1 + 100 + 2 * 3 * 1000}, s.grad:totable())
    local x = leaf(randd(3, 4))
    check(function(a)
      local y = a * 1
      y[{{}, 2}] = a[{{}, 1}] * 2
      y[y:gt(1)] = 0
      y[torch.tensor({1, 3})] = a[2] + 1
      return y
    end, {x})
  end)
end)
