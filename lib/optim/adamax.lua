-- optim.Adamax, as torch.optim.Adamax: Adam with the infinity norm in place
-- of the second moment. One fused kernel per parameter and step
-- (torch._optim_adamax, which optim.adamax uses too).
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_adamax

-- optim.Adamax(params, {lr=2e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, maximize=false})
return optim._define('Adamax', {
  positional = {'lr', 'betas', 'eps', 'weight_decay'},
  defaults = {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, maximize = false},
  checks = {'lr', 'eps', 'betas', 'weight_decay'},
  buffers = {'exp_avg', 'exp_inf'},
  update = function(p, grad, state, g)
    local step = state.step + 1
    state.step = step
    local beta1 = g.betas[1]
    kernel(p, grad, state.exp_avg, state.exp_inf, g.lr / (1 - beta1 ^ step), beta1, g.betas[2], g.eps,
           g.weight_decay, g.maximize)
  end,
})
