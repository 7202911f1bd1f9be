-- autograd_spec.lua: the first part of autograd -- graph recording, backward,
-- accumulation, higher-order gradients, grad mode, and the guards that refuse
-- what has no derivative yet. Gradients are checked against central finite
-- differences in float64.
local torch = require 'torch'

local support = dofile('spec/support/gradients.lua')
local numeric_grad, close, gradcheck, randd =
  support.numeric_grad, support.close, support.gradcheck, support.randd

describe('autograd basics', function()
  it('x^3 at 3 gives 27, then 18 with create_graph', function()
    local x = torch.tensor({3.0}, {requires_grad = true})
    local y = x ^ 3
    y:backward({create_graph = true})
    assert.are.equal(27, x.grad[1])
    local g = x.grad
    x.grad = nil
    g:backward()
    assert.are.equal(18, x.grad[1])
  end)

  it('records grad_fn with PyTorch names and next_functions', function()
    local a = torch.ones(2, {requires_grad = true})
    local b = a * 2
    assert.are.equal('<MulBackward>', tostring(b.grad_fn))
    assert.are.equal('<AccumulateGrad>', tostring(b.grad_fn.next_functions[1][1]))
    assert.is_nil(b.grad_fn.next_functions[2][1])
    assert.is_true(a.is_leaf)
    assert.is_false(b.is_leaf)
    assert.is_nil(a.grad_fn)
    assert.are.equal('<SumBackward>', tostring(b:sum().grad_fn))
    assert.are.equal('<MmBackward>', tostring(torch.ones(2, 2, {requires_grad = true}):mm(torch.ones(2, 2)).grad_fn))
  end)

  it('accumulates into .grad until it is reset', function()
    local w = torch.ones(3, {requires_grad = true})
    ;(w * torch.tensor({1.0, 2, 3})):sum():backward()
    ;(w * 2):mean():backward()
    close(w.grad, torch.tensor({1 + 2 / 3, 2 + 2 / 3, 3 + 2 / 3}))
    w.grad = nil
    assert.is_nil(w.grad)
    w:sum():backward()
    close(w.grad, torch.ones(3))
    w.grad:zero_()
    close(w.grad, torch.zeros(3))
  end)

  it('.grad never shares memory with a tensor the caller holds', function()
    -- the first gradient may become .grad without a copy only when nothing else sees it
    local x = torch.ones(3, {requires_grad = true})
    local g = torch.tensor({1.0, 2, 3})
    x:backward(g)
    g:fill_(100)
    close(x.grad, torch.tensor({1.0, 2, 3}))
    local w = torch.ones(2, 3, {requires_grad = true})
    local y = w * 2
    local seen
    y:register_hook(function(grad) seen = grad end)
    ;(y * torch.ones(2, 3)):sum():backward()     -- y's gradient a tensor of its own (sum's is expanded)
    seen:fill_(7)                                -- the hook's tensor is not w.grad
    close(w.grad, torch.full({2, 3}, 2))
    local e = torch.ones(1, {requires_grad = true})
    e:expand(4):sum():backward()                 -- a broadcast gradient is summed first
    close(e.grad, torch.tensor({4.0}))
    ;(e * 1):expand(2):sum():backward()
    close(e.grad, torch.tensor({6.0}))
  end)

  it('frees the graph after backward unless retain_graph is set', function()
    local x = torch.ones(2, {requires_grad = true})
    local y = (x * x):sum()
    y:backward({retain_graph = true})
    y:backward()
    close(x.grad, torch.tensor({4.0, 4.0}))
    local ok, err = pcall(function() y:backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('backward through the graph a second time', 1, true))
  end)

  it('takes an explicit gradient for non-scalar outputs and refuses without one', function()
    local x = torch.tensor({1.0, 2.0}, {requires_grad = true})
    local y = x * 3
    local ok, err = pcall(function() y:backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('only for scalar outputs', 1, true))
    y:backward(torch.tensor({1.0, 10.0}))
    close(x.grad, torch.tensor({3.0, 30.0}))
  end)

  it('refuses backward on a tensor without history', function()
    assert.has_error(function() torch.ones(2):sum():backward() end,
      'backward: element 0 of tensors does not require grad and does not have a grad_fn')
  end)

  it('only floating tensors can require grad', function()
    assert.has_error(function() torch.tensor({1, 2}):requires_grad_() end)
    local x = torch.zeros(2)
    x.requires_grad = true
    assert.is_true(x.requires_grad)
  end)

  it('detach gives a tensor without history on the same storage', function()
    local x = torch.ones(2, {requires_grad = true})
    local y = x * 2
    local d = y:detach()
    assert.is_false(d.requires_grad)
    assert.is_true(d:storage() == y:storage())
    y:detach_()
    assert.is_true(y.is_leaf)
    assert.is_false(y.requires_grad)
  end)
