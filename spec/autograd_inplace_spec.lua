-- In-place ops under autograd: t:op_(...) is t = t:op(...) for the graph;
-- leaves that require grad refuse; saved tensors and stale views raise.
local torch = require 'torch'
local support = dofile('spec/support/gradients.lua')
local close = support.close

local function leaf(t) return torch.tensor(t, {dtype = 'float64', requires_grad = true}) end

describe('in-place ops with autograd', function()
  it('record pointwise in-place ops on tensors with history as their out-of-place forms', function()
    local x = leaf({1, 2, 3})
    local y = x * 2
    y:mul_(x)                     -- 2 x^2
    y:sin_()
    y:add_(x, {alpha = 3})        -- sin(2 x^2) + 3 x
    assert.are.equal('AddBackward', y.grad_fn:name())
    assert.is_false(y.is_leaf)
    y:sum():backward()
    local expected = leaf({1, 2, 3})
    ;((expected * expected * 2):sin() + expected * 3):sum():backward()
    close(x.grad, expected.grad, 1e-12)
  end)

  it('give a plain tensor history when an in-place op reads a tensor that requires grad', function()
    local w = leaf({0.5, 1.5})
    local a = torch.zeros(2, {dtype = 'float64'})
    assert.is_false(a.requires_grad)
    a:add_(w * 3)
    a:mul_(w)                     -- 3 w^2
    assert.is_true(a.requires_grad)
    a:sum():backward()
    close(w.grad, torch.tensor({3.0, 9.0}, {dtype = 'float64'}))
  end)

  it('handle x:op_(x) and computations in a promoted dtype', function()
    local x = leaf({1, 2})
    local y = x * 1
    y:mul_(y)                      -- x^2
    y:sum():backward()
    close(x.grad, torch.tensor({2.0, 4.0}, {dtype = 'float64'}))
    local f = torch.tensor({1.0, 2.0}, {requires_grad = true})       -- float32
    local g = f * 1
    g:mul_(leaf({3, 4}))          -- float64 operand, result stored as float32
    assert.are.equal('float32', g.dtype)
    g:sum():backward()
    close(f.grad, torch.tensor({3.0, 4.0}))
  end)

  it('differentiate the other in-place ops through their out-of-place forms', function()
    local x = leaf({-1, 2, 3})
    local y = x * 1
    y:clamp_(0, 2.5)
    y:masked_fill_(torch.tensor({false, false, true}), 7)
    y:sum():backward()
    close(x.grad, torch.tensor({0.0, 1.0, 0.0}, {dtype = 'float64'}))
    x.grad = nil
    local q = x * 1
    q:lerp_(x * 0 + 10, 0.25)
    q:sum():backward()
    close(x.grad, torch.tensor({0.75, 0.75, 0.75}, {dtype = 'float64'}))
  end)

  it('copy_ (and Torch7 copy) into a plain tensor carries the source history', function()
    local x = leaf({1, 2, 3})
    local out = torch.zeros(3, {dtype = 'float64'})
    out:copy_(x * 2)
    out:sum():backward()
    close(x.grad, torch.tensor({2.0, 2.0, 2.0}, {dtype = 'float64'}))
    local m = leaf({{1, 2}, {3, 4}})
    local o = torch.zeros(4, {dtype = 'float64'})
    o:copy(m * 1)                 -- Torch7: same element count, any shape
    ;(o * torch.tensor({1.0, 2.0, 3.0, 4.0}, {dtype = 'float64'})):sum():backward()
    close(m.grad, torch.tensor({{1.0, 2.0}, {3.0, 4.0}}, {dtype = 'float64'}))
  end)

  it('fill_ and zero_ give a zero gradient (PyTorch), random fills leave a constant', function()
    local x = leaf({1, 2})
    local y = x * 3
    y:fill_(1)
    assert.are.equal('FillBackward', y.grad_fn:name())
    local w = x * 3
    w:zero_()
    assert.are.equal('ZeroBackward', w.grad_fn:name())
    ;(y + w):sum():backward()
    close(x.grad, torch.zeros(2, {dtype = 'float64'}))
    -- a value that requires grad gets the sum of the gradient (PyTorch's fill_ with a 0-dim tensor)
    local v = torch.tensor(2.0, {dtype = 'float64', requires_grad = true})
    local f = x * 1
    f:fill_(v)
    ;(f * torch.tensor({3.0, 4.0}, {dtype = 'float64'})):sum():backward()
    close(v.grad, torch.tensor(7.0, {dtype = 'float64'}))
    local z = x * 3
    z:uniform_()
    assert.is_false(z.requires_grad)
    local b = x * 1
    b:bernoulli_(0.5)
    assert.is_false(b.requires_grad)
  end)

  it('refuse in-place ops on leaves that require grad, except under no_grad', function()
    local w = leaf({1, 2})
    local ok, err = pcall(function() w:add_(1) end)
    assert.is_false(ok)
    assert.truthy(err:find('add_: a leaf Variable that requires grad is being used in an in-place operation',
                           1, true), err)
    ok, err = pcall(function() w:clamp_(0, 1) end)
    assert.truthy(err:find('clamp_: a leaf Variable', 1, true), err)
    torch.no_grad(function() w:mul_(2) end)
    close(w:detach(), torch.tensor({2.0, 4.0}, {dtype = 'float64'}))
  end)

  it('refuse in-place ops on views of leaves that require grad, except under no_grad (PyTorch)', function()
    local w = torch.ones(3, {requires_grad = true})
    local writes = {
      ['narrow:mul_'] = function() w:narrow(1, 1, 2):mul_(5) end,
      ['slice:fill_'] = function() w[{{1, 2}}]:fill_(7) end,
      ['select:zero_'] = function() w:select(1, 1):zero_() end,
      ['t:add_'] = function() w:t():add_(1) end,
      ['view of a view:copy_'] = function() w:view(3, 1):narrow(1, 2, 1):copy_(torch.zeros(1, 1)) end,
      ['index assignment'] = function() w:narrow(1, 2, 2)[1] = 4 end,
    }
    for name, write in pairs(writes) do
      local ok, err = pcall(write)
      assert.is_false(ok, name)
      assert.truthy(err:find('a view of a leaf Variable that requires grad is being used in an in-place operation',
                             1, true), err)
    end
    assert.are.same({1, 1, 1}, w:detach():totable())
    torch.no_grad(function() w:narrow(1, 1, 2):mul_(5) end)
    assert.are.same({5, 5, 1}, w:detach():totable())
    -- views of tensors with history, and of detached leaves, stay writable
    local v = (w * 2):narrow(1, 1, 2)
    v:mul_(3)
    v:sum():backward()
    assert.are.same({6, 6, 0}, w.grad:totable())
    w:detach():narrow(1, 3, 1):fill_(0)
    assert.are.same({5, 5, 0}, w:detach():totable())
  end)

  it('refuse detach_ on a view (PyTorch), and let a tensor with history detach in place', function()
    local w = torch.ones(3, {requires_grad = true})
    local ok, err = pcall(function() (w * 2):narrow(1, 1, 2):detach_() end)
    assert.is_false(ok)
    assert.truthy(err:find("detach_: Can't detach views in-place. Use detach() instead.", 1, true), err)
    assert.is_false(pcall(function() w:t():detach_() end))
    local y = w * 2
    y:detach_()
    assert.is_true(y.is_leaf)
    assert.is_false(y.requires_grad)
  end)

  it('count in-place writes in x._version, shared by views', function()
    local x = torch.zeros(3)
    local v0 = x._version
    x:add_(1)
    assert.are.equal(v0 + 1, x._version)
    local view = x:narrow(1, 1, 2)
    view:mul_(2)
    assert.are.equal(v0 + 2, x._version)
    assert.are.equal(x._version, view._version)
    x[3] = 5
    assert.are.equal(v0 + 3, x._version)
  end)

  it('raise when a saved tensor was changed in place', function()
    local x = leaf({1, 2})
    local c = x:exp()                 -- ExpBackward saves its output
    c:mul_(2)
    local ok, err = pcall(function() c:sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('modified by an inplace operation', 1, true), err)
  end)

  it('do not save what a product by a number does not need', function()
    local x = leaf({1, 2})
    local y = x * 1
    local z = y * 3                   -- saves nothing of y
    y:add_(1)
    z:sum():backward()
    close(x.grad, torch.tensor({3.0, 3.0}, {dtype = 'float64'}))
  end)

  it('raise on a view whose base was changed in place with history, instead of a wrong gradient', function()
    local x = leaf({1, 2, 3})
    local b = x * 1
    local v = b:narrow(1, 1, 2)
    b:mul_(2)
    local ok, err = pcall(function() (v * 1):sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('shares its storage with a tensor', 1, true), err)
    -- a view taken after the change is fine
    local v2 = b:narrow(1, 1, 2)
    ;(v2 * 1):sum():backward()
    close(x.grad, torch.tensor({2.0, 2.0, 0.0}, {dtype = 'float64'}))
  end)

  it('raise on a base whose view was changed in place with history', function()
    local x = leaf({1, 2, 3})
    local b = x * 1
    b:narrow(1, 1, 2):mul_(2)
    local ok, err = pcall(function() (b * 1):sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('shares its storage with a tensor', 1, true), err)
  end)

  -- the saved copy of self must keep self's history from before the op: a
  -- second derivative through x:mul_(y) reads x as it was (x * 1's node),
  -- not the mul_ node that x:mul_ gave x afterwards
  it('give second derivatives through in-place ops that save self', function()
    local x = torch.tensor({0.3, -0.7, 1.1}, {dtype = 'float64'})
    local y = torch.tensor({1.3, 0.6, -0.4}, {dtype = 'float64'})
    local z = torch.tensor({0.9, 1.4, 1.2}, {dtype = 'float64'})
    local cases = {
      mul_ = function(a, b) local c = a * 1; return c:mul_(b) end,
      square = function(a) local c = a * 1; return c:mul_(c) end,
      div_ = function(a, b) local c = a * 1; return c:div_(b) end,
      sin_ = function(a) local c = a * 1; return c:sin_() end,
      lerp_ = function(a, b, w) local c = a * 1; return c:lerp_(b, w) end,
      addcdiv_ = function(a, b, d) local c = a * 1; return c:addcdiv_(b, d, {value = 0.5}) end,
      clamp_ = function(a, lo, hi) local c = a * 1; return c:clamp_(lo - 0.5, hi) end,
    }
    for name, f in pairs(cases) do
      local ins = {x:clone():requires_grad_(), y:clone():requires_grad_(), z:clone():requires_grad_()}
      local ok, err = pcall(torch.autograd.gradgradcheck, f, ins)
      assert(ok, name .. ': ' .. tostring(err))
    end
  end)

  it('refuse to store a float result into an integer self, under autograd too', function()
    local i = torch.tensor({1, 2})
    local ok, err = pcall(function() i:add_(torch.tensor({0.5, 0.5}, {requires_grad = true})) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("add_: result type float32 can't be cast to the desired output type int64", 1, true),
                  err)
    ok, err = pcall(function() i:clamp_(torch.tensor({1.5, 1.5}, {requires_grad = true}), 3) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find("clamp_: result type float32 can't be cast", 1, true), err)
    assert.are.same({1, 2}, i:totable())
  end)

  it('name the op and both sizes when broadcasting would make the result larger than self', function()
    local x = torch.ones(5):requires_grad_() * 1
    local ok, err = pcall(function() x:add_(torch.ones(3, 5)) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('add_: self has size 5 but the result has size 3x5', 1, true), err)
    local m = torch.ones(5):requires_grad_() * 1
    ok, err = pcall(function() m:addmm_(torch.ones(3, 4), torch.ones(4, 5)) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('addmm_: self has size 5 but the result has size 3x5', 1, true), err)
  end)
end)

describe('set_', function()
  it('makes a tensor view another storage and keeps its identity and autograd state', function()
    local p = torch.randn(2, 3):requires_grad_()
    local flat = torch.zeros(10)
    torch.no_grad(function()
      flat:narrow(1, 1, 6):copy_(p:view(-1))
      p:set_(flat:narrow(1, 1, 6):view(2, 3))
    end)
    assert.is_true(p.requires_grad)
    flat[1] = 42
    assert.are.equal(42, p[1][1])
    local gflat = torch.zeros(10)
    p.grad = gflat:narrow(1, 2, 6):view(2, 3)
    ;(p * 2):sum():backward()
    assert.are.same({0, 2, 2, 2, 2, 2, 2, 0, 0, 0}, gflat:_flat_values())
    assert.has_error(function() p:set_(torch.zeros(3)) end)
  end)
end)
