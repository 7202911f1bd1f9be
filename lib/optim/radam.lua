-- optim.RAdam, as torch.optim.RAdam: Adam with the variance of the adaptive
-- rate rectified; while too few steps make that variance intractable
-- (rho_t <= 5) the step is plain bias-corrected momentum. One fused kernel
-- per parameter and step (torch._optim_radam).
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_radam

-- optim.RAdam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, decoupled_weight_decay=false, maximize=false})
return optim._define('RAdam', {
  positional = {'lr', 'betas', 'eps', 'weight_decay', 'decoupled_weight_decay'},
  defaults = {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, decoupled_weight_decay = false,
              maximize = false},
  checks = {'lr', 'eps', 'betas', 'weight_decay'},
  buffers = {'exp_avg', 'exp_avg_sq'},
  update = function(p, grad, state, g)
    local beta1, beta2 = g.betas[1], g.betas[2]
    local step = state.step + 1
    state.step = step
    local bc1, bc2 = 1 - beta1 ^ step, 1 - beta2 ^ step
    local rho_inf = 2 / (1 - beta2) - 1
    local rho_t = rho_inf - 2 * step * (beta2 ^ step) / bc2
    local rect = 0
    if rho_t > 5 then
      rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ^ 0.5
    end
    kernel(p, grad, state.exp_avg, state.exp_avg_sq, g.lr, beta1, beta2, g.eps, g.weight_decay, bc1, bc2, rect,
           g.decoupled_weight_decay, g.maximize)
  end,
})
