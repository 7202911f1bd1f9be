-- autograd_shape_spec.lua: derivatives of views, indexing and shape ops,
-- checked against central finite differences in float64, on contiguous and
-- transposed inputs, plus second derivatives through narrow and cat.
local torch = require 'torch'

local support = dofile('spec/support/gradients.lua')
local numeric_grad, close, gradcheck, randd =
  support.numeric_grad, support.close, support.gradcheck, support.randd

-- a nonlinear scalar of y, so every element's gradient differs
local function loss(y) return (y * y:sin()):sum() end

-- op checked on a contiguous input of shape (a, b, ...) and on a transposed
-- one (the first and last dims swapped back inside f)
local function check(op, ...)
  local shape = {...}
  gradcheck(function(t) return loss(op(t)) end, randd(table.unpack(shape)))
  if #shape >= 2 then
    local rev = {table.unpack(shape)}
    rev[1], rev[#rev] = shape[#shape], shape[1]
    gradcheck(function(t) return loss(op(t:transpose(1, #shape))) end, randd(table.unpack(rev)))
  end
end

local function tableloss(parts)
  local s
  for i, p in ipairs(parts) do
    local l = loss(p) * i
    s = s and s + l or l
  end
  return s
end

describe('autograd of views', function()
  torch.manual_seed(11)
  it('narrow and select', function()
    check(function(t) return t:narrow(1, 2, 2) end, 4, 3)
    check(function(t) return t:narrow(2, -2, 2) end, 3, 4)
    check(function(t) return t:select(1, 2) end, 3, 4)
    check(function(t) return t:select(2, -1) end, 3, 4, 2)
    assert.are.equal('<NarrowBackward>', tostring(torch.ones(3, {requires_grad = true}):narrow(1, 1, 2).grad_fn))
  end)

  it('Torch7 indexing x[i] and x[{...}]', function()
    check(function(t) return t[2] end, 3, 4)
    check(function(t) return t[-1] end, 3, 4, 2)
    check(function(t) return t[{{2, 3}}] end, 4, 3)
    check(function(t) return t[{{}, 2}] end, 3, 4)
    check(function(t) return t[{2, {1, -2}}] end, 3, 4)
    check(function(t) return t[{{2, -1}, {}, 1}] end, 3, 4, 2)
    -- a whole-tensor slice keeps the history
    check(function(t) return t[{}] end, 3, 2)
  end)

  it('permute, movedim and transposes', function()
    check(function(t) return t:permute(3, 1, 2) * torch.arange(1, 3, {dtype = 'float64'}) end, 3, 2, 4)
    check(function(t) return t:movedim(1, 3) end, 2, 3, 4)
    check(function(t) return t:permute(2, 1) end, 3, 4)
  end)

  it('diagonal and unfold', function()
    check(function(t) return t:diagonal() end, 3, 4)
    check(function(t) return t:diagonal(1) end, 4, 4)
    check(function(t) return t:diagonal(-1) end, 4, 3)
    check(function(t) return t:unfold(1, 3, 1) end, 6, 2)      -- overlapping windows
    check(function(t) return t:unfold(2, 2, 3) end, 2, 7)      -- gaps
  end)

  it('flatten and unflatten', function()
    check(function(t) return t:flatten() end, 3, 4)
    check(function(t) return t:flatten(2, 3) end, 2, 3, 4)
    check(function(t) return t:unflatten(2, {2, 2}) end, 3, 4)
  end)
end)

describe('autograd of joins and splits', function()
  torch.manual_seed(12)
  it('cat of two and of many inputs (a tree of nodes)', function()
    local b = randd(2, 3)
    check(function(t) return torch.cat({t, b}, 1) end, 3, 3)
    check(function(t) return torch.cat({b:t(), t, t * 2}, 2) end, 3, 2)
    check(function(t)
      local list = {}
      for i = 1, 8 do list[i] = i % 3 == 0 and b[{{1, 1}}] or t * i end
      return torch.cat(list, 1)
    end, 1, 3)
    check(function(t)
      local list = {}
      for i = 1, 11 do list[i] = t:narrow(1, (i - 1) % 3 + 1, 1) * i end
      return torch.cat(list, 2)
    end, 3, 2)
    assert.are.equal('<CatBackward>', tostring(torch.cat({torch.ones(2, {requires_grad = true}), torch.ones(1)}).grad_fn))
  end)

  it('cat promotes and gives each input its own dtype', function()
    local a = torch.ones(2, {requires_grad = true})
    local b = torch.ones(3, {dtype = 'float64', requires_grad = true})
    local y = torch.cat({a, b})
    assert.are.equal('float64', y.dtype)
    ;(y * torch.arange(1, 6, {dtype = 'float64'})):sum():backward()
    assert.are.equal('float32', a.grad.dtype)
    close(a.grad, torch.tensor({1.0, 2.0}))
    close(b.grad, torch.tensor({3.0, 4.0, 5.0}, {dtype = 'float64'}))
  end)

  it('stack', function()
    local b = randd(3, 2)
    check(function(t) return torch.stack({t, b:t(), t * 3}, 1) end, 2, 3)
    check(function(t) return torch.stack({t, t * 2, t * 3, t * 4, t * 5}, 3) end, 2, 3)
  end)

  it('split and chunk', function()
    gradcheck(function(t) return tableloss(t:split(2)) end, randd(5, 3))
    gradcheck(function(t) return tableloss(t:split({1, 3}, 2)) end, randd(2, 4))
    gradcheck(function(t) return tableloss(t:t():chunk(3, 1)) end, randd(2, 3))
    -- pieces not used get no gradient, the others do
    local x = torch.ones(4, {requires_grad = true})
    local parts = x:chunk(2)
    ;(parts[2] * 3):sum():backward()
    close(x.grad, torch.tensor({0.0, 0, 3, 3}))
  end)
end)

describe('autograd of indexing', function()
  torch.manual_seed(13)
  it('index_select, with repeated indices', function()
    check(function(t) return t:index_select(1, torch.tensor({3, 1, 3})) end, 3, 4)
    check(function(t) return t:index_select(2, torch.tensor({2, 2, -1})) end, 3, 4)
  end)

  it('gather', function()
    local idx = torch.tensor({{1, 2, 2}, {3, 1, 1}})
    check(function(t) return t:gather(2, idx) end, 2, 3)
    check(function(t) return t:gather(1, torch.tensor({{1, 2}, {2, 2}})) end, 2, 2)
  end)

  it('x[index tensor] and x[mask]', function()
    check(function(t) return t[torch.tensor({2, 2, 1})] end, 3, 4)
    check(function(t) return t[torch.tensor({{1, 3}, {3, 3}})] end, 3, 2)
    local mask = torch.tensor({{true, false, true}, {false, false, true}})
    check(function(t) return t[mask] end, 2, 3)
    check(function(t) return t[torch.tensor({true, false, true})] end, 3, 2)
    check(function(t) return t:masked_select(mask) end, 2, 3)
  end)

  it('masked_fill, with a broadcast mask and a tensor value', function()
    local mask = torch.tensor({{true, false, true}, {false, false, true}})
    check(function(t) return t:masked_fill(mask, 2.5) end, 2, 3)
    check(function(t) return t:masked_fill(torch.tensor({false, true, true}), -1) end, 2, 3)
    local x = randd(2, 3)
    gradcheck(function(v) return loss(x:masked_fill(mask, v)) end, randd())
  end)

  it('where on both sides, with broadcasting and scalars', function()
    local cond = torch.tensor({{true, false, true}, {false, true, true}})
    local b = randd(1, 3)
    check(function(t) return torch.where(cond, t, b) end, 2, 3)
    gradcheck(function(t) return loss(torch.where(cond, randd(2, 3):fill(0.5), t)) end, randd(1, 3))
    gradcheck(function(t) return loss(torch.where(cond, t, 0.25)) end, randd(2, 3))
    gradcheck(function(t) return loss(t:where(cond, t * 2)) end, randd(2, 3))
  end)
end)

describe('autograd of elementwise shape ops', function()
  torch.manual_seed(14)
  it('clamp with numbers and tensors', function()
    -- values kept away from the bounds, where the derivative jumps
    local function away(x) return x + x:sign() * 0.05 end
    check(function(t) return away(t):clamp(-0.5, 0.6) end, 3, 4)
    check(function(t) return away(t):clamp_min(0.1) end, 3, 4)
    check(function(t) return away(t):clamp({max = -0.2}) end, 3, 4)
    local lo = torch.tensor({-2.0, 0.4, -0.3}, {dtype = 'float64'})
    check(function(t) return away(t):clamp(lo, 0.8) end, 2, 3)
    local x = torch.tensor({-2.0, 0.0, 3.0}, {requires_grad = true})
    x:clamp(-1, 1):sum():backward()
    close(x.grad, torch.tensor({0.0, 1, 0}))
  end)

  -- the subgradient at the bounds, as PyTorch 2.15 gives it: number bounds
  -- pass nothing at a bound; tensor bounds share g where x equals one, a
  -- bound takes it where it is the result, and hi wins where lo > hi
  it('clamp: the gradient at and between the bounds is PyTorch\'s', function()
    -- {x, lo, hi, dx, dlo, dhi}, printed by PyTorch 2.15.0 for every x, lo, hi in {0, 1, 2}
    local want = {
      {0, 0, 0, 1, 0, 0}, {0, 0, 1, 0.5, 0.5, 0}, {0, 0, 2, 0.5, 0.5, 0}, {0, 1, 0, 0, 0, 1},
      {0, 1, 1, 0, 1, 0}, {0, 1, 2, 0, 1, 0}, {0, 2, 0, 0, 0, 1}, {0, 2, 1, 0, 0, 1}, {0, 2, 2, 0, 1, 0},
      {1, 0, 0, 0, 0, 1}, {1, 0, 1, 0.5, 0, 0.5}, {1, 0, 2, 1, 0, 0}, {1, 1, 0, 0, 0, 1}, {1, 1, 1, 1, 0, 0},
      {1, 1, 2, 0.5, 0.5, 0}, {1, 2, 0, 0, 0, 1}, {1, 2, 1, 0, 0, 1}, {1, 2, 2, 0, 1, 0}, {2, 0, 0, 0, 0, 1},
      {2, 0, 1, 0, 0, 1}, {2, 0, 2, 0.5, 0, 0.5}, {2, 1, 0, 0, 0, 1}, {2, 1, 1, 0, 0, 1}, {2, 1, 2, 0.5, 0, 0.5},
      {2, 2, 0, 0, 0, 1}, {2, 2, 1, 0, 0, 1}, {2, 2, 2, 1, 0, 0},
    }
    local function leaf(v) return torch.tensor({v + 0.0}, {requires_grad = true}) end
    for _, c in ipairs(want) do
      local x, lo, hi = leaf(c[1]), leaf(c[2]), leaf(c[3])
      local y = torch.clamp(x, lo, hi)
      assert.are.equal('ClampBackward', y.grad_fn:name())
      y:sum():backward()
      assert.are.same({c[4], c[5], c[6]}, {x.grad[1], lo.grad[1], hi.grad[1]},
                      string.format('clamp(%g, %g, %g)', c[1], c[2], c[3]))
    end
    -- number bounds, and one bound as a number or a tensor (PyTorch 2.15.0)
    local x = torch.tensor({0.5, 1, 1.5, 2, 2.5}, {requires_grad = true})
    local function grad_of(f, name)
      x.grad = nil
      local y = f(x)
      assert.are.equal(name, y.grad_fn:name())
      y:sum():backward()
      return x.grad:totable()
    end
    assert.are.same({0, 0, 1, 0, 0}, grad_of(function(t) return t:clamp(1, 2) end, 'ClampBackward'))
    assert.are.same({0, 0, 1, 1, 1}, grad_of(function(t) return t:clamp({min = 1}) end, 'ClampMinBackward'))
    assert.are.same({1, 1, 1, 0, 0}, grad_of(function(t) return t:clamp_max(2) end, 'ClampMaxBackward'))
    assert.are.same({0, 0.5, 1, 0.5, 0},
                    grad_of(function(t) return t:clamp(torch.tensor(1.0), torch.tensor(2.0)) end, 'ClampBackward'))
    local lo = torch.tensor({0.5, 1, 2, 2, 2}, {requires_grad = true})
    assert.are.same({0.5, 0.5, 0, 0.5, 1}, grad_of(function(t) return t:clamp_min(lo) end, 'ClampMinBackward'))
    assert.are.same({0.5, 0.5, 1, 0.5, 0}, lo.grad:totable())
  end)

  it('repeat', function()
    check(function(t) return t['repeat'](t, 2, 3) end, 2, 3)
    check(function(t) return t['repeat'](t, 3, 1, 2) end, 2, 3)
    check(function(t) return t:repeatTensor({1, 2}) end, 3, 2)
  end)

  it('flip, roll, tril and triu', function()
    check(function(t) return t:flip(1) end, 3, 4)
    check(function(t) return t:flip({1, 2}) end, 3, 4)
    check(function(t) return t:fliplr() end, 3, 4)
    check(function(t) return t:roll(1, 1) end, 3, 4)
    check(function(t) return t:roll({2, -1}, {1, 2}) end, 3, 4)
    check(function(t) return t:roll(5) end, 3, 4)
    check(function(t) return t:tril() end, 4, 4)
    check(function(t) return t:triu(1) end, 3, 4)
    check(function(t) return t:tril(-1) end, 2, 4, 3)
  end)
end)

describe('second derivatives through shape ops', function()
  torch.manual_seed(15)
  -- the gradient of sum(g * g), g = d loss / dx built with create_graph
  local function gradgrad(f, x, gnorm)
    local leaf = x:clone():requires_grad_()
    f(leaf):backward({create_graph = true})
    local g = leaf.grad
    leaf.grad = nil
    ;(g * g):sum():backward()
    close(leaf.grad, numeric_grad(gnorm, x:clone()), 1e-4)
  end

  it('through narrow', function()
    -- f = sum(narrow(x)^3): g = 3 x^2 inside the slice, 0 outside
    gradgrad(function(t) return (t:narrow(2, 2, 2) ^ 3):sum() end, randd(3, 4),
             function(t) local s = t:narrow(2, 2, 2) return (s * s * s * s):sum() * 9 end)
  end)

  it('through cat, index_select and x[{...}]', function()
    local w = randd(5, 3)
    gradgrad(function(t) return (torch.cat({t, t[{{1, 2}}]}, 1):sin() * w):sum() end, randd(3, 3),
             function(t)
               local c = torch.cat({t:cos(), t[{{1, 2}}]:cos()}, 1) * w
               local g = c:narrow(1, 1, 3) + torch.cat({c:narrow(1, 4, 2), torch.zeros(1, 3, {dtype = 'float64'})}, 1)
               return (g * g):sum()
             end)
    gradgrad(function(t) return (t:index_select(1, torch.tensor({1, 1, 2})) ^ 3):sum() end, randd(2, 2),
             function(t) local r1, r2 = t[1], t[2]
               local g1, g2 = r1 * r1 * 6, r2 * r2 * 3
               return (g1 * g1):sum() + (g2 * g2):sum() end)
  end)
end)

describe('autograd of parametric elementwise ops', function()
  torch.manual_seed(16)
  it('leaky_relu and softplus', function()
    local function away(x) return x + x:sign() * 0.05 end
    check(function(t) return away(t):leaky_relu(0.1) end, 3, 4)
    check(function(t) return t:softplus() end, 3, 4)
    check(function(t) return (t * 8):softplus({beta = 2, threshold = 5}) end, 3, 4)
  end)

  it('addcmul and addcdiv in every argument, with broadcasting', function()
    local a, b = randd(2, 3), randd(1, 3):abs() + 0.5
    check(function(t) return t:addcmul(a, b, {value = 0.5}) end, 2, 3)
    gradcheck(function(t) return loss(a:addcmul(t, b, 2)) end, randd(2, 3))
    gradcheck(function(t) return loss(a:addcmul(a, t)) end, randd(1, 3))
    check(function(t) return t:addcdiv(a, b, {value = 0.5}) end, 2, 3)
    gradcheck(function(t) return loss(a:addcdiv(t, b)) end, randd(2, 3))
    gradcheck(function(t) return loss(a:addcdiv(a, t:abs() + 0.5)) end, randd(1, 3))
  end)

  it('lerp with a number or a tensor weight', function()
    local b, w = randd(2, 3), torch.rand(2, 3, {dtype = 'float64'})
    check(function(t) return t:lerp(b, 0.3) end, 2, 3)
    gradcheck(function(t) return loss(b:lerp(t, 0.3)) end, randd(2, 3))
    check(function(t) return t:lerp(b, w) end, 2, 3)
    gradcheck(function(t) return loss(b:lerp(b * 2, t)) end, randd(2, 3))
  end)
end)
