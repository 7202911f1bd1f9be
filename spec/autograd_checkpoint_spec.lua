-- torch.utils.checkpoint, PyTorch's non-reentrant form: the function's nodes
-- keep no saved tensors, backward runs it again (random state restored),
-- and gradients reach its arguments and the parameters it uses.
local torch = require 'torch'
local support = dofile('spec/support/gradients.lua')
local close, randd = support.close, support.randd

describe('torch.utils.checkpoint', function()
  -- a two-layer block with dropout drawn from the generator; calls counts its runs
  local function block(w1, w2, calls)
    return function(h, ...)
      calls.n = calls.n + 1
      calls.extra = select('#', ...)
      local a = h:mm(w1):tanh()
      local keep = torch.rand(a:size(1), a:size(2), {dtype = 'float64'}):lt(0.7):to('float64')
      return (a * keep / 0.7):mm(w2):sigmoid()
    end
  end

  it('gives the same values and gradients as the plain forward, dropout included', function()
    local w1, w2 = randd(4, 6):requires_grad_(), randd(6, 3):requires_grad_()
    local x = randd(5, 4):requires_grad_()
    local net = block(w1, w2, {n = 0})
    torch.manual_seed(7)
    local y = torch.utils.checkpoint(net, x)
    assert.are.equal('SigmoidBackward', y.grad_fn:name())
    ;(y * y):sum():backward()
    local gx, g1, g2 = x.grad:clone(), w1.grad:clone(), w2.grad:clone()
    x.grad, w1.grad, w2.grad = nil, nil, nil
    torch.manual_seed(7)
    local y2 = net(x)
    close(y:detach(), y2:detach(), 1e-12)
    ;(y2 * y2):sum():backward()
    close(gx, x.grad, 1e-12)
    close(g1, w1.grad, 1e-12)
    close(g2, w2.grad, 1e-12)
  end)

  it('gives the parameters fn uses their gradients when the input needs none', function()
    local w1, w2 = randd(4, 6):requires_grad_(), randd(6, 3):requires_grad_()
    local calls = {n = 0}
    local net = block(w1, w2, calls)
    local x = randd(5, 4)
    torch.manual_seed(3)
    local y = torch.utils.checkpoint(net, x, {use_reentrant = false})
    assert.are.equal(0, calls.extra)                -- the options are not fn's
    assert.is_true(y.requires_grad)
    assert.are.same({}, y.grad_fn.saved_shapes)     -- nothing kept for backward
    assert.are.equal(1, calls.n)
    ;(y * y):sum():backward()
    assert.are.equal(2, calls.n)                    -- forward ran again in backward
    local g1, g2 = w1.grad:clone(), w2.grad:clone()
    w1.grad, w2.grad = nil, nil
    torch.manual_seed(3)
    local y2 = net(x)
    ;(y2 * y2):sum():backward()
    close(g1, w1.grad, 1e-12)
    close(g2, w2.grad, 1e-12)
    -- under no_grad it is fn itself
    assert.is_false(torch.no_grad(torch.utils.checkpoint, net, x).requires_grad)
  end)

  it('works with torch.autograd.grad, nesting and create_graph, and runs hooks once', function()
    local w = randd(4, 4):requires_grad_()
    local x = randd(3, 4):requires_grad_()
    local function inner(h) return h:mm(w):tanh() end
    local function outer(h) return torch.utils.checkpoint(inner, h):mm(w):exp() end
    local seen = 0
    w:register_hook(function() seen = seen + 1 end)
    local gs = torch.autograd.grad(torch.utils.checkpoint(outer, x):sum(), {x, w})
    assert.are.equal(1, seen)
    assert.is_nil(w.grad)
    local ps = torch.autograd.grad(outer(x):sum(), {x, w})
    close(gs[1], ps[1], 1e-12)
    close(gs[2], ps[2], 1e-12)
    -- the gradient of a gradient norm, through the recomputed graph
    local function gnorm(y)
      local g = torch.autograd.grad(y, x, {create_graph = true})[1]
      return torch.autograd.grad((g * g):sum(), w)[1]
    end
    close(gnorm(torch.utils.checkpoint(inner, x):sum()), gnorm(inner(x):sum()), 1e-12)
  end)

  it('raises when the second run saves other tensors, and after a backward without retain_graph', function()
    local w = randd(3, 3):requires_grad_()
    local runs = 0
    local y = torch.utils.checkpoint(function(h)
      runs = runs + 1
      local r = h:mm(w)
      if runs > 1 then r = r:exp() end
      return r:tanh()
    end, randd(2, 3))
    local ok, err = pcall(function() y:sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('a different number of tensors was saved during the original forward', 1, true), err)
    local z = torch.utils.checkpoint(function(h) return h:mm(w):tanh() end, randd(2, 3)):sum()
    z:backward({retain_graph = true})
    z:backward()
    ok, err = pcall(function() z:backward() end)
    assert.truthy(err:find('backward through the graph a second time', 1, true), err)
  end)

  it('keeps no intermediate values alive between forward and backward', function()
    local w = randd(256, 256):requires_grad_()
    local function deep(h)
      for _ = 1, 8 do h = h:mm(w):tanh() end
      return h
    end
    local x = randd(256, 256)
    collectgarbage(); collectgarbage()
    local base = torch.memory_stats().allocated
    local plain = deep(x):sum()
    collectgarbage(); collectgarbage()
    local kept_plain = torch.memory_stats().allocated - base
    plain = nil
    collectgarbage(); collectgarbage()
    base = torch.memory_stats().allocated
    local ck = torch.utils.checkpoint(deep, x):sum()
    collectgarbage(); collectgarbage()
    local kept_ck = torch.memory_stats().allocated - base
    assert.is_true(kept_ck * 4 < kept_plain, kept_ck .. ' vs ' .. kept_plain)
    ck:backward()
    assert.are.same(w:size(), w.grad:size())
  end)
end)
