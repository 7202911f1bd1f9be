-- Custom autograd Functions in Lua (the seeds' MyReLU, sigmoid and
-- straight-through estimator), several inputs and outputs, mark_dirty,
-- activation checkpointing and inference mode.
local torch = require 'torch'
local support = dofile('spec/support/gradients.lua')
local close = support.close
local Function = torch.autograd.Function

local function randd(...)
  local dims = table.pack(...)
  dims[dims.n + 1] = {dtype = 'float64'}
  return torch.randn(table.unpack(dims, 1, dims.n + 1))
end

describe('torch.autograd.Function', function()
  it("runs the seeds' MyReLU as written, and gradcheck agrees", function()
    local MyReLU = Function:extend('MyReLU')
    function MyReLU.forward(ctx, x)
      ctx:save_for_backward(x)          -- save what backward will need
      return x:clamp(0)
    end
    function MyReLU.backward(ctx, grad_output)
      local x = table.unpack(ctx.saved_tensors)
      local grad_input = grad_output:clone()
      grad_input[x:lt(0)] = 0
      return grad_input
    end
    local x = torch.tensor({-2.0, -0.5, 0.5, 3.0}, {requires_grad = true})
    local y = MyReLU.apply(x):sum()
    y:backward()
    assert.are.same({0, 0, 1, 1}, x.grad:totable())
    assert.are.equal('MyReLUBackward', MyReLU.apply(x).grad_fn:name())
    assert.is_true(torch.autograd.gradcheck(MyReLU.apply, {torch.tensor({-1.3, 0.7, 2.1}, {dtype = 'float64', requires_grad = true})}))
  end)

  it("runs the seeds' SigmoidFunction, defined with torch.class", function()
    local SigmoidFunction = torch.class('SpecSigmoidFunction', 'torch.autograd.Function')
    function SigmoidFunction.forward(ctx, x)
      local output = 1 / (1 + torch.exp(-x))
      ctx:save_for_backward(output)
      return output
    end
    function SigmoidFunction.backward(ctx, grad_output)
      local output = table.unpack(ctx.saved_tensors)
      return grad_output * output * (1 - output)
    end
    local x = randd(4):requires_grad_()
    SigmoidFunction.apply(x):sum():backward()
    local s = x:detach():sigmoid()
    close(x.grad, s * (1 - s), 1e-12)
    assert.is_true(torch.autograd.gradgradcheck(SigmoidFunction.apply, {randd(3):requires_grad_()}))
  end)

  it('passes gradients straight through a rounding (straight-through estimator)', function()
    local STE = Function:extend('RoundSTE')
    function STE.forward(ctx, x) return x:round() end
    function STE.backward(ctx, g) return g end
    local x = torch.tensor({0.2, 1.7, -2.4}, {requires_grad = true})
    local y = STE.apply(x)
    assert.are.same({0, 2, -2}, y:detach():totable())
    ;(y * torch.tensor({1.0, 2.0, 3.0})):sum():backward()
    assert.are.same({1, 2, 3}, x.grad:totable())
  end)

  it('takes non-tensor arguments, tells needs_input_grad, and handles several outputs', function()
    local seen
    local Affine = Function:extend('Affine')
    function Affine.forward(ctx, a, scale, b, c, d)
      seen = ctx.needs_input_grad
      ctx:save_for_backward(a, b)
      ctx.scale = scale
      return a * b * scale, c + d, 'label'
    end
    function Affine.backward(ctx, g1, g2, g3)
      assert.is_nil(g3)
      local a, b = table.unpack(ctx.saved_tensors)
      return g1 * b * ctx.scale, nil, g1 * a * ctx.scale, g2, g2 * 2
    end
    local a, b = randd(2):requires_grad_(), randd(2):requires_grad_()
    local c, d = randd(3):requires_grad_(), randd(3):requires_grad_()
    local p, q, label = Affine.apply(a, 3, b, c, d)
    assert.are.same({true, false, true, true, true}, seen)
    assert.are.equal('label', label)
    ;(p:sum() * 2 + (q * q):sum()):backward()
    close(a.grad, b:detach() * 6, 1e-12)
    close(b.grad, a:detach() * 6, 1e-12)
    close(c.grad, (c:detach() + d:detach()) * 2, 1e-12)
    close(d.grad, (c:detach() + d:detach()) * 4, 1e-12)
  end)

  it('rebases inputs marked dirty and leaves non-differentiable outputs alone', function()
    local Double = Function:extend('DoubleInPlace')
    function Double.forward(ctx, x)
      x:mul_(2)
      ctx:mark_dirty(x)
      local idx = x:argmax()
      ctx:mark_non_differentiable(idx)
      return x, idx
    end
    function Double.backward(ctx, g) return g * 2 end
    local z = torch.ones(3, {dtype = 'float64', requires_grad = true})
    local w = z * 1
    local r, idx = Double.apply(w)
    assert.is_true(rawequal(r, w))
    assert.are.equal('DoubleInPlaceBackward', w.grad_fn:name())
    assert.are.equal('int64', idx.dtype)
    w:sum():backward()
    assert.are.same({2, 2, 2}, z.grad:totable())
    -- a leaf that requires grad cannot be modified in place
    assert.has_error(function() Double.apply(torch.ones(2, {requires_grad = true})) end)
  end)

  it('reports a gradient of the wrong shape or type from backward', function()
    local Bad = Function:extend('BadShape')
    function Bad.forward(ctx, x) return x * 2 end
    function Bad.backward(ctx, g) return g:sum() end
    local x = randd(3):requires_grad_()
    local ok, err = pcall(function() Bad.apply(x):sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('BadShapeBackward', 1, true), err)
    local Worse = Function:extend('BadType')
    function Worse.forward(ctx, x) return x * 2 end
    function Worse.backward(ctx, g) return 'no' end
    ok, err = pcall(function() Worse.apply(x):sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('expected a tensor or nil', 1, true), err)
  end)

  it('packs more than three tracked inputs and still gradchecks', function()
    local Sum5 = Function:extend('WeightedSum5')
    function Sum5.forward(ctx, a, b, c, d, e)
      ctx:save_for_backward(a, b, c, d, e)
      return a * 1 + b * 2 + c * 3 + d * 4 + e * e
    end
    function Sum5.backward(ctx, g)
      local e = ctx.saved_tensors[5]
      return g * 1, g * 2, g * 3, g * 4, g * e * 2
    end
    local inputs = {}
    for i = 1, 5 do inputs[i] = randd(2):requires_grad_() end
    assert.is_true(torch.autograd.gradcheck(Sum5.apply, inputs))
  end)
end)

