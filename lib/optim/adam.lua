-- optim.Adam and optim.AdamW, as torch.optim.Adam / AdamW: bias-corrected
-- moment estimates, amsgrad, maximize; Adam adds weight_decay * p to the
-- gradient, AdamW decays the parameter itself (p *= 1 - lr weight_decay).
-- One fused kernel per parameter and step (torch._optim_adam, which
-- optim.adam uses too).
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_adam

local function adam_defaults(weight_decay, decoupled)
  return {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = weight_decay, amsgrad = false,
          maximize = false, decoupled_weight_decay = decoupled}
end

local function update(p, grad, state, g)
  local amsgrad = g.amsgrad
  if amsgrad and state.max_exp_avg_sq == nil then state.max_exp_avg_sq = torch.zeros_like(p) end
  local step = state.step + 1
  state.step = step
  local beta1, beta2 = g.betas[1], g.betas[2]
  kernel(p, grad, state.exp_avg, state.exp_avg_sq, state.max_exp_avg_sq, g.lr, beta1, beta2, g.eps,
         g.weight_decay, 1 - beta1 ^ step, 1 - beta2 ^ step, amsgrad, g.maximize, g.decoupled_weight_decay)
end

local checks = {'lr', 'eps', 'betas', 'weight_decay'}
local positional = {'lr', 'betas', 'eps', 'weight_decay', 'amsgrad'}

-- optim.Adam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, amsgrad=false, maximize=false,
-- decoupled_weight_decay=false})
local buffers = {'exp_avg', 'exp_avg_sq'}
local Adam = optim._define('Adam', {defaults = adam_defaults(0, false), checks = checks, buffers = buffers,
                                    positional = positional, update = update})

-- optim.AdamW(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=1e-2, amsgrad=false, maximize=false}): Adam with decoupled
-- weight decay.
optim._define('AdamW', {defaults = adam_defaults(1e-2, nil), fixed = {decoupled_weight_decay = true},
                        checks = checks, buffers = buffers, positional = positional, update = update},
              'optim.Adam')

return Adam
