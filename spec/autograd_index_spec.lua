-- Derivatives in C of the indexing and selection ops (src/autograd/ag_index.c,
-- ag_reduce.c, ag_shape.c): values of sort/topk/kthvalue/median/mode, cumprod
-- and prod with zeros, the scatter and index_put family, masked ops,
-- as_strided and the shape ops, each checked by gradcheck, a representative
-- set by gradgradcheck, and a few gradients against PyTorch's numbers.
local torch = require 'torch'

local function randd(...)
  local dims = table.pack(...)
  dims[dims.n + 1] = {dtype = 'float64'}
  return torch.randn(table.unpack(dims, 1, dims.n + 1))
end
local function f64(t) return torch.tensor(t, {dtype = 'float64'}) end
local function leaf(t) return t:clone():requires_grad_() end
local function check(f, inputs) assert.is_true(torch.autograd.gradcheck(f, inputs)) end
local function check2(f, inputs) assert.is_true(torch.autograd.gradgradcheck(f, inputs)) end
-- values in a random order, far enough apart that finite differences keep the order
local function distinct(...)
  local n = 1
  for _, s in ipairs({...}) do n = n * s end
  return (torch.randperm(n):double() + randd(n) * 0.1):view(...)
end
local function close(want, got, tol)
  tol = tol or 1e-10
  local a, b = f64(want):reshape(-1), got:detach():reshape(-1)
  assert.are.equal(a:numel(), b:numel())
  for i = 1, a:numel() do
    if math.abs(a[i] - b[i]) > tol * math.max(1, math.abs(a[i])) then
      error(string.format('element %d: want %.12g, got %.12g', i, a[i], b[i]), 2)
    end
  end
end
local w3 = f64({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})

-- the gradient of (f(x) * w):sum() at x
local function grad_of(f, x, w)
  local l = leaf(x)
  ;(f(l) * w):sum():backward()
  return l.grad
end

