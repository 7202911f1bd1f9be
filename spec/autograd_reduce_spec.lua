-- autograd_reduce_spec.lua: derivatives of the reductions, scans and
-- softmax, checked against central finite differences in float64.
local torch = require 'torch'

local support = dofile('spec/support/gradients.lua')
local numeric_grad, close, gradcheck, randd =
  support.numeric_grad, support.close, support.gradcheck, support.randd

-- a fixed weight, so that the gradient of the sum is not trivially constant
local function weights(t)
  return torch.arange(1, t:numel() + 1, {dtype = 'float64'}):view(t:size()):sin()
end
local function wsum(t) return (t * weights(t)):sum() end

describe('autograd of softmax and log_softmax', function()
  it('matches finite differences along every dim, negative dims included', function()
    local x = randd(3, 4, 2)
    for _, op in ipairs({'softmax', 'log_softmax'}) do
      for _, d in ipairs({1, 2, 3, -1, -2}) do
        gradcheck(function(t) return wsum(t[op](t, d)) end, x)
      end
      gradcheck(function(t) return wsum(torch[op](t:transpose(1, 2), -1)) end, x)   -- non-contiguous
      gradcheck(function(t) return wsum(t[op](t, 1)) end, randd(5))
    end
  end)

  it('names its nodes and takes float32 input with dtype float64', function()
    local x = torch.randn(2, 3, {requires_grad = true})
    assert.are.equal('<SoftmaxBackward>', tostring(x:softmax(2).grad_fn))
    assert.are.equal('<LogSoftmaxBackward>', tostring(x:log_softmax(2).grad_fn))
    local y = torch.softmax(x, 2, {dtype = 'float64'})
    assert.are.equal('float64', y.dtype)
    wsum(y):backward()
    assert.are.equal('float32', x.grad.dtype)
    local x64 = x:detach():to('float64')
    close(x.grad:to('float64'), numeric_grad(function(t) return wsum(t:softmax(2)) end, x64), 1e-4)
  end)

  it('gives second-order gradients with create_graph', function()
    local x = randd(2, 4)
    local v = randd(2, 4)
    -- the gradient of <grad f(x), v>, f = sum(w * softmax(x)), against
    -- finite differences of <grad f, v> computed by first-order backward
    local function gdotv(t, build)
      local leaf = t:clone():requires_grad_()
      local y = wsum(leaf:softmax(2))
      y:backward({create_graph = build})
      return leaf, (leaf.grad * v):sum()
    end
    local leaf, s = gdotv(x, true)
    leaf.grad = nil
    s:backward()
    local expected = numeric_grad(function(t)
      return torch.enable_grad(function() local _, r = gdotv(t, false); return r end)
    end, x:clone())
    close(leaf.grad, expected, 1e-5)
    -- log_softmax too
    local l2 = x:clone():requires_grad_()
    local y2 = wsum(l2:log_softmax(1))
    y2:backward({create_graph = true})
    local g2 = l2.grad
    l2.grad = nil
    ;(g2 * v):sum():backward()
    local e2 = numeric_grad(function(t)
      return torch.enable_grad(function()
        local lf = t:clone():requires_grad_()
        wsum(lf:log_softmax(1)):backward()
        return (lf.grad * v):sum()
      end)
    end, x:clone())
    close(l2.grad, e2, 1e-5)
  end)
end)

describe('autograd of logsumexp, prod, var, std, norm, cumsum', function()
  it('logsumexp over dims, keepdim, negative dims and all', function()
    local x = randd(3, 4)
    gradcheck(function(t) return wsum(t:logsumexp(2)) end, x)
    gradcheck(function(t) return wsum(t:logsumexp(-2, true)) end, x)
    gradcheck(function(t) return wsum(t:logsumexp({1, 2})) end, x)
    gradcheck(function(t) return t:logsumexp({}) end, x)
    assert.are.equal('<LogsumexpBackward>', tostring(x:clone():requires_grad_():logsumexp(1).grad_fn))
  end)

  it('prod without zeros, with one zero and with two zeros in a slice', function()
    local x = randd(3, 4)
    gradcheck(function(t) return wsum(t:prod(2)) end, x)
    gradcheck(function(t) return wsum(t:prod(-2, true)) end, x)
    gradcheck(function(t) return t:prod() end, randd(2, 3))
    local z = x:clone()
    z[1][2] = 0                      -- one zero in row 1
    z[2][1] = 0; z[2][3] = 0         -- two zeros in row 2
    gradcheck(function(t) return wsum(t:prod(2)) end, z)
    gradcheck(function(t) return wsum(t:prod(1)) end, z)
    local leaf = z:clone():requires_grad_()
    leaf:prod(2):sum():backward()
    assert.are.equal(0, leaf.grad[2][2])
    assert.are.equal(0, leaf.grad[1][1])
    assert.is_true(math.abs(leaf.grad[1][2] - z[1][1] * z[1][3] * z[1][4]) < 1e-12)
  end)

  it('var and std with corrections, keepdim and negative dims', function()
    local x = randd(3, 5)
    for _, op in ipairs({'var', 'std'}) do
      gradcheck(function(t) return wsum(t[op](t, 2)) end, x)
      gradcheck(function(t) return wsum(t[op](t, -2, false, true)) end, x)
      gradcheck(function(t) return wsum(t[op](t, {dim = 2, correction = 0, keepdim = true})) end, x)
      gradcheck(function(t) return wsum(t[op](t, {dim = 1, correction = 2})) end, x)
      gradcheck(function(t) return t[op](t) end, x)
    end
  end)

  it('norm for p = 2, 1, 3, 0.5 and inf', function()
    local x = randd(3, 4)
    gradcheck(function(t) return t:norm() end, x)
    gradcheck(function(t) return wsum(t:norm(2, 2)) end, x)
    gradcheck(function(t) return wsum(t:norm(2, -2, true)) end, x)
    gradcheck(function(t) return wsum(t:norm(1, 2)) end, x)
    gradcheck(function(t) return wsum(t:norm(3, 1)) end, x)
    gradcheck(function(t) return wsum(t:norm(0.5, 2)) end, x)
    gradcheck(function(t) return wsum(t:norm(3.5, {1, 2})) end, x)
    gradcheck(function(t) return wsum(t:norm('inf', 2)) end, x)
    -- a zero row gets a zero gradient, not NaN
    local leaf = torch.zeros(2, 3, {dtype = 'float64'}):requires_grad_()
    leaf:norm(2, 2):sum():backward()
    close(leaf.grad, torch.zeros(2, 3, {dtype = 'float64'}))
  end)

  it('cumsum along each dim', function()
    local x = randd(3, 4)
    gradcheck(function(t) return wsum(t:cumsum(1)) end, x)
    gradcheck(function(t) return wsum(t:cumsum(2)) end, x)
    gradcheck(function(t) return wsum(t:cumsum(-1)) end, x)
    gradcheck(function(t) return wsum(t:t():cumsum(1)) end, x)
    -- second order through cumsum (a product keeps it nonzero)
    local l = x:clone():requires_grad_()
    local y = (l:cumsum(2) * l:cumsum(2)):sum()
    y:backward({create_graph = true})
    local g = l.grad
    l.grad = nil
    g:sum():backward()
    assert.is_not_nil(l.grad)
  end)
end)

