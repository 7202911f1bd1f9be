-- Custom autograd Functions in Lua (a custom ReLU, MyReLU, sigmoid and
-- straight-through estimator), several inputs and outputs, mark_dirty,
-- and inference mode.
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
  it("runs a custom ReLU Function (MyReLU) as written, and gradcheck agrees", function()
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

  it("runs a custom sigmoid Function, defined with torch.class", function()
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

  it('raise, as PyTorch, when backward returns the wrong number of gradients', function()
    local x = randd(2):requires_grad_()
    local function check(name, grads, expected)
      local F = Function:extend(name)
      function F.forward(ctx, a, k) return a * k end
      function F.backward(ctx, g) return grads(g) end
      local ok, err = pcall(function() F.apply(x, 2):sum():backward() end)
      assert.is_false(ok)
      assert.truthy(err:find(expected, 1, true), err)
    end
    check('Fewer', function(g) return g end,
          'function FewerBackward returned an incorrect number of gradients (expected 2, got 1)')
    check('More', function(g) return g, nil, g end,
          'function MoreBackward returned an incorrect number of gradients (expected 2, got 3)')
    check('ForNumber', function(g) return g, g end,
          'function ForNumberBackward returned a gradient different than nil at position 2, '
          .. 'but the corresponding forward input was not a tensor')
    -- one per argument, and trailing nils past them, are fine
    local Fine = Function:extend('Fine')
    function Fine.forward(ctx, a, k) return a * k end
    function Fine.backward(ctx, g) return g * 2, nil, nil end
    Fine.apply(x, 2):sum():backward()
    assert.are.same({2, 2}, x.grad:totable())
  end)

  it('refuse ctx.saved_tensors once backward freed the graph, unless retained', function()
    local kept
    local Sq = Function:extend('Square')
    function Sq.forward(ctx, a)
      kept = ctx
      ctx:save_for_backward(a)
      return a * a
    end
    function Sq.backward(ctx, g) return g * 2 * ctx.saved_tensors[1] end
    local x = randd(2):requires_grad_()
    Sq.apply(x):sum():backward({retain_graph = true})
    assert.are.equal(1, #kept.saved_tensors)
    Sq.apply(x):sum():backward()
    local ok, err = pcall(function() return kept.saved_tensors end)
    assert.is_false(ok)
    assert.truthy(err:find('Trying to backward through the graph a second time (or directly access saved '
                           .. 'tensors after they have already been freed)', 1, true), err)
  end)

  it('name the caller, not lib/torch, in anomaly mode', function()
    local NaNs = Function:extend('NaNs')
    function NaNs.forward(ctx, a) return a * 1 end
    function NaNs.backward(ctx, g) return g * (0 / 0) end
    local x = randd(2):requires_grad_()
    local y = torch.autograd.detect_anomaly(function() return NaNs.apply(x) end)  -- line + 0
    local here = debug.getinfo(1, 'Sl')
    local ok, err = pcall(torch.autograd.detect_anomaly, function() y:sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find("Function 'NaNsBackward' returned nan values", 1, true), err)
    assert.truthy(err:find('its forward op was called at ' .. here.short_src .. ':' .. (here.currentline - 1), 1, true),
                  err)
  end)

  it('frees its node, result and ctx without a backward, or after one that retains the graph', function()
    -- the node holds ctx and the Lua backward where the collector cannot look (the
    -- registry): neither may hold the result, or result and node keep each other alive
    local kinds = {}
    kinds.Plain = function(ctx, x) return x * 2 end
    kinds.SavesResult = function(ctx, x) local y = x:exp() ctx:save_for_backward(y) return y end
    kinds.SavesDirty = function(ctx, x) x:mul_(2) ctx:mark_dirty(x) ctx:save_for_backward(x) return x end
    kinds.TwoResults = function(ctx, x) ctx:save_for_backward(x) return x * 2, x * 3 end
    local x = randd(1000):requires_grad_()
    local function settled()
      collectgarbage()
      collectgarbage()
      return torch.memory_stats().allocated
    end
    for name, forward in pairs(kinds) do
      local F = Function:extend(name)
      F.forward = forward
      function F.backward(ctx, g1, g2) return g1 * 2 + (g2 or 0) end
      for _, retain in ipairs({false, true}) do
        local function call()
          local y = F.apply(name == 'SavesDirty' and x * 1 or x)
          if retain then y:sum():backward({retain_graph = true}) end
        end
        call()                                   -- x.grad, once
        local base = settled()
        for _ = 1, 200 do call() end
        assert.are.equal(base, settled(), name .. (retain and ' with retain_graph' or ''))
      end
    end
  end)

  it('give backward its saved result with the node as history only under create_graph', function()
    local seen = {}
    local Exp = Function:extend('SavedExp')
    function Exp.forward(ctx, a) local y = a:exp() ctx:save_for_backward(y) return y end
    function Exp.backward(ctx, g)
      local y = ctx.saved_tensors[1]
      seen[#seen + 1] = y.grad_fn and y.grad_fn:name() or 'none'
      return g * y
    end
    local x = randd(3):requires_grad_()
    local g = torch.autograd.grad(Exp.apply(x):sum(), x, {create_graph = true})[1]
    -- the second derivative flows through the saved result (that backward runs again, plain)
    close(torch.autograd.grad(g:sum(), x)[1], x:detach():exp(), 1e-12)
    assert.are.same({'SavedExpBackward', 'none'}, seen)
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
