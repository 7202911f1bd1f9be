-- autograd_linalg_spec.lua: derivatives of the matrix products -- matmul in
-- every form (dot, mv, vector @ matrix, mm, batched with broadcast batch
-- dims), bmm, mv, dot, outer/ger and the add* family -- checked against
-- central finite differences in float64.
local torch = require 'torch'

local support = dofile('spec/support/gradients.lua')
local numeric_grad, close, gradcheck, randd =
  support.numeric_grad, support.close, support.gradcheck, support.randd

-- checks the gradient of every operand of f(t1, ..., tn) (a scalar)
local function gradcheck_all(f, ...)
  local xs = {...}
  for i = 1, #xs do
    gradcheck(function(t)
      local args = {table.unpack(xs)}
      args[i] = t
      return f(table.unpack(args))
    end, xs[i])
  end
end

-- a weighted sum, so every output element gets its own gradient
local function wsum(y)
  local w = torch.arange(1, y:nElement() + 1, {dtype = 'float64'}):view(y:size()) * 0.1
  return (y * w):sum()
end

describe('matmul derivatives', function()
  torch.manual_seed(11)

  it('of 1-D @ 1-D (dot)', function()
    gradcheck_all(function(a, b) return torch.matmul(a, b) * 3 end, randd(5), randd(5))
  end)

  it('of 2-D @ 1-D (mv) and 1-D @ 2-D', function()
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(3, 4), randd(4))
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(4), randd(4, 3))
  end)

  it('of 2-D @ 2-D with transposed inputs', function()
    gradcheck_all(function(a, b) return wsum(torch.matmul(a:t(), b)) end, randd(4, 3), randd(4, 2))
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b:t())) end, randd(3, 4), randd(2, 4))
  end)

  it('of batched products', function()
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(2, 3, 4), randd(2, 4, 5))
    gradcheck_all(function(a, b) return wsum(torch.matmul(a:transpose(2, 3), b)) end, randd(2, 4, 3), randd(2, 4, 5))
  end)

  it('of batched products with broadcast batch dims', function()
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(2, 1, 3, 4), randd(3, 4, 2))
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(1, 3, 4), randd(2, 4, 2))
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(2, 3, 3, 4), randd(4, 2))  -- a stack @ a matrix
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(3, 4), randd(2, 4, 2))     -- a matrix @ a stack
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b:transpose(1, 2))) end, randd(2, 3, 4), randd(5, 4))
  end)

  it('of batched @ 1-D and 1-D @ batched', function()
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(2, 3, 4), randd(4))
    gradcheck_all(function(a, b) return wsum(torch.matmul(a, b)) end, randd(4), randd(2, 4, 3))
  end)

  it('gives gradients in the inputs\' shapes when only one input requires grad', function()
    local a = randd(2, 1, 3, 4):requires_grad_()
    local b = randd(5, 4, 2)
    torch.matmul(a, b):sum():backward()
    assert.are.same({2, 1, 3, 4}, a.grad:size():totable())
    assert.is_nil(b.grad)
  end)

  it('names the nodes', function()
    local a = torch.ones(3, {requires_grad = true})
    assert.are.equal('<DotBackward>', tostring(a:dot(a).grad_fn))
    assert.are.equal('<MvBackward>', tostring(torch.ones(2, 3):mv(a).grad_fn))
    assert.are.equal('<OuterBackward>', tostring(a:outer(a).grad_fn))
    assert.are.equal('<BmmBackward>', tostring(torch.ones(2, 3, 3):bmm(a:view(1, 3, 1):expand(2, 3, 1)).grad_fn))
    assert.are.equal('<MmBackward>', tostring(torch.ones(2, 3):matmul(a:view(3, 1)).grad_fn))
    assert.are.equal('<AddmmBackward>', tostring(torch.addmm(a:view(1, 3), torch.ones(2, 2), torch.ones(2, 3)).grad_fn))
  end)

  it('give second derivatives through matmul (create_graph)', function()
    torch.manual_seed(5)
    local x, w0 = randd(2, 3, 4), randd(4, 3)
    -- f(w) = |d/dw sum(tanh(x @ w)^2)|^2, the inner gradient from autograd
    local function inner_grad(w, create)
      local leaf = create and w or w:clone():requires_grad_()
      local h = torch.matmul(x, leaf):tanh()
      local loss = (h * h):sum()
      loss:backward({create_graph = create})
      local g = leaf.grad
      leaf.grad = nil
      return g
    end
    local function gnorm(w)       -- written out: x^T (2h (1 - h^2)) summed over the batch
      local h = torch.matmul(x, w):tanh()
      local dh = h * 2 * (1 - h * h)
      local gw = torch.matmul(x:transpose(2, 3), dh):sum(1):view(4, 3)
      return (gw * gw):sum()
    end
    local leaf = w0:clone():requires_grad_()
    local g = inner_grad(leaf, true)
    close(g, torch.enable_grad(function() return inner_grad(w0, false) end))
    ;(g * g):sum():backward()
    close(leaf.grad, numeric_grad(gnorm, w0:clone()), 1e-4)
  end)

  it('give second derivatives with both factors and a vector (create_graph)', function()
    local a0, v0 = randd(3, 4), randd(4)
    local a, v = a0:clone():requires_grad_(), v0:clone():requires_grad_()
    local y = torch.matmul(a, v):sin():sum()
    y:backward({create_graph = true})
    local ga = a.grad
    a.grad, v.grad = nil, nil
    ;(ga * ga):sum():backward()
    -- d/dv |cos(a v) v^T|^2 (ga = cos(a v) outer v) by finite differences
    local function f(t) local c = torch.matmul(a0, t):cos(); return (torch.outer(c, t) ^ 2):sum() end
    close(v.grad, numeric_grad(f, v0:clone()), 1e-4)
  end)
