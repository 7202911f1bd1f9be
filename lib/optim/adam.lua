-- optim.Adam and optim.AdamW, as torch.optim.Adam / AdamW: bias-corrected
-- moment estimates, amsgrad, maximize; Adam adds weight_decay * p to the
-- gradient, AdamW decays the parameter itself (p *= 1 - lr weight_decay).
-- One fused kernel per parameter and step (torch._optim_adam).
local torch = require 'torch'
local optim = require 'optim'

local Adam = torch.class('optim.Adam', 'optim.Optimizer')

local function adam_defaults(weight_decay)
  return {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = weight_decay, amsgrad = false,
          maximize = false, decoupled_weight_decay = false}
end

-- optim.Adam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, amsgrad=false, maximize=false,
-- decoupled_weight_decay=false})
function Adam:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options(self.__typename, opts, adam_defaults(0)))
end

function Adam:check_group(g)
  local name = self.__typename
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_nonneg(name, 'epsilon', g.eps)
  optim._check_betas(name, g.betas)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
end

function Adam:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_adam
  for _, group in ipairs(self.param_groups) do
    local lr, eps, wd = group.lr, group.eps, group.weight_decay
    local beta1, beta2 = group.betas[1], group.betas[2]
    local amsgrad, maximize, decoupled = group.amsgrad, group.maximize, group.decoupled_weight_decay
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local state = self.state[p]
        if state.step == nil then
          state.step = 0
          state.exp_avg = torch.zeros_like(p)
          state.exp_avg_sq = torch.zeros_like(p)
        end
        if amsgrad and state.max_exp_avg_sq == nil then state.max_exp_avg_sq = torch.zeros_like(p) end
        local step = state.step + 1
        state.step = step
        update(p, grad, state.exp_avg, state.exp_avg_sq, state.max_exp_avg_sq, lr, beta1, beta2, eps, wd,
               1 - beta1 ^ step, 1 - beta2 ^ step, amsgrad, maximize, decoupled)
      end
    end
  end
  return loss
end

-- optim.AdamW(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=1e-2, amsgrad=false, maximize=false}): Adam with decoupled
-- weight decay.
local AdamW = torch.class('optim.AdamW', 'optim.Adam')

function AdamW:__init(params, opts)
  local defaults = adam_defaults(1e-2)
  defaults.decoupled_weight_decay = nil
  defaults = optim._options('optim.AdamW', opts, defaults)
  defaults.decoupled_weight_decay = true
  optim.Optimizer.__init(self, params, defaults)
end

return Adam