describe('values of the selecting ops', function()
  it('sort and topk: gradcheck on contiguous and transposed inputs, and PyTorch values', function()
    local x = leaf(distinct(3, 4))
    check(function(t) return (t:sort(2)) end, {x})
    check(function(t) return (t:sort(1, true)) end, {x})
    check(function(t) return (t:t():sort(2)) end, {x})
    check(function(t) return (t:topk(2)) end, {x})
    check(function(t) return (t:topk(2, 1, false)) end, {x})
    check2(function(t) return (t:sort(2)) * t end, {x})
    assert.are.equal('SortBackward', x:sort(2).grad_fn:name())
    close({{1, 3, 2}, {5, 6, 4}}, grad_of(function(t) return (t:sort(2, true)) end,
      f64({{3, 1, 2}, {0.5, -1, 4}}), f64({{1, 2, 3}, {4, 5, 6}})))
    close({{4, 0, 6}, {1, 2, 0}, {0, 5, 3}}, grad_of(function(t) return (t:topk(2, 1, false)) end,
      f64({{3, 1, 2}, {0.5, -1, 4}, {7, 0, -2}}), f64({{1, 2, 3}, {4, 5, 6}})))
  end)

  it('kthvalue, median and mode along a dim, with and without keepdim', function()
    local x = leaf(distinct(3, 5))
    check(function(t) return (t:kthvalue(2, 2)) end, {x})
    check(function(t) return (t:kthvalue(3, 1, true)) end, {x})
    check(function(t) return (t:t():median(2)) end, {x})
    check(function(t) return (t:median(1, true)) end, {x})
    check(function(t) return (t:mode(2)) end, {x})
    close({{0, 0, 10, 0}, {20, 0, 0, 0}}, grad_of(function(t) return (t:kthvalue(2, 2, true)) end,
      f64({{3, 1, 2, 5}, {0.5, -1, 4, 2}}), f64({{10}, {20}})))
    close({{0, 2, 3, 0}, {0, 0, 0, 4}, {1, 0, 0, 0}}, grad_of(function(t) return (t:median(1)) end,
      f64({{3, 1, 2, 5}, {0.5, -1, 4, 2}, {1, 1, 1, 1}}), f64({1, 2, 3, 4})))
    -- mode: the last index of the value (PyTorch's 3 and 4, 1-based)
    local m = f64({{1, 2, 2, 3}, {5, 5, 4, 4}})
    local _, idx = m:mode(2)
    assert.are.same({3, 4}, idx:totable())
    close({{0, 0, 3, 0}, {0, 0, 0, 7}}, grad_of(function(t) return (t:mode(2)) end, m, f64({3, 7})))
  end)

  it('median of all elements: ties share the gradient, as in PyTorch', function()
    check(function(t) return t:median() end, {leaf(distinct(3, 4))})
    close({{0, 0.25, 0.25, 0}, {0, 0.25, 0, 0.25}},
      grad_of(function(t) return t:median() end, f64({{1, 2, 2, 3}, {5, 2, 4, 2}}), 1))
  end)

  it('max and min along a dim', function()
    local x = leaf(distinct(3, 4))
    check(function(t) return (t:max(2)) end, {x})
    check(function(t) return (t:t():min(2, true)) end, {x})
  end)

  it('a 0-dim input is its own value', function()
    local s = leaf(f64(2.5))
    check(function(t) return (t:sort()) end, {s})
    check(function(t) return (t:kthvalue(1)) end, {s})
  end)
end)

describe('cumprod', function()
  it('without zeros: gradcheck and gradgradcheck, non-contiguous, and PyTorch values', function()
    local x = leaf(randd(3, 4) + 3)
    check(function(t) return t:cumprod(2) end, {x})
    check(function(t) return t:t():cumprod(1) end, {x})
    check(function(t) return t:cumprod(-1, {dtype = 'float64'}) end, {x})
    check2(function(t) return t:cumprod(2) end, {x})
    local g = leaf(f64({{1.5, -2, 0.5}, {2, 3, -1}}))
    local y = (g:cumprod(2) ^ 2):sum()
    local d1 = torch.autograd.grad(y, g, {create_graph = true})[1]
    close({{18, -11.25, 9}, {76, 48, -72}}, d1)
    close({{9, -18.375, 21}, {14, 16, -48}}, torch.autograd.grad(d1:sum(), g)[1], 1e-12)
  end)

  it('with zeros: exact first and second derivatives (PyTorch values)', function()
    local x = leaf(f64({2, 0, 3, 0.5, 0, 4}))
    local w = f64({1, 2, 3, 4, 5, 6})
    local d1 = torch.autograd.grad((x:cumprod(1) * w):sum(), x, {create_graph = true})[1]
    close({1, 34, 0, 0, 0, 0}, d1)
    local v = f64({1, -1, 2, 0.5, 3, -2})
    close({-17, 310, -10, -24, -87, 0}, torch.autograd.grad((d1 * v):sum(), x)[1])
    -- first order without a graph takes the O(n) path: the same numbers
    close({1, 34, 0, 0, 0, 0}, grad_of(function(t) return t:cumprod(1) end, x:detach(), w))
    local z = leaf(f64({{2, 0, 3, 0.5}, {0, 0, 1.5, 2}, {1, 2, 0, 3}}))
    check(function(t) return t:cumprod(2) end, {z})
    check(function(t) return t:t():cumprod(1) end, {z})
    check2(function(t) return t:cumprod(2) end, {z})
  end)

  it('refuses a create_graph backward through zeros that would need too much memory', function()
    local x = torch.ones(4097, {dtype = 'float64'})
    x[7] = 0
    x:requires_grad_()
    local y = x:cumprod(1):sum()
    local ok, err = pcall(torch.autograd.grad, y, x, {create_graph = true})
    assert.is_false(ok)
    assert.truthy(tostring(err):find('cumprod: a create_graph backward through an input holding zeros', 1, true))
    local g = torch.autograd.grad(x:cumprod(1):sum(), x)[1]   -- first order is O(n)
    assert.are.equal(4096 - 6 + 1, g[7])
  end)
end)

describe('prod with zeros', function()
  it('has exact second derivatives (PyTorch values) over a dim, several dims and all', function()
    local x = leaf(f64({{2, 0, 3}, {0, 0, 5}, {1, 2, 4}}))
    local d1 = torch.autograd.grad((x:prod(2) * f64({1, 2, 3})):sum(), x, {create_graph = true})[1]
    close({{0, 6, 0}, {0, 0, 0}, {24, 12, 6}}, d1)
    close({{6, 9, 4}, {50, 40, 0}, {150, 111, 66}},
      torch.autograd.grad((d1 * f64({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}})):sum(), x)[1])
    check2(function(t) return t:prod(1, true) end, {x})
    check2(function(t) return t:t():prod() end, {x})
    local y = leaf(f64({{{1, 0}, {2, 3}}, {{0, 4}, {5, 0.5}}}))
    check2(function(t) return t:prod({1, 3}) end, {y})
  end)
end)