end)

describe('derivatives of the other products', function()
  torch.manual_seed(13)

  it('of mm, bmm, mv, dot, outer and ger', function()
    gradcheck_all(function(a, b) return wsum(a:mm(b:t())) end, randd(3, 4), randd(2, 4))
    gradcheck_all(function(a, b) return wsum(a:bmm(b)) end, randd(2, 3, 4), randd(2, 4, 5))
    gradcheck_all(function(a, b) return wsum(torch.bmm(a:transpose(2, 3), b)) end, randd(2, 4, 3), randd(2, 4, 5))
    gradcheck_all(function(a, b) return wsum(a:mv(b)) end, randd(3, 4), randd(4))
    gradcheck_all(function(a, b) return wsum(a:t():mv(b)) end, randd(4, 3), randd(4))
    gradcheck_all(function(a, b) return a:dot(b) end, randd(6), randd(6))
    gradcheck_all(function(a, b) return wsum(a:outer(b)) end, randd(3), randd(4))
    gradcheck_all(function(a, b) return wsum(torch.ger(a, b)) end, randd(3), randd(2))
  end)

  it('of addmm, addmv, addr, baddbmm and addbmm with beta and alpha', function()
    local o = {beta = 0.5, alpha = -1.5}
    gradcheck_all(function(c, a, b) return wsum(torch.addmm(c, a, b, o)) end, randd(3, 2), randd(3, 4), randd(4, 2))
    gradcheck_all(function(c, a, b) return wsum(torch.addmm(c, a, b)) end, randd(2), randd(3, 4), randd(4, 2))   -- broadcast input
    gradcheck_all(function(c, a, b) return wsum(c:addmm(a:t(), b, o)) end, randd(3, 1), randd(4, 3), randd(4, 2))
    gradcheck_all(function(c, a, b) return wsum(torch.addmv(c, a, b, o)) end, randd(3), randd(3, 4), randd(4))
    gradcheck_all(function(c, a, b) return wsum(torch.addmv(c, a, b, o)) end, randd(1), randd(3, 4), randd(4))
    gradcheck_all(function(c, a, b) return wsum(torch.addr(c, a, b, o)) end, randd(3, 4), randd(3), randd(4))
    gradcheck_all(function(c, a, b) return wsum(torch.addr(c, a, b)) end, randd(4), randd(3), randd(4))
    gradcheck_all(function(c, a, b) return wsum(torch.baddbmm(c, a, b, o)) end, randd(2, 3, 5), randd(2, 3, 4), randd(2, 4, 5))
    gradcheck_all(function(c, a, b) return wsum(torch.baddbmm(c, a, b, o)) end, randd(3, 5), randd(2, 3, 4), randd(2, 4, 5))
    gradcheck_all(function(c, a, b) return wsum(torch.addbmm(c, a, b, o)) end, randd(3, 5), randd(2, 3, 4), randd(2, 4, 5))
    gradcheck_all(function(c, a, b) return wsum(torch.addbmm(c, a, b)) end, randd(5), randd(2, 3, 4), randd(2, 4, 5))
  end)

  it('of the add* ops with Torch7\'s positional beta and alpha', function()
    gradcheck_all(function(c, a, b) return wsum(torch.addmm(0.25, c, 2, a, b)) end, randd(3, 2), randd(3, 4), randd(4, 2))
    gradcheck_all(function(c, a, b) return wsum(torch.addmv(c, 3, a, b)) end, randd(3), randd(3, 4), randd(4))
  end)

  it('give the input zero gradient with beta 0', function()
    local c = randd(2, 2):requires_grad_()
    torch.addmm(c, randd(2, 3), randd(3, 2), {beta = 0}):sum():backward()
    close(c.grad, torch.zeros(2, 2, {dtype = 'float64'}))
  end)

  it('give second derivatives through addmm (create_graph)', function()
    local c0, a0, b0 = randd(3, 2), randd(3, 4), randd(4, 2)
    local a = a0:clone():requires_grad_()
    local y = (torch.addmm(c0, a, b0, {alpha = 2}) ^ 2):sum()
    y:backward({create_graph = true})
    local g = a.grad
    a.grad = nil
    ;(g * g):sum():backward()
    local function f(t)   -- d/da sum((c + 2 a b)^2) = 4 (c + 2 a b) b^T
      local ga = torch.mm(c0 + t:mm(b0) * 2, b0:t()) * 4
      return (ga * ga):sum()
    end
    close(a.grad, numeric_grad(f, a0:clone()), 1e-4)
  end)

  it('differentiate the in-place forms as their out-of-place ones, and refuse them on leaves', function()
    local c0, b0 = randd(2, 2), randd(2, 2)
    local a = randd(2, 2):requires_grad_()
    local c = c0:clone()
    c:addmm_(a, b0)
    assert.are.equal('AddmmBackward', c.grad_fn:name())
    c:pow(2):sum():backward()
    local expected = a:detach():clone():requires_grad_()
    c0:addmm(expected, b0):pow(2):sum():backward()
    close(a.grad, expected.grad, 1e-12)
    local leaf = randd(2, 2):requires_grad_()
    assert.has_error(function() leaf:addmm_(randd(2, 2), randd(2, 2)) end)
    torch.no_grad(function() c0:addmm_(a, randd(2, 2)) end)
    assert.is_false(c0.requires_grad)
  end)

  it('read a tensor passed as its own factor before writing it: M:addmm_(M, M)', function()
    local l = randd(3, 3):requires_grad_()
    local m = l * 1
    m:addmm_(m, m)                                   -- m = l + l @ l
    m:sum():backward()
    local g, ld = torch.ones(3, 3, {dtype = 'float64'}), l:detach()
    local expected = g + g:mm(ld:t()) + ld:t():mm(g)  -- by the definition: d(l @ l) = dl l + l dl
    assert.is_true(l.grad:allclose(expected, {rtol = 0, atol = 1e-12}))
    assert.is_true(m:detach():allclose(ld + ld:mm(ld), {rtol = 0, atol = 1e-12}))
  end)
end)

