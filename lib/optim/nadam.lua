-- optim.NAdam, as torch.optim.NAdam: Adam with Nesterov momentum and the
-- momentum schedule mu_t = beta1 (1 - 0.5 * 0.96^(t momentum_decay)). The
-- schedule is kept in Lua (state.mu_product); the update is one fused
-- kernel per parameter and step (torch._optim_nadam).
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_nadam

-- optim.NAdam(params, {lr=2e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, momentum_decay=4e-3, decoupled_weight_decay=false,
-- maximize=false})
return optim._define('NAdam', {
  positional = {'lr', 'betas', 'eps', 'weight_decay', 'momentum_decay', 'decoupled_weight_decay'},
  defaults = {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3,
              decoupled_weight_decay = false, maximize = false},
  checks = {'lr', 'eps', 'betas', 'weight_decay', 'momentum_decay'},
  buffers = {'exp_avg', 'exp_avg_sq'},
  start = function(_, state) state.mu_product = 1.0 end,
  update = function(p, grad, state, g)
    local lr, beta1, beta2, momentum_decay = g.lr, g.betas[1], g.betas[2], g.momentum_decay
    local step = state.step + 1
    state.step = step
    local mu = beta1 * (1.0 - 0.5 * 0.96 ^ (step * momentum_decay))
    local mu_next = beta1 * (1.0 - 0.5 * 0.96 ^ ((step + 1) * momentum_decay))
    local mu_product = state.mu_product * mu
    state.mu_product = mu_product
    local grad_coef = -lr * (1.0 - mu) / (1.0 - mu_product)
    local avg_coef = (-lr * mu_next) / (1.0 - mu_product * mu_next)
    kernel(p, grad, state.exp_avg, state.exp_avg_sq, lr, beta1, beta2, g.eps, g.weight_decay, 1 - beta2 ^ step,
           grad_coef, avg_coef, g.decoupled_weight_decay, g.maximize)
  end,
})