describe('scatter and index_put derivatives', function()
  local index = torch.tensor({{1, 3, 2}, {3, 1, 1}})

  it('scatter (tensor and number), scatter_add and reduce=add, with PyTorch values', function()
    local x, src = leaf(randd(3, 3)), leaf(randd(2, 3))
    check(function(a, b) return a:scatter(1, index, b) end, {x, src})
    check(function(a) return a:scatter(1, index, 2.5) end, {x})
    check(function(a, b) return a:scatter_add(1, index, b) end, {x, src})
    check(function(a, b) return a:t():scatter(1, index, b, {reduce = 'add'}) end, {x, src})
    check2(function(a, b) return a:scatter_add(1, index, b) * a end, {x, src})
    check2(function(a, b) return a:scatter(1, index, b) * b:sum() end, {x, src})
    local s = f64({{1, 2, 3}, {4, 5, 6}})
    local lx, ls = leaf(w3), leaf(s)
    ;(lx:scatter_add(1, index, ls) * w3):sum():backward()
    close(w3, lx.grad)
    close({{1, 8, 6}, {7, 2, 3}}, ls.grad)
    lx, ls = leaf(w3), leaf(s)
    ;(lx:scatter(1, index, ls) * w3):sum():backward()
    close({{0, 0, 0}, {4, 5, 0}, {0, 0, 9}}, lx.grad)
    close({{1, 8, 6}, {7, 2, 3}}, ls.grad)
  end)

  it('a src larger than the index gets zeros where it was not read', function()
    local x, src = leaf(randd(3, 3)), leaf(randd(2, 4))
    check(function(a, b) return a:scatter_add(1, index, b) end, {x, src})
    local ls = leaf(f64({{1, 2, 3, 9}, {4, 5, 6, 9}}))
    ;(torch.zeros(3, 3, {dtype = 'float64'}):scatter_add(1, index, ls) * w3):sum():backward()
    close({{1, 8, 6, 0}, {7, 2, 3, 0}}, ls.grad)
  end)

  it('index_add (alpha), index_copy, index_fill (number and tensor value), with PyTorch values', function()
    local x, src = leaf(randd(4, 3)), leaf(randd(2, 3))
    local idx = torch.tensor({4, 2})
    check(function(a, b) return a:index_add(1, idx, b) end, {x, src})
    check(function(a, b) return a:index_add(2, torch.tensor({3, 1}), b:t(), {alpha = -2}) end, {x, leaf(randd(2, 4))})
    check(function(a, b) return a:index_copy(1, idx, b) end, {x, src})
    check(function(a) return a:index_fill(2, torch.tensor({1, 3}), -1) end, {x})
    local v = leaf(f64(0.5))
    check(function(a, b) return a:index_fill(1, idx, b) end, {x, v})
    check2(function(a, b) return a:index_add(1, idx, b) * a end, {x, src})
    check2(function(a, b) return a:index_copy(1, idx, b) * b:sum() end, {x, src})
    local lx, ls = leaf(w3), leaf(f64({{1, 2, 3}, {4, 5, 6}}))
    ;(lx:index_add(1, torch.tensor({3, 1}), ls, {alpha = -2}) * w3):sum():backward()
    close(w3, lx.grad)
    close({{-14, -16, -18}, {-2, -4, -6}}, ls.grad)
    lx, ls = leaf(w3), leaf(f64({{1, 2}, {4, 5}, {7, 8}}))
    ;(lx:index_copy(2, torch.tensor({3, 1}), ls) * w3):sum():backward()
    close({{0, 2, 0}, {0, 5, 0}, {0, 8, 0}}, lx.grad)
    close({{3, 1}, {6, 4}, {9, 7}}, ls.grad)
    lx, v = leaf(w3), leaf(f64(2.5))
    ;(lx:index_fill(2, torch.tensor({3, 1}), v) * w3):sum():backward()
    close({{0, 2, 0}, {0, 5, 0}, {0, 8, 0}}, lx.grad)
    close({30}, v.grad)
  end)

  it('masked_scatter with a broadcast mask and a longer src (PyTorch values)', function()
    local mask = torch.tensor({true, false, true})
    local x, src = leaf(randd(2, 3)), leaf(randd(7))
    check(function(a, b) return a:masked_scatter(mask, b) end, {x, src})
    check(function(a, b) return a:t():masked_scatter(mask:view(3, 1), b) end, {x, src})
    check2(function(a, b) return a:masked_scatter(mask, b) * b:narrow(1, 1, 3):sum() end, {x, src})
    local lx, ls = leaf(f64({{1, 2, 3}, {4, 5, 6}})), leaf(f64({10, 20, 30, 40, 50, 60, 70}))
    ;(lx:masked_scatter(mask, ls) * f64({{1, 2, 3}, {4, 5, 6}})):sum():backward()
    close({{0, 2, 0}, {0, 5, 0}}, lx.grad)
    close({1, 3, 4, 6, 0, 0, 0}, ls.grad)
  end)

  it('masked_select with a mask broadcast against x (PyTorch values), masked_fill with a tensor value', function()
    local mask = torch.tensor({{true, false, true}, {false, true, true}})
    local x = leaf(randd(3))
    check(function(a) return a:masked_select(mask) end, {x})
    check(function(a) return torch.masked_select(a:view(2, 1), mask) end, {leaf(randd(2))})
    local y = leaf(randd(2, 3))
    check(function(a) return a:t():masked_select(torch.tensor({true, false})) end, {y})
    check2(function(a) return a:masked_select(mask) * a:sum() end, {x})
    local lx = leaf(f64({1, 2, 3}))
    local sel = lx:masked_select(mask)
    close({1, 3, 2, 3}, sel)
    ;(sel * f64({1, 2, 3, 4})):sum():backward()
    close({1, 3, 6}, lx.grad)
    local v = leaf(f64(1.5))
    check(function(a, b) return a:masked_fill(mask, b) end, {y, v})
    check(function(a, b) return a:t():masked_fill(mask:t(), b) end, {y, v})
  end)
end)

