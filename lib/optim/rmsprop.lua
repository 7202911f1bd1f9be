-- optim.RMSprop, as torch.optim.RMSprop: a running average of squared
-- gradients (alpha), optionally centered (minus the squared running mean of
-- the gradient) and with momentum. One fused kernel per parameter and step.
local torch = require 'torch'
local optim = require 'optim'

local RMSprop = torch.class('optim.RMSprop', 'optim.Optimizer')

local defaults = {lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = false,
                  maximize = false}

-- optim.RMSprop(params, {lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
-- momentum=0, centered=false, maximize=false})
function RMSprop:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options('optim.RMSprop', opts, defaults))
end

function RMSprop:check_group(g)
  local name = 'optim.RMSprop'
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_nonneg(name, 'epsilon', g.eps)
  optim._check_nonneg(name, 'momentum', g.momentum)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
  optim._check_nonneg(name, 'alpha', g.alpha)
end

function RMSprop:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_rmsprop
  for _, group in ipairs(self.param_groups) do
    local lr, alpha, eps, wd, momentum = group.lr, group.alpha, group.eps, group.weight_decay, group.momentum
    local centered, maximize = group.centered, group.maximize
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local state = self.state[p]
        if state.step == nil then
          state.step = 0
          state.square_avg = torch.zeros_like(p)
        end
        if momentum > 0 and state.momentum_buffer == nil then state.momentum_buffer = torch.zeros_like(p) end
        if centered and state.grad_avg == nil then state.grad_avg = torch.zeros_like(p) end
        state.step = state.step + 1
        update(p, grad, state.square_avg, state.grad_avg, state.momentum_buffer, lr, alpha, eps, wd, momentum,
               centered, maximize)
      end
    end
  end
  return loss
end

return RMSprop
