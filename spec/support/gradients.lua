-- spec/support/gradients.lua: the finite-difference helpers the autograd
-- specs share (loaded with dofile; not a spec itself).
local torch = require 'torch'
local assert = require 'luassert'   -- busted's assert is not a global here
local M = {}

-- Numerical gradient of f (a function of the tensor x returning a 0-dim
-- tensor) at x, by central differences: x's own elements are perturbed in
-- place, whatever its layout (torch.autograd's finite differences).
function M.numeric_grad(f, x, eps)
  local jac = torch.no_grad(torch.autograd._numeric_jacobian, f, {x}, 1, eps or 1e-6)
  return jac:view(x:size())
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

-- d f(x) / dx from autograd against finite differences, at x laid out as
-- it is: the leaf shares x's storage, so a transposed or narrowed x is
-- tested as such (a clone would be contiguous)
function M.gradcheck(f, x, tol)
  local leaf = x:detach():requires_grad_()
  local y = f(leaf)
  y:backward()
  assert.is_not_nil(leaf.grad)
  M.close(leaf.grad, M.numeric_grad(f, x), tol)
end

function M.randd(...)
  local args = {...}
  args[#args + 1] = {dtype = 'float64'}
  return torch.randn(table.unpack(args))
end

return M