describe('as_strided', function()
  it('non-overlapping and overlapping views of a contiguous input (PyTorch values)', function()
    local x = leaf(randd(6))
    check(function(a) return a:as_strided({2, 2}, {3, 1}, 2) end, {x})
    check(function(a) return a:as_strided({3, 2}, {1, 3}) end, {x})
    check(function(a) return a:as_strided({3, 3}, {1, 1}) end, {x})
    check(function(a) return a:as_strided({2, 3}, {0, 2}) end, {x})
    check2(function(a) return a:as_strided({2, 3}, {3, 1}) * a:as_strided({2, 3}, {1, 2}) end, {x})
    close({1, 6, 15, 14, 9, 0}, grad_of(function(a) return a:as_strided({3, 3}, {1, 1}) end,
      f64({1, 2, 3, 4, 5, 6}), w3))
    close({{0, 1, 2}, {0, 3, 4}}, grad_of(function(a) return a:as_strided({2, 2}, {3, 1}, 2) end,
      f64({{1, 2, 3}, {4, 5, 6}}), f64({{1, 2}, {3, 4}})))
    local rows = leaf(randd(4, 3))                       -- an offset input: row 2 onwards
    check(function(a) local r = a:narrow(1, 2, 3); return r:as_strided({2, 2}, {1, 3}, r:storageOffset()) end,
      {rows})
  end)

  it('refuses inputs it cannot differentiate', function()
    local ok, err = pcall(function() return leaf(randd(3, 3)):t():as_strided({2}, {1}) end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('contiguous', 1, true))
    local x = leaf(randd(4, 3))
    ok, err = pcall(function() return x:narrow(1, 2, 2):as_strided({3}, {1}, 1) end)   -- before the input
    assert.is_false(ok)
    assert.truthy(tostring(err):find('as_strided', 1, true))
  end)
end)

describe('shape and parametric ops', function()
  it('unfold (also 0-dim), roll, flip, repeat, tril/triu and diagonal on non-contiguous inputs', function()
    local x = leaf(randd(4, 5))
    check(function(a) return a:t():unfold(2, 2, 1) end, {x})
    check(function(a) return a:unfold(1, 2, 2) end, {x})
    check(function(a) return a:unfold(1, 1, 1) end, {leaf(f64(1.5))})
    check(function(a) return a:t():roll({1, -2}, {1, 2}) end, {x})
    check(function(a) return a:roll(3) end, {x})
    check(function(a) return a:t():flip({1, 2}) end, {x})
    check(function(a) return a:t()['repeat'](a:t(), 2, 1, 2) end, {x})
    check(function(a) return a:t():repeatTensor({2, 1}) end, {x})
    check(function(a) return a:t():tril(-1) end, {x})
    check(function(a) return a:t():triu(1) end, {x})
    check(function(a) return a:t():diagonal(1) end, {x})
    check(function(a) return a:view(2, 2, 5):diagonal({offset = -1, dim1 = 3, dim2 = 1}) end, {x})
    check2(function(a) return a:t():unfold(2, 2, 1) * a:t():unfold(2, 2, 1) end, {x})
  end)

  it('where, lerp, addcmul and addcdiv with broadcast and non-contiguous inputs', function()
    local a, b = leaf(randd(3, 4)), leaf(randd(4))
    local cond = torch.tensor({true, false, true, false})
    check(function(p, q) return torch.where(cond, p:t():t(), q) end, {a, b})
    check(function(p, q) return torch.where(cond:view(4, 1), p:t(), q:view(4, 1)) end, {a, b})
    local w = leaf(torch.rand(3, 1, {dtype = 'float64'}))
    check(function(p, q, r) return p:lerp(q, r) end, {a, b, w})
    check(function(p, q) return p:t():lerp(q:view(4, 1), 0.3) end, {a, b})
    local c = leaf(torch.rand(3, 1, {dtype = 'float64'}) + 1)
    check(function(p, q, r) return p:addcmul(q, r, {value = 0.5}) end, {a, b, c})
    check(function(p, q, r) return p:t():addcdiv(q:view(4, 1), r:t(), {value = -2}) end, {a, b, c})
    check2(function(p, q, r) return p:addcdiv(q, r) end, {a, b, c})
  end)
end)