-- A product's gradient for a leaf that already has .grad is added into it by the
-- product itself (no buffer, no second pass): the values, the tensor's identity,
-- hooks and retain_grad must be as if AccumulateGrad had added it.
describe('product gradients added into an existing .grad', function()
  torch.manual_seed(12)
  -- L = sum(w * (a @ b)): dL/da = w @ b^T, dL/db = a^T @ w (the definition)
  local function loss(y, w) return (y * w):sum() end

  it("keep the .grad tensor and add to what it held, through x:t() too (a linear layer's weight)", function()
    for _, dtype in ipairs({'float64', 'float32'}) do
      local tol = dtype == 'float64' and 1e-12 or 1e-4
      local x = torch.randn(5, 4, {dtype = dtype})
      local W = torch.randn(3, 4, {dtype = dtype}):requires_grad_()
      local bias = torch.randn(3, {dtype = dtype}):requires_grad_()
      local w = torch.randn(5, 3, {dtype = dtype})
      local g0, gb0 = torch.randn(3, 4, {dtype = dtype}), torch.randn(3, {dtype = dtype})
      W.grad, bias.grad = g0:clone(), gb0:clone()
      local held = W.grad
      loss(bias:addmm(x, W:t()), w):backward()
      close(held, g0 + w:t():mm(x), tol)                     -- the tensor it held, in place
      close(W.grad, g0 + w:t():mm(x), tol)
      close(bias.grad, gb0 + w:sum(1):view(3), tol)
      loss(torch.mm(x, W:t()), w):backward()                 -- again: added once more
      close(W.grad, g0 + w:t():mm(x) * 2, tol)
    end
  end)

  it('add into both factors of mm, and into one leaf used as both', function()
    local a, b = randd(4, 3):requires_grad_(), randd(3, 2):requires_grad_()
    local w = randd(4, 2)
    local ga, gb = randd(4, 3), randd(3, 2)
    a.grad, b.grad = ga:clone(), gb:clone()
    loss(a:mm(b), w):backward()
    close(a.grad, ga + w:mm(b:t()), 1e-12)
    close(b.grad, gb + a:t():mm(w), 1e-12)
    local m, v = randd(3, 3):requires_grad_(), randd(3, 3)
    local gm = randd(3, 3)
    m.grad = gm:clone()
    loss(m:mm(m), v):backward()                              -- d/dm sum(v * m m) = v m^T + m^T v
    close(m.grad, gm + v:mm(m:t()) + m:t():mm(v), 1e-12)
    local n = randd(3, 3):requires_grad_()
    n.grad = gm:clone()
    loss(n:mm(n:t()), v):backward()                          -- sum(v * n n^T): (v + v^T) n
    close(n.grad, gm + (v + v:t()):mm(n), 1e-12)
  end)

  it("run the leaf's hooks and post-accumulate hooks, and fill a retained transpose's .grad", function()
    local x, w = randd(5, 4), randd(5, 3)
    local W = randd(3, 4):requires_grad_()
    local g0 = randd(3, 4)
    W.grad = g0:clone()
    W:register_hook(function(g) return g * 2 end)
    loss(x:mm(W:t()), w):backward()
    close(W.grad, g0 + w:t():mm(x) * 2, 1e-12)

    local V = randd(3, 4):requires_grad_()
    V.grad = g0:clone()
    local seen = {}
    V:register_post_accumulate_grad_hook(function(p) seen[#seen + 1] = p.grad:clone() end)
    loss(x:mm(V:t()), w):backward()
    assert.are.equal(1, #seen)
    close(seen[1], g0 + w:t():mm(x), 1e-12)

    local U = randd(3, 4):requires_grad_()
    U.grad = g0:clone()
    local Ut = U:t()
    Ut:retain_grad()
    loss(x:mm(Ut), w):backward()
    close(Ut.grad, x:t():mm(w), 1e-12)
    close(U.grad, g0 + w:t():mm(x), 1e-12)
  end)

  it('leave .grad alone under autograd.grad, and build a graph under create_graph', function()
    local x, w = randd(5, 4), randd(5, 3)
    local W = randd(3, 4):requires_grad_()
    local g0 = randd(3, 4)
    W.grad = g0:clone()
    local gs = torch.autograd.grad({loss(x:mm(W:t()), w)}, {W})
    close(gs[1], w:t():mm(x), 1e-12)
    close(W.grad, g0, 0)
    W.grad = nil
    loss(x:mm(W:t()), w):backward()
    local first = W.grad
    loss(torch.tanh(x:mm(W:t())), w):backward({create_graph = true})
    assert.is_true(W.grad.requires_grad)                     -- the sum is recorded, as PyTorch's
    assert.are_not.equal(first, W.grad)
  end)
end)