end)

describe('grad mode', function()
  it('no_grad stops recording and restores the mode, even after an error', function()
    local x = torch.ones(2, {requires_grad = true})
    assert.is_false(torch.no_grad(function() return (x * 2).requires_grad end))
    assert.is_true(torch.is_grad_enabled())
    assert.has_error(function() torch.no_grad(function() error('boom') end) end)
    assert.is_true(torch.is_grad_enabled())
    torch.set_grad_enabled(false)
    assert.is_false((x * 2).requires_grad)
    assert.is_true(torch.enable_grad(function() return (x * 2).requires_grad end))
    torch.set_grad_enabled(true)
    assert.is_false(torch.inference_mode(function() return (x + 1).requires_grad end))
  end)

  it('lets optimizers update leaves in place under no_grad', function()
    local w = torch.ones(2, {requires_grad = true})
    ;(w * 3):sum():backward()
    torch.no_grad(function() w:sub_(w.grad * 0.1) end)
    close(w, torch.tensor({0.7, 0.7}))
  end)
end)

describe('derivatives', function()
  torch.manual_seed(7)
  -- every elementwise op's derivative, on every layout, is checked by
  -- spec/registry_spec.lua, which walks the op registry
  it('of rounding ops are zero', function()
    local x = torch.tensor({0.3, 1.7}, {dtype = 'float64', requires_grad = true})
    x:floor():sum():backward()
    close(x.grad, torch.zeros(2))
  end)

  -- inputs as laid out: transposed, narrowed (gaps between rows) and
  -- permuted, each really non-contiguous; broadcast operands of both shapes
  local function layouts()
    local t = (torch.rand(4, 3, {dtype = 'float64'}) * 0.8 + 0.1):t()
    local n = (torch.rand(3, 6, {dtype = 'float64'}) * 0.8 + 0.1):narrow(2, 2, 4)
    local p = (torch.rand(4, 2, 3, {dtype = 'float64'}) * 0.8 + 0.1):permute(2, 3, 1):select(1, 2)
    return {transposed = t, narrowed = n, permuted = p}
  end
  for name, x in pairs(layouts()) do
    it('on a ' .. name .. ' input: broadcasting views and reductions', function()
      assert.is_false(x:is_contiguous())
      local function check(f, ...)
        local inputs = {}
        for i, v in ipairs({...}) do inputs[i] = v:detach():requires_grad_() end
        assert.is_true(torch.autograd.gradcheck(f, inputs))
      end
      check(function(a, b) return a:expand(2, 3, 4) * b end, x, torch.rand(2, 1, 4, {dtype = 'float64'}))
      check(function(a) return a:sum(2) end, x)
      check(function(a) return a:mean(1, true) end, x)
      check(function(a) return a:logsumexp(2) end, x)
      check(function(a) return a:prod(1) end, x)
      check(function(a) return a:var(2) end, x)
      check(function(a) return a:std(1, true, true) end, x)
      check(function(a) return a:norm() end, x)
      check(function(a) return a:norm(3, 2) end, x)
    end)
  end

  it('with scalars on either side', function()
    local x = torch.rand(4, {dtype = 'float64'}) + 0.5
    gradcheck(function(t) return (2 - t):sum() end, x)
    gradcheck(function(t) return (3 / t):sum() end, x)
    gradcheck(function(t) return (2 ^ t):sum() end, x)
    gradcheck(function(t) return (t ^ 2.5):sum() end, x)
    gradcheck(function(t) return (-t * 4):sum() end, x)
  end)

  it('of sum and mean over dims, with keepdim', function()
    local x = randd(2, 3, 4)
    local w = randd(2, 3, 4)
    gradcheck(function(t) return (t:sum(2) * w:sum(2)):sum() end, x)
    gradcheck(function(t) return (t:mean({1, 3}, {keepdim = true}) * w:mean({1, 3}, {keepdim = true})):sum() end, x)
    gradcheck(function(t) return t:mean() end, x)
  end)

  it('of mm, transposes and views', function()
    local a, b = randd(3, 4), randd(4, 2)
    gradcheck(function(t) return t:mm(b):tanh():sum() end, a)
    gradcheck(function(t) return a:mm(t):sigmoid():sum() end, b)
    gradcheck(function(t) return a:matmul(t:t():t()):sum() end, b)
    gradcheck(function(t) return (t:view(2, 6) * torch.arange(0, 12, {dtype = 'float64'}):view(2, 6)):sum() end, a)
    gradcheck(function(t) return (t:t():reshape(12) * torch.arange(0, 12, {dtype = 'float64'})):sum() end, a)
    local r = randd(5, 3, 4)
    gradcheck(function(t) return (t:unsqueeze(1):expand(5, 3, 4) * r):sum() end, a)
  end)

  it('through a float32 and float64 mix, each gradient in its input dtype', function()
    local a = torch.ones(2, {requires_grad = true})
    local b = torch.ones(2, {dtype = 'float64', requires_grad = true})
    local y = (a * b):sum()
    assert.are.equal('float64', y.dtype)
    y:backward()
    assert.are.equal('float32', a.grad.dtype)
    assert.are.equal('float64', b.grad.dtype)
  end)

  it('give second derivatives of a small network (gradient of a gradient norm)', function()
    torch.manual_seed(3)
    local w1, x = randd(3, 4), randd(2, 3)
    local function gnorm(w)
      local h = x:mm(w):tanh()
      local loss = (h * h):sum()
      -- d loss / d w, written out: x^T ((2h) (1 - h^2))
      local dh = h * 2 * (1 - h * h)
      local gw = x:t():mm(dh)
      return (gw * gw):sum()
    end
    local leaf = w1:clone():requires_grad_()
    local h = x:mm(leaf):tanh()
    local loss = (h * h):sum()
    loss:backward({create_graph = true})
    local g = leaf.grad
    leaf.grad = nil
    ;(g * g):sum():backward()
    close(leaf.grad, numeric_grad(gnorm, w1:clone()), 1e-4)
  end)
end)

