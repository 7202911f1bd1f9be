-- optim.checkgrad: compares the gradient an opfunc returns with central
-- finite differences, Torch7's function.
local torch = require 'torch'
local optim = require 'optim'

-- optim.checkgrad(opfunc, x, eps): eps (1e-7) is the finite-difference
-- half-width. Returns diff = |dC - dC_est| / |dC + dC_est| (small when
-- the gradient is right), the gradient dC at x and the estimate dC_est.
-- x is moved element by element and put back.
function optim.checkgrad(opfunc, x, eps)
  local name = 'optim.checkgrad'
  eps = eps or 1e-7
  local _, grad = optim._evaluate(name, opfunc, x)
  grad = grad:clone()
  local flat = x:view(-1)
  local estimate = torch.zeros_like(flat)
  for i = 1, flat:numel() do
    local saved = flat[i]
    flat[i] = saved + eps
    local above = optim._loss_number(opfunc(x), name)
    flat[i] = saved - eps
    local below = optim._loss_number(opfunc(x), name)
    flat[i] = saved
    estimate[i] = (above - below) / (2 * eps)
  end
  estimate = estimate:view(x:size())
  local diff = (grad - estimate):norm():item() / (grad + estimate):norm():item()
  return diff, grad, estimate
end

return optim
