-- optim.Adagrad, as torch.optim.Adagrad: per-element rates scaled by the
-- root of the summed squared gradients, with lr decay over steps. One fused
-- kernel per parameter and step (torch._optim_adagrad, which optim.adagrad
-- uses too).
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_adagrad

-- optim.Adagrad(params, {lr=1e-2, lr_decay=0, weight_decay=0,
-- initial_accumulator_value=0, eps=1e-10, maximize=false})
return optim._define('Adagrad', {
  positional = {'lr', 'lr_decay', 'weight_decay', 'initial_accumulator_value', 'eps'},
  defaults = {lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10,
              maximize = false},
  checks = {'lr', 'lr_decay', 'weight_decay', 'initial_accumulator_value', 'eps'},
  buffers = {},
  start = function(p, state, g) state.sum = torch.full_like(p, g.initial_accumulator_value) end,
  update = function(p, grad, state, g)
    local step = state.step + 1
    state.step = step
    kernel(p, grad, state.sum, g.lr / (1 + (step - 1) * g.lr_decay), g.eps, g.weight_decay, g.maximize)
  end,
})