describe('safety', function()
  it('refuses in-place changes of leaves that require grad', function()
    local w = torch.ones(2, {requires_grad = true})
    assert.has_error(function() w:add_(1) end)
    assert.has_error(function() w:fill_(1) end)
    assert.has_error(function() w:uniform_() end)
    assert.has_error(function() w[1] = 3 end)
  end)

  it('raises on saved tensors modified in place', function()
    local x = torch.ones(2, {requires_grad = true})
    local y = x * 2
    local z = y:sin()                            -- sin's derivative reads its input
    torch.no_grad(function() y:add_(1) end)
    local ok, err = pcall(function() z:sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('modified by an inplace operation', 1, true))
  end)

  it('has a derivative for every floating method: none refuses with "no derivative yet"', function()
    local x = torch.rand(3, 2, {requires_grad = true}) + 0.5
    local refused = {}
    torch._load_all()
    for name, f in pairs(torch._methods) do
      for _, args in ipairs({{}, {1}, {2, 1}}) do
        local ok, err = pcall(f, x, table.unpack(args))
        if not ok and tostring(err):find('no derivative yet', 1, true) then refused[#refused + 1] = name break end
      end
    end
    table.sort(refused)
    assert.are.same({}, refused)
    -- boolean and integer results carry no history and need none
    assert.are.equal('bool', x:any().dtype)
    assert.are.equal('int64', x:argmax().dtype)
    assert.is_false(x:gt(1).requires_grad)
  end)

  it('frees graphs: a training-like loop keeps memory flat', function()
    local w = torch.randn(64, 64, {requires_grad = true})
    local x = torch.randn(32, 64)
    local function step()
      local loss = (x:mm(w):tanh() * 0.5):sum()
      loss:backward()
      torch.no_grad(function() w:sub_(w.grad * 0.001) end)
      w.grad = nil
    end
    for _ = 1, 200 do step() end
    collectgarbage()
    local before = torch.memory_stats().allocated
    for _ = 1, 2000 do step() end
    collectgarbage()
    local after = torch.memory_stats().allocated
    assert.is_true(after - before < 1024 * 1024, string.format('grew by %d bytes', after - before))
  end)
end)

describe('torch.autograd.grad and backward', function()
  it('returns gradients without touching .grad, and builds graphs for higher orders', function()
    local x = torch.tensor({1.0, 2.0}, {requires_grad = true})
    local y = (x * x * x):sum()
    local g = torch.autograd.grad(y, x, {create_graph = true})[1]
    close(g, torch.tensor({3.0, 12.0}))
    assert.is_nil(x.grad)
    local h = torch.autograd.grad(g:sum(), {x})[1]
    close(h, torch.tensor({6.0, 12.0}))
  end)

  it('takes several outputs with grad_outputs, and several inputs', function()
    local a = torch.tensor({1.0, 2.0}, {requires_grad = true})
    local b = torch.tensor({3.0}, {requires_grad = true})
    local u, v = a * b, a + b
    local gs = torch.autograd.grad({u, v}, {a, b}, {grad_outputs = {torch.ones(2), torch.tensor({1.0, 10.0})}})
    close(gs[1], torch.tensor({3.0 + 1, 3.0 + 10}))
    close(gs[2], torch.tensor({1.0 + 2.0 + 1 + 10}))
  end)

  it('reports unused inputs unless allow_unused, then gives nil', function()
    local x = torch.ones(2, {requires_grad = true})
    local z = torch.ones(2, {requires_grad = true})
    local ok, err = pcall(torch.autograd.grad, (x * 2):sum(), {x, z})
    assert.is_false(ok)
    assert.truthy(err:find('not have been used in the graph', 1, true))
    local r = torch.autograd.grad((x * 2):sum(), {x, z}, {allow_unused = true})
    close(r[1], torch.tensor({2.0, 2.0}))
    assert.is_nil(r[2])
  end)

  it('torch.autograd.backward runs several roots in one walk', function()
    local x = torch.ones(2, {requires_grad = true})
    torch.autograd.backward({(x * 2):sum(), (x * 3):sum()})
    close(x.grad, torch.tensor({5.0, 5.0}))
    torch.autograd.backward(x * 1, torch.tensor({1.0, -1.0}))
    close(x.grad, torch.tensor({6.0, 4.0}))
    torch.autograd.backward({x * 2}, {grad_tensors = {torch.tensor({1.0, 0.5})}})
    close(x.grad, torch.tensor({8.0, 5.0}))
    local y = x * 3
    torch.autograd.backward(y, {grad_tensors = torch.ones(2), retain_graph = true})
    torch.autograd.backward(y, {grad_tensors = torch.ones(2)})
    close(x.grad, torch.tensor({14.0, 11.0}))
  end)

  it('grad of an output that is an input is grad_outputs, as in PyTorch', function()
    local x = torch.tensor({1.0, 2.0}, {requires_grad = true})
    local g = torch.tensor({3.0, 4.0})
    close(torch.autograd.grad({x}, {x}, {grad_outputs = {g}})[1], g)
    local y = x * 2
    close(torch.autograd.grad(y, {y, x}, {grad_outputs = g})[1], g)
  end)

  it('runs only the nodes between the outputs and the inputs, leaving the rest of the graph', function()
    local x = torch.ones(2, {requires_grad = true})
    local h = x * x                              -- MulBackward saves x twice
    close(torch.autograd.grad((h * 3):sum(), h)[1], torch.tensor({3.0, 3.0}))
    assert.is_false(h.grad_fn.released)
    ;(h * 4):sum():backward()                    -- h's own graph is still there
    close(x.grad, torch.tensor({8.0, 8.0}))
  end)
end)

describe('retain_grad', function()
  it('keeps the gradient of a non-leaf, accumulating like a leaf', function()
    local x = torch.ones(2, {requires_grad = true})
    local y = x * 3
    assert.is_false(y.retains_grad)
    y:retain_grad()
    assert.is_true(y.retains_grad)
    x:retain_grad()
    assert.is_false(x.retains_grad)             -- leaves keep .grad anyway
    ;(y * y):sum():backward({retain_graph = true})
    close(y.grad, torch.tensor({6.0, 6.0}))
    close(x.grad, torch.tensor({18.0, 18.0}))
    assert.is_nil((x * 2).grad)
    assert.has_error(function() torch.ones(2):retain_grad() end)
  end)
end)

describe('maximum and minimum against a number', function()
  it('send the gradient to the side that wins, halves on ties', function()
    local x = torch.tensor({0.2, 0.8, 0.5}, {requires_grad = true})
    x:maximum(0.5):sum():backward()
    close(x.grad, torch.tensor({0.0, 1.0, 0.5}))
    x.grad = nil
    x:minimum(0.5):sum():backward()
    close(x.grad, torch.tensor({1.0, 0.0, 0.5}))
  end)
end)

describe('custom Functions', function()
  it('run forward without recording and backward from Lua, gradchecked', function()
    local Cube = torch.autograd.Function('Cube')
    function Cube.forward(ctx, x, scale)
      ctx:save_for_backward(x)
      ctx.scale = scale
      return x * x * x * scale
    end
    function Cube.backward(ctx, g)
      local x = table.unpack(ctx.saved_tensors)
      return g * x * x * (3 * ctx.scale), nil
    end
    local x = torch.rand(4, {dtype = 'float64'}) + 0.5
    gradcheck(function(t) return Cube.apply(t, 2):sum() end, x)
    local y = Cube.apply(x:clone():requires_grad_(), 2)
    assert.are.equal('<CubeBackward>', tostring(y.grad_fn))
    assert.are.equal('<AccumulateGrad>', tostring(y.grad_fn.next_functions[1][1]))
  end)

  it('refuse a second backward and report bad gradients from backward', function()
    local Bad = torch.autograd.Function('Bad')
    function Bad.forward(_, x) return x * 2 end
    function Bad.backward(_, _) return torch.ones(5) end
    local x = torch.ones(2, {requires_grad = true})
    local ok, err = pcall(function() Bad.apply(x):sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('BadBackward', 1, true))
    local Id = torch.autograd.Function('Id')
    function Id.forward(_, t) return t end
    function Id.backward(_, g) return g end
    local y = Id.apply(x)
    assert.is_false(rawequal(y, x))
    y:sum():backward()
    assert.has_error(function() y:sum():backward() end)
  end)
end)

describe('hooks', function()
  it('see and may replace the gradient; handles remove them', function()
    local w = torch.ones(2, {requires_grad = true})
    local h = w:register_hook(function(g) return g * 10 end)
    ;(w * 2):sum():backward()
    close(w.grad, torch.tensor({20.0, 20.0}))
    h:remove()
    w.grad = nil
    ;(w * 2):sum():backward()
    close(w.grad, torch.tensor({2.0, 2.0}))
    local seen
    local z = w * 3
    z:register_hook(function(g) seen = g:clone() end)
    z:sum():backward()
    close(seen, torch.ones(2))
  end)

  it('report errors raised inside a hook and refuse tensors without grad', function()
    local w = torch.ones(2, {requires_grad = true})
    local q = w * 2
    q:register_hook(function() error('bad hook') end)
    local ok, err = pcall(function() q:sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('bad hook', 1, true))
    assert.has_error(function() torch.ones(2):register_hook(function() end) end)
  end)
end)

describe('torch.autograd.gradcheck and gradgradcheck', function()
  it('pass for correct derivatives, first and second order', function()
    torch.manual_seed(11)
    local x = torch.randn(3, {dtype = 'float64', requires_grad = true})
    local w = torch.randn(3, 2, {dtype = 'float64', requires_grad = true})
    local function f(a, b) return a:view(1, 3):mm(b):tanh() end
    assert.is_true(torch.autograd.gradcheck(f, {x, w}))
    assert.is_true(torch.autograd.gradgradcheck(f, {x, w}))
    assert.is_true(torch.autograd.gradcheck(function(a) return {a:sin(), (a * a):sum()} end, x))
  end)

  it('test non-contiguous inputs as laid out, perturbing their own elements', function()
    torch.manual_seed(5)
    local x = torch.randn(3, 4, {dtype = 'float64'}):t():requires_grad_()
    assert.is_false(x:is_contiguous())
    assert.is_true(torch.autograd.gradcheck(function(a) return a:sin() end, {x}))
    assert.is_true(torch.autograd.gradgradcheck(function(a) return a:sin() end, {x}))
    local n = torch.randn(3, 6, {dtype = 'float64'}):narrow(2, 2, 4):requires_grad_()
    assert.is_true(torch.autograd.gradcheck(function(a, b) return a:mm(b) end, {x, n}))
    -- overlapping inputs cannot be perturbed one element at a time
    local e = torch.randn(3, 1, {dtype = 'float64'}):expand(3, 4):requires_grad_()
    local ok, err = pcall(torch.autograd.gradcheck, function(a) return a:sin() end, {e})
    assert.is_false(ok)
    assert.truthy(err:find('input 1 has a dimension with stride 0', 1, true), err)
  end)

  it('check only the inputs that require grad, pass the identity, and ask for float64', function()
    local x = torch.randn(3, {dtype = 'float64', requires_grad = true})
    local c = torch.randn(3, {dtype = 'float64'})
    assert.is_true(torch.autograd.gradcheck(function(a, b) return a * b end, {x, c}))
    assert.is_true(torch.autograd.gradgradcheck(function(a, b) return a * b * a end, {x, c}))
    assert.is_true(torch.autograd.gradcheck(function(a) return a end, {x}))
    assert.is_true(torch.autograd.gradgradcheck(function(a) return a end, {x}))
    local ok, err = pcall(torch.autograd.gradcheck, function(a) return a:sin() end, {torch.randn(3, {requires_grad = true})})
    assert.is_false(ok)
    assert.truthy(err:find('input 1 is float32', 1, true) and err:find('float64', 1, true), err)
    ok, err = pcall(torch.autograd.gradcheck, function(a) return a:sin() end, {c})
    assert.truthy(err:find('at least one input tensor to require gradient', 1, true), err)
  end)

  it('catch a wrong backward, naming the entry', function()
    local F = torch.autograd.Function('Wrong')
    function F.forward(_, a) return a * 2 end
    function F.backward(_, g) return g * 3 end
    local x = torch.randn(2, {dtype = 'float64', requires_grad = true})
    local ok, msg = torch.autograd.gradcheck(function(a) return F.apply(a) end, {x}, {raise_exception = false})
    assert.is_false(ok)
    assert.truthy(msg:find('analytical 3, numerical 2', 1, true))
    assert.has_error(function() torch.autograd.gradcheck(function(a) return F.apply(a) end, {x}) end)
  end)
end)

describe('anomaly mode', function()
  it('names the node whose backward produced NaN, and is off by default', function()
    local x = torch.tensor({-1.0, 4.0}, {requires_grad = true})
    local y = x:sqrt():sum()
    local ok, err = pcall(torch.autograd.detect_anomaly, function() y:backward() end)
    assert.is_false(ok)
    assert.truthy(err:find("Function 'SqrtBackward' returned nan values", 1, true))
    assert.is_false(torch.autograd.is_anomaly_enabled())
    -- made in anomaly mode, the node knows where forward created it
    torch.autograd.set_detect_anomaly(true)
    local made_here = debug.getinfo(1, 'l').currentline + 1
    local y2 = x:sqrt():sum()
    torch.autograd.set_detect_anomaly(false)
    ok, err = pcall(torch.autograd.detect_anomaly, function() y2:backward() end)
    assert.truthy(err:find('its forward op was called at ' .. debug.getinfo(1, 'S').short_src .. ':' .. made_here,
                           1, true), err)
    x:sqrt():sum():backward()
    assert.is_true(x.grad[1] ~= x.grad[1])
    torch.autograd.set_detect_anomaly(true)
    assert.is_true(torch.autograd.is_anomaly_enabled())
    torch.autograd.set_detect_anomaly(false)
  end)
end)

describe('post-accumulate-grad hooks', function()
  it('run with the leaf after its .grad is accumulated, until removed', function()
    local w = torch.ones(2, {requires_grad = true})
    local seen = {}
    local h = w:register_post_accumulate_grad_hook(function(t)
      assert.is_true(rawequal(t, w))
      seen[#seen + 1] = t.grad[1]
    end)
    ;(w * 3):sum():backward()
    ;(w * 3):sum():backward()
    h:remove()
    ;(w * 3):sum():backward()
    assert.are.same({3, 6}, seen)
    assert.has_error(function() (w * 2):register_post_accumulate_grad_hook(function() end) end)
  end)

  it('must return nothing (the gradient is in .grad already)', function()
    local w = torch.ones(2, {requires_grad = true})
    w:register_post_accumulate_grad_hook(function(t) return t.grad * 2 end)
    local ok, err = pcall(function() (w * 3):sum():backward() end)
    assert.is_false(ok)
    assert.truthy(err:find('post-accumulate-grad hook: hooks must return nothing', 1, true), err)
  end)
end)
