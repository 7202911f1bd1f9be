-- spec/support/gradients.lua: the finite-difference helpers the autograd
-- specs share (loaded with dofile; not a spec itself).
local torch = require 'torch'
local assert = require 'luassert'   -- busted's assert is not a global here
local M = {}

-- Numerical gradient of f (a function of the tensor x returning a 0-dim
-- tensor) at x, by central differences.
function M.numeric_grad(f, x, eps)
  eps = eps or 1e-6
  local g = torch.zeros(x:size(), {dtype = 'float64'})
  local flat, gflat = x:view(-1), g:view(-1)
  for i = 1, flat:size(1) do
    local v = flat[i]
    flat[i] = v + eps
    local hi = torch.no_grad(function() return f(x):item() end)
    flat[i] = v - eps
    local lo = torch.no_grad(function() return f(x):item() end)
    flat[i] = v
    gflat[i] = (hi - lo) / (2 * eps)
  end
  return g
end

-- a and b have one shape and agree within tol (relative above 1); NaN fails
function M.close(a, b, tol)
  tol = tol or 1e-5
  assert.are.same(b:size(), a:size())
  local da, db = a:_flat_values(), b:_flat_values()
  for i = 1, #da do
    local err = math.abs(da[i] - db[i])
    if not (err <= tol * math.max(1, math.abs(db[i]))) then
      error(string.format('element %d: %.10g vs %.10g', i, da[i], db[i]), 2)
    end
  end
end

-- d f(x) / dx from autograd against finite differences
function M.gradcheck(f, x, tol)
  local leaf = x:clone():requires_grad_()
  local y = f(leaf)
  y:backward()
  assert.is_not_nil(leaf.grad)
  M.close(leaf.grad, M.numeric_grad(f, x:clone()), tol)
end

function M.randd(...)
  local args = {...}
  args[#args + 1] = {dtype = 'float64'}
  return torch.randn(table.unpack(args))
end

return M