describe('torch.utils.checkpoint', function()
  local function net(w1, w2)
    return function(h)
      local a = h:mm(w1):tanh()
      local keep = torch.rand(a:size(1), a:size(2), {dtype = 'float64'}):lt(0.7):to('float64')
      return (a * keep / 0.7):mm(w2):sigmoid()      -- dropout, drawn from the generator
    end
  end

  it('gives the same values and gradients as the plain forward, dropout included', function()
    local w1, w2 = randd(4, 6):requires_grad_(), randd(6, 3):requires_grad_()
    local x = randd(5, 4):requires_grad_()
    torch.manual_seed(7)
    local y = torch.utils.checkpoint(net(w1, w2), x)
    assert.are.equal('CheckpointBackward', y.grad_fn:name())
    ;(y * y):sum():backward()
    local gx, g1, g2 = x.grad:clone(), w1.grad:clone(), w2.grad:clone()
    x.grad, w1.grad, w2.grad = nil, nil, nil
    torch.manual_seed(7)
    local y2 = net(w1, w2)(x)
    close(y:detach(), y2:detach(), 1e-12)
    ;(y2 * y2):sum():backward()
    close(gx, x.grad, 1e-12)
    close(g1, w1.grad, 1e-12)
    close(g2, w2.grad, 1e-12)
  end)

  it('keeps no intermediate values alive between forward and backward', function()
    local w = randd(256, 256):requires_grad_()
    local function deep(h)
      for _ = 1, 8 do h = h:mm(w):tanh() end
      return h
    end
    local x = randd(256, 256):requires_grad_()
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
    assert.are.same(x:size(), x.grad:size())
  end)
end)

describe('torch.inference_mode', function()
  it('turns grad mode off inside, says so, and restores both on error', function()
    local x = torch.ones(2, {requires_grad = true})
    local inside, tracked = torch.inference_mode(function()
      return torch.is_inference_mode_enabled(), (x * 2).requires_grad
    end)
    assert.is_true(inside)
    assert.is_false(tracked)
    assert.is_false(torch.is_inference_mode_enabled())
    assert.is_false(pcall(torch.inference_mode, function() error('boom') end))
    assert.is_false(torch.is_inference_mode_enabled())
    assert.is_true(torch.is_grad_enabled())
  end)
end)
