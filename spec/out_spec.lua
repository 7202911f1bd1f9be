-- {out=r}: the registry's out-of-place ops of one result write it into r,
-- as PyTorch's out= does. Expected values: the same call without out=.
local torch = require 'torch'
local raises = dofile('spec/support/raises.lua')

local function x34(shift)
  local v = {}
  for k = 1, 12 do v[k] = ((k * 5 + (shift or 0)) % 13 - 6) / 4 end
  return torch.tensor(v):view(3, 4)
end

local function writes(want, call, r)
  local dtype = r.dtype
  local got = call(r)
  assert.is_true(rawequal(got, r), 'the result is out itself')
  assert.are.equal(dtype, r.dtype)
  assert.are.same(want:size():totable(), r:size():totable())
  assert.is_true(torch.equal(r, want:to(r.dtype)), 'the values')
end

describe('{out=r}', function()
  local a, b = x34(1), x34(2)

  it('takes the result of every family of one result, resizing r to it', function()
    writes(torch.exp(a), function(r) return torch.exp(a, {out = r}) end, torch.empty(3, 4))
    writes(torch.add(a, b, {alpha = 2}), function(r) return torch.add(a, b, {alpha = 2, out = r}) end, torch.empty(0))
    writes(torch.sum(a, 2), function(r) return torch.sum(a, 2, {out = r}) end, torch.empty(7))
    writes(torch.cumsum(a, 2), function(r) return torch.cumsum(a, 2, {out = r}) end, torch.zeros(3, 4))
    writes(torch.mm(a, b:t()), function(r) return torch.mm(a, b:t(), {out = r}) end, torch.empty(0))
    writes(torch.addmm(torch.ones(3, 3), a, b:t()),
           function(r) return torch.addmm(torch.ones(3, 3), a, b:t(), {out = r}) end, torch.empty(3, 3))
    writes(torch.clamp(a, -0.5, 0.5), function(r) return torch.clamp(a, -0.5, 0.5, {out = r}) end, torch.empty(1))
    local idx = torch.tensor({3, 1})
    writes(torch.index_select(a, 2, idx), function(r) return torch.index_select(a, 2, idx, {out = r}) end, torch.empty(0))
    writes(torch.masked_select(a, a:gt(0)), function(r) return torch.masked_select(a, a:gt(0), {out = r}) end,
           torch.empty(0))
    writes(torch.cat({a, b}, 2), function(r) return torch.cat({a, b}, 2, {out = r}) end, torch.empty(0))
    writes(a:mul(b), function(r) return a:mul(b, {out = r}) end, torch.empty(3, 4))   -- a method too
  end)

  it('converts to r dtype where it holds the result, and refuses where it does not', function()
    writes(torch.add(a, b), function(r) return torch.add(a, b, {out = r}) end, torch.empty(3, 4, {dtype = 'float64'}))
    local i = torch.tensor({1, 2, 3})
    writes(torch.add(i, i), function(r) return torch.add(i, i, {out = r}) end, torch.empty(3, {dtype = 'float32'}))
    local ok, err = pcall(function() return torch.add(a, b, {out = torch.empty(3, 4, {dtype = 'int64'})}) end)
    assert.is_false(ok)
    assert.matches("add: result type float32 can't be cast to the desired output type int64", err, 1, true)
  end)

  it('writes through a view of another tensor, and r may be an input', function()
    local base = torch.zeros(2, 3, 4)
    torch.mul(a, 2, {out = base[2]})
    assert.is_true(torch.equal(base[2], a * 2))
    assert.are.equal(0, base[1]:abs():sum():item())
    local c = a:clone()
    torch.add(c, b, {out = c})
    assert.is_true(torch.equal(c, a + b))
  end)

  it("reports the op's errors at the caller's line", function()
    local ok, err = pcall(function() return torch.add(a, torch.ones(5), {out = torch.empty(0)}) end)
    assert.is_false(ok)
    assert.matches('^spec/out_spec.lua:%d+: add: shapes 3x4 and 5 cannot broadcast', err)
  end)

  it('refuses autograd, a non-tensor, and a read-only r', function()
    local w = a:clone():requires_grad_()
    raises("exp: functions with out= don't support automatic differentiation, but one of the arguments requires grad",
           function() return torch.exp(w, {out = torch.empty(3, 4)}) end)
    torch.no_grad(function() torch.exp(w, {out = torch.empty(3, 4)}) end)        -- no history there
    raises('exp: out must be a tensor, got number', function() return torch.exp(a, {out = 3}) end)
    raises('exp: unsupported operation: more than one element of the written-to tensor (4, expanded) refers to a single',
           function() return torch.exp(a[1], {out = torch.zeros(1):expand(4)}) end)
    raises('sort: takes no out= (the out-of-place ops of one result do)',
           function() return torch.sort(a, 2, {out = torch.empty(0)}) end)
    raises('add_: takes no out= (the out-of-place ops of one result do)',
           function() return a:clone():add_(b, {out = torch.empty(0)}) end)
  end)
end)
