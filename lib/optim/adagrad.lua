-- optim.Adagrad, as torch.optim.Adagrad: per-element rates from the sum of
-- squared gradients, with a learning-rate decay over steps. One fused kernel
-- per parameter and step.
local torch = require 'torch'
local optim = require 'optim'

local Adagrad = torch.class('optim.Adagrad', 'optim.Optimizer')

local defaults = {lr = 1e-2, lr_decay = 0, weight_decay = 0, initial_accumulator_value = 0, eps = 1e-10,
                  maximize = false}

-- optim.Adagrad(params, {lr=1e-2, lr_decay=0, weight_decay=0,
-- initial_accumulator_value=0, eps=1e-10, maximize=false})
function Adagrad:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options('optim.Adagrad', opts, defaults))
end

function Adagrad:check_group(g)
  local name = 'optim.Adagrad'
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_nonneg(name, 'lr_decay', g.lr_decay)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
  optim._check_nonneg(name, 'initial_accumulator_value', g.initial_accumulator_value)
  optim._check_nonneg(name, 'epsilon', g.eps)
end

function Adagrad:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_adagrad
  for _, group in ipairs(self.param_groups) do
    local lr, lr_decay, eps, wd, maximize = group.lr, group.lr_decay, group.eps, group.weight_decay, group.maximize
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local state = self.state[p]
        if state.step == nil then
          state.step = 0
          state.sum = torch.full_like(p, group.initial_accumulator_value)
        end
        local step = state.step + 1
        state.step = step
        update(p, grad, state.sum, lr / (1 + (step - 1) * lr_decay), eps, wd, maximize)
      end
    end
  end
  return loss
end

return Adagrad
