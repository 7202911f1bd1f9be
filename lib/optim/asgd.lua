-- optim.asgd: averaged stochastic gradient descent (L. Bottou's sgd-2.0),
-- Torch7's function. x takes decayed gradient steps; state.ax averages the
-- iterates once t passes t0.
local torch = require 'torch'
local optim = require 'optim'

-- optim.asgd(opfunc, x, config, state): config eta0 (1e-4, the first
-- rate), lambda (1e-4, the decay), alpha (0.75), t0 (1e6, when averaging
-- starts). Each call: x = (1 - lambda eta_t) x - eta_t g; ax moves toward
-- x by mu_t (ax = x while mu_t = 1); then t += 1, eta_t = eta0 / (1 +
-- lambda eta0 t)^alpha, mu_t = 1 / max(1, t - t0). state eta_t, mu_t, t,
-- ax. Returns x, {fx} and the averaged point ax.
function optim.asgd(opfunc, x, config, state)
  config = config or {}
  state = state or config
  local eta0, lambda = config.eta0 or 1e-4, config.lambda or 1e-4
  local alpha, t0 = config.alpha or 0.75, config.t0 or 1e6
  state.eta_t = state.eta_t or eta0
  state.mu_t = state.mu_t or 1
  state.t = state.t or 0
  local fx, dfdx = optim._evaluate('optim.asgd', opfunc, x)
  torch.no_grad(function()
    x:mul_(1 - lambda * state.eta_t):add_(dfdx, {alpha = -state.eta_t})
    if state.ax == nil then state.ax = torch.zeros_like(x) end
    if state.mu_t ~= 1 then
      state.ax:add_(x - state.ax, {alpha = state.mu_t})
    else
      state.ax:copy_(x)
    end
  end)
  state.t = state.t + 1
  state.eta_t = eta0 / (1 + lambda * eta0 * state.t) ^ alpha
  state.mu_t = 1 / math.max(1, state.t - t0)
  return x, {fx}, state.ax
end

return optim