-- d/dx <grad f(x), v> with create_graph, against finite differences of
-- first-order gradients
local function gradgradcheck(f, x, tol)
  local v = torch.randn(x:size(), {dtype = 'float64'})
  local leaf = x:clone():requires_grad_()
  f(leaf):backward({create_graph = true})
  local g = leaf.grad
  leaf.grad = nil
  ;(g * v):sum():backward()
  local expected = numeric_grad(function(t)
    return torch.enable_grad(function()
      local lf = t:clone():requires_grad_()
      f(lf):backward()
      return (lf.grad * v):sum()
    end)
  end, x:clone())
  close(leaf.grad, expected, tol or 1e-5)
end

describe('second-order gradients of the reductions', function()
  it('logsumexp, prod, var, std, norm, cumsum, amax, max(dim)', function()
    local x = randd(3, 4)
    gradgradcheck(function(t) return wsum(t:logsumexp(2)) end, x)
    gradgradcheck(function(t) return wsum(t:prod(2)) end, x)
    gradgradcheck(function(t) return wsum(t:var(1)) end, x)
    gradgradcheck(function(t) return wsum(t:std(2, true, true)) end, x)
    gradgradcheck(function(t) return wsum(t:norm(2, 2)) end, x)
    gradgradcheck(function(t) return wsum(t:norm(3, 1)) end, x)
    gradgradcheck(function(t) return wsum(t:cumsum(2) * t) end, x)
    gradgradcheck(function(t) return wsum(t:amax(2) * t:sum(2)) end, x)
    gradgradcheck(function(t) local v = t:max(2); return wsum(v * v) end, x)
    gradgradcheck(function(t) return wsum(t:log_softmax(-1) * t) end, x)
  end)
end)

describe('autograd of max, min, amax, amin', function()
  it('max/min along a dim send the gradient to the index', function()
    local x = randd(3, 4)
    for _, op in ipairs({'max', 'min'}) do
      gradcheck(function(t) local v = t[op](t, 2); return wsum(v) end, x)
      gradcheck(function(t) local v = t[op](t, -2, true); return wsum(v) end, x)
      local leaf = x:clone():requires_grad_()
      local v, i = leaf[op](leaf, 1)
      assert.are.equal('int64', i.dtype)
      assert.is_false(i.requires_grad)
      v:sum():backward()
      for c = 1, 4 do
        for r = 1, 3 do
          assert.are.equal(r == i[c] and 1 or 0, leaf.grad[r][c])
        end
      end
    end
  end)

  it('amax/amin and full max()/min() share ties evenly', function()
    local x = randd(3, 4)
    for _, op in ipairs({'amax', 'amin', 'max', 'min'}) do
      gradcheck(function(t) return t[op](t) end, x)
    end
    gradcheck(function(t) return wsum(t:amax(2)) end, x)
    gradcheck(function(t) return wsum(t:amin({1, 2}, true)) end, x)
    gradcheck(function(t) return wsum(t:amax(-2, true)) end, x)
    local tie = torch.tensor({{1.0, 3, 3}, {2, 2, 2}}, {dtype = 'float64'}):requires_grad_()
    tie:amax(2):sum():backward()
    close(tie.grad, torch.tensor({{0, 0.5, 0.5}, {1 / 3, 1 / 3, 1 / 3}}, {dtype = 'float64'}))
    local t2 = torch.tensor({1.0, 5, 5, 0}, {dtype = 'float64'}):requires_grad_()
    t2:max():backward()
    close(t2.grad, torch.tensor({0, 0.5, 0.5, 0}, {dtype = 'float64'}))
    assert.are.equal('<MaxBackward>', tostring(t2:max().grad_fn))
    assert.are.equal('<AminBackward>', tostring(t2:amin(1).grad_fn))
  end)

  it('elementwise max(x, y) and min(x, y)', function()
    local a, b = randd(3, 4), randd(4)
    gradcheck(function(t) return wsum(t:max(b)) end, a)
    gradcheck(function(t) return wsum(a:min(t)) end, b)
  end)
end)
