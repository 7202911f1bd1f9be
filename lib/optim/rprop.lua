-- optim.rprop: resilient backpropagation (Riedmiller), Torch7's function.
-- Each element keeps its own step size, grown while the gradient keeps its
-- sign and shrunk when the sign flips; only the gradient's sign is used.
local torch = require 'torch'
local optim = require 'optim'

-- optim.rprop(opfunc, x, config, state): config stepsize (0.1, the first
-- step size of every element), etaplus (1.2), etaminus (0.5), stepsizemax
-- (50), stepsizemin (1e-6), niter (1, evaluations per call). state delta
-- (the last gradient kept) and stepsize (the per-element steps). After a
-- sign flip the element does not move and its gradient is forgotten, as in
-- Torch7. Returns x and the losses of the niter evaluations.
function optim.rprop(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local name = 'optim.rprop'
  local etaplus, etaminus = config.etaplus or 1.2, config.etaminus or 0.5
  local stepmax, stepmin = config.stepsizemax or 50.0, config.stepsizemin or 1e-6
  local losses = {}
  for i = 1, config.niter or 1 do
    local fx, dfdx = optim._evaluate(name, opfunc, x)
    if state.delta == nil then
      state.delta = torch.zeros_like(x)
      state.stepsize = torch.full_like(x, config.stepsize or 0.1)
    end
    torch.no_grad(function()
      local agreement = (dfdx * state.delta):sign()
      local flipped = agreement:lt(0)
      local factor = agreement:gt(0):to(x.dtype) * (etaplus - 1) + flipped:to(x.dtype) * (etaminus - 1) + 1
      state.stepsize:mul_(factor):clamp_(stepmin, stepmax)
      local g = dfdx:masked_fill(flipped, 0)
      x:addcmul_(g:sign(), state.stepsize, {value = -1})
      state.delta:copy_(g)
    end)
    losses[i] = fx
  end
  return x, losses
end

return optim
