-- optim.Adamax, as torch.optim.Adamax: Adam with the infinity norm in place
-- of the second moment. One fused kernel per parameter and step.
local torch = require 'torch'
local optim = require 'optim'

local Adamax = torch.class('optim.Adamax', 'optim.Optimizer')

local defaults = {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, maximize = false}

-- optim.Adamax(params, {lr=2e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, maximize=false})
function Adamax:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options('optim.Adamax', opts, defaults))
end

function Adamax:check_group(g)
  local name = 'optim.Adamax'
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_nonneg(name, 'epsilon', g.eps)
  optim._check_betas(name, g.betas)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
end

function Adamax:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_adamax
  for _, group in ipairs(self.param_groups) do
    local lr, eps, wd, maximize = group.lr, group.eps, group.weight_decay, group.maximize
    local beta1, beta2 = group.betas[1], group.betas[2]
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local state = self.state[p]
        if state.step == nil then
          state.step = 0
          state.exp_avg = torch.zeros_like(p)
          state.exp_inf = torch.zeros_like(p)
        end
        local step = state.step + 1
        state.step = step
        update(p, grad, state.exp_avg, state.exp_inf, lr / (1 - beta1 ^ step), beta1, beta2, eps, wd, maximize)
      end
    end
  end
  return loss
end

return Adamax
