-- autograd_safety_spec.lua: what used to give a silently wrong answer now raises or answers
-- as PyTorch (issue 17, items 8 and 9); expected values come from PyTorch 2.x or the definition.
local torch = require 'torch'
local nn = require 'nn'
local F = nn.F
local Function = torch.autograd.Function

-- the error fn raises, which must point at this file (the caller's line), never at lib/
local function error_of(fn)
  local ok, err = pcall(fn)
  assert.is_false(ok, 'expected an error')
  err = tostring(err)
  assert.truthy(err:find('^[^\n]*autograd_safety_spec%.lua:%d+: '), err)
  return err
end

local function has(err, text) assert.truthy(err:find(text, 1, true), err) end

-- x^2 that saves its input
local Square = Function:extend('Square')
function Square.forward(ctx, x) ctx:save_for_backward(x); return x * x end
function Square.backward(ctx, g) local x = table.unpack(ctx.saved_tensors); return g * 2 * x end

describe('custom Functions and backward', function()
  it('an input changed in place after forward raises, as a built-in node (it gave 202, 204, 206)', function()
    local x = torch.tensor({1.0, 2.0, 3.0}, {requires_grad = true})
    local y = Square.apply(x)
    torch.no_grad(function() x:add_(100) end)
    local err = error_of(function() y:sum():backward() end)
    has(err, 'one of the variables needed for gradient computation has been modified by an inplace operation: '
             .. '[float32 3], needed by SquareBackward, is at version 1; expected version 0 instead')
    local x2 = torch.tensor({1.0, 2.0, 3.0}, {requires_grad = true})
    Square.apply(x2):sum():backward()
    assert.are.same({2, 4, 6}, x2.grad:totable())
  end)

  it('the Function\'s own output saved, then changed in place by the caller, raises', function()
    local Exp = Function:extend('SavedExp')
    function Exp.forward(ctx, x) local y = x:exp(); ctx:save_for_backward(y); return y end
    function Exp.backward(ctx, g) local y = table.unpack(ctx.saved_tensors); return g * y end
    local x = torch.tensor({0.0, 1.0}, {requires_grad = true})
    local y = Exp.apply(x)
    y:mul_(2)
    has(error_of(function() y:sum():backward() end), 'modified by an inplace operation: [float32 2], needed by SavedExpBackward')
  end)

  it('a saved tensor that does not require grad counts too', function()
    local Scale = Function:extend('SavedScale')
    function Scale.forward(ctx, x, w) ctx:save_for_backward(w); return x * w end
    function Scale.backward(ctx, g) local w = table.unpack(ctx.saved_tensors); return g * w, nil end
    local x, w = torch.tensor({1.0, 2.0}, {requires_grad = true}), torch.tensor({3.0, 4.0})
    local y = Scale.apply(x, w)
    w:mul_(10)
    has(error_of(function() y:sum():backward() end), '[float32 2], needed by SavedScaleBackward')
  end)

  it('an input forward changes in place (mark_dirty) is saved as it is after forward', function()
    local ExpIn = Function:extend('ExpInPlace')
    function ExpIn.forward(ctx, x) x:exp_(); ctx:mark_dirty(x); ctx:save_for_backward(x); return x end
    function ExpIn.backward(ctx, g) local y = table.unpack(ctx.saved_tensors); return g * y end
    local a = torch.tensor({0.0, 1.0}, {requires_grad = true})
    ExpIn.apply(a * 1):sum():backward()
    assert.is_true(math.abs(a.grad[1] - 1) < 1e-6 and math.abs(a.grad[2] - math.exp(1)) < 1e-6, tostring(a.grad))
  end)

  it('save_for_backward takes tensors (and nil) only', function()
    local Bad = Function:extend('SaveNumber')
    function Bad.forward(ctx, x) ctx:save_for_backward(x, 2); return x * 2 end
    function Bad.backward(ctx, g) return g * 2 end
    has(error_of(function() Bad.apply(torch.ones(2, {requires_grad = true})) end),
        'save_for_backward can only save tensors, but argument 2 is a number')
  end)

  it("a gradient of another dtype is cast to the input's, as PyTorch (never an int64 .grad)", function()
    for _, dtype in ipairs({'float64', 'int64'}) do
      local Cast = Function:extend('GradTo' .. dtype)
      function Cast.forward(ctx, x) return x * 1 end
      function Cast.backward(ctx, g) return g:to(dtype) end
      local x = torch.ones(3, {requires_grad = true})
      Cast.apply(x):sum():backward()
      assert.are.equal('float32', x.grad.dtype)
      assert.are.same({1, 1, 1}, x.grad:totable())
    end
  end)

  it("a root's gradient of another dtype is cast to the root's: a leaf keeps its dtype", function()
    local x = torch.ones(3, {requires_grad = true})
    x:backward(torch.ones(3, {dtype = 'float64'}))
    assert.are.equal('float32', x.grad.dtype)
  end)
end)

describe('F.pad', function()
  local x = torch.arange(0, 12, {dtype = 'float32'}):view(1, 3, 4)

  it('crops on negative pads, with a gradient (it returned x unchanged)', function()
    local xg = x:clone():requires_grad_()
    local y = F.pad(xg, {-3, 0, 0, 0})
    assert.are.same({{{3}, {7}, {11}}}, y:totable())
    y:sum():backward()
    assert.are.same({{{0, 0, 0, 1}, {0, 0, 0, 1}, {0, 0, 0, 1}}}, xg.grad:totable())
    assert.are.same({{{0, 4, 5}, {0, 8, 9}}}, F.pad(x, {1, -2, -1, 0}):totable())
    assert.are.same({1, 3, 0}, F.pad(x, {-2, -2}):size():totable())
    local xd = torch.randn(2, 3, 5, {dtype = 'float64', requires_grad = true})
    assert.is_true(torch.autograd.gradcheck(function(v) return F.pad(v, {-2, 1, 2, -1}, {value = 0.5}) end, {xd}))
  end)

  it('an impossible crop raises at the caller', function()
    has(error_of(function() F.pad(x, {-5, 0}) end), 'F.pad: padding (-5, 0) crops 5 from dim 3 of size 4')
    has(error_of(function() F.pad(x, {-3, -2}) end), 'crops 5 from dim 3 of size 4')
  end)

  it("takes PyTorch's positional mode and value", function()
    assert.are.same({{{2, 1, 0, 1, 2, 3, 2}, {6, 5, 4, 5, 6, 7, 6}, {10, 9, 8, 9, 10, 11, 10}}},
                    F.pad(x, {2, 1}, 'reflect'):totable())
    assert.are.same({{{2.5, 0, 1, 2, 3, 2.5}, {2.5, 4, 5, 6, 7, 2.5}, {2.5, 8, 9, 10, 11, 2.5}}},
                    F.pad(x, {1, 1}, 'constant', 2.5):totable())
  end)

  it('reflect padding of at least the dim raises (it padded with zeros)', function()
    has(error_of(function() F.pad(x, {5, 5, 5, 5}, 'reflect') end),
        'pad: reflect padding (5, 5) must be less than the input height 3')
    has(error_of(function() F.pad(x, {4, 0}, {mode = 'reflect'}) end),
        'pad: reflect padding (4, 0) must be less than the input width 4')
  end)

  it('circular padding wraps around what the negative pads leave, as PyTorch', function()
    assert.are.same({{{5, 6, 7, 5, 6}, {1, 2, 3, 1, 2}, {5, 6, 7, 5, 6}}},
                    F.pad(x, {-1, 2, 1, -1}, 'circular'):totable())
    has(error_of(function() F.pad(x, {-3, 2}, 'circular') end),
        'pad: circular padding (-3, 2) must be at most the input width 1 left after the crop')
    local xd = torch.randn(2, 3, 5, 6, {dtype = 'float64', requires_grad = true})
    assert.is_true(torch.autograd.gradcheck(function(v) return F.pad(v, {-2, 3, 1, -3}, 'circular') end, {xd}))
  end)

  it('a wrong mode, option or value raises rather than pads with zeros', function()
    has(error_of(function() F.pad(x, {1, 1}, 'reflection') end), "mode must be 'constant', 'reflect', "
                                                                   .. "'replicate' or 'circular', got 'reflection'")
    has(error_of(function() F.pad(x, {1, 1}, 1.5) end), 'F.pad: argument 3 must be a mode')
    has(error_of(function() F.pad(x, {1, 1}, {mod = 'reflect'}) end), "F.pad: unknown option 'mod'")
    has(error_of(function() F.pad(x, {1, 1}, 'reflect', 2) end), "F.pad: mode 'reflect' takes no value (got 2)")
    has(error_of(function() F.pad(x, {1.5, 1}) end), 'F.pad: pad 1 must be an integer, got 1.5')
  end)
end)

describe('hooks and setters', function()
  it('a tensor hook returning something other than a tensor or nil raises (it was ignored)', function()
    local x = torch.ones(3, {requires_grad = true})
    x:register_hook(function() return 5 end)
    has(error_of(function() (x * 2):sum():backward() end),
        'hook: expected a tensor or nil, but the hook returned a number')
    assert.is_nil(x.grad)
  end)

  it('a tensor hook may not change the shape or dtype of the gradient', function()
    local x = torch.ones(3, {requires_grad = true})
    local y = x * 1
    y:register_hook(function(g) return g:to('float64') end)
    has(error_of(function() (y * 2):sum():backward() end),
        'hook: returned a gradient of dtype float64 for a gradient of dtype float32')
    local z = torch.ones(3, {requires_grad = true})
    z:register_hook(function(g) return g:narrow(1, 1, 2) end)
    has(error_of(function() (z * 2):sum():backward() end), 'hook: returned a gradient of shape 2 for a tensor of shape 3')
  end)

  it('a post-accumulate-grad hook must return nothing', function()
    local x = torch.ones(3, {requires_grad = true})
    x:register_post_accumulate_grad_hook(function() return 5 end)
    has(error_of(function() (x * 2):sum():backward() end), 'hooks must return nothing, this one returned a number')
  end)

  it('x.grad = t checks the dtype and shape (it took int64 and failed at the next backward)', function()
    local x = torch.ones(3, {requires_grad = true})
    has(error_of(function() x.grad = torch.zeros(3, {dtype = 'int64'}) end),
        'grad: assigned grad has dtype int64 but the tensor has dtype float32')
    has(error_of(function() x.grad = torch.zeros(3, {dtype = 'float64'}) end), 'assigned grad has dtype float64')
    has(error_of(function() x.grad = torch.zeros(3, 1) end), 'grad: assigned grad has shape 3x1 but the tensor has shape 3')
    x.grad = torch.full({3}, 5.0)
    local y = x * 2
    y:sum():backward()
    assert.are.same({7, 7, 7}, x.grad:totable())
    x.grad = nil
    assert.is_nil(x.grad)
  end)

  it('an integer tensor cannot require grad', function()
    has(error_of(function() torch.zeros(3, {dtype = 'int64'}):requires_grad_() end),
        'only tensors of floating point dtype can require gradients (got int64)')
    has(error_of(function() local t = torch.zeros(3, {dtype = 'int64'}); t.requires_grad = true end),
        'only tensors of floating point dtype can require gradients')
    has(error_of(function() torch.tensor({1, 2}, {requires_grad = true}) end), 'floating point dtype')
  end)
end)
