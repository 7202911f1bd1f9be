-- optim.RAdam, as torch.optim.RAdam: Adam with the variance of the adaptive
-- rate rectified; while too few steps make that variance intractable
-- (rho_t <= 5) the step is plain bias-corrected momentum. One fused kernel
-- per parameter and step.
local torch = require 'torch'
local optim = require 'optim'

local RAdam = torch.class('optim.RAdam', 'optim.Optimizer')

local defaults = {lr = 1e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, decoupled_weight_decay = false,
                  maximize = false}

-- optim.RAdam(params, {lr=1e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, decoupled_weight_decay=false, maximize=false})
function RAdam:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options('optim.RAdam', opts, defaults))
end

function RAdam:check_group(g)
  local name = 'optim.RAdam'
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_nonneg(name, 'epsilon', g.eps)
  optim._check_betas(name, g.betas)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
end

function RAdam:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_radam
  for _, group in ipairs(self.param_groups) do
    local lr, eps, wd = group.lr, group.eps, group.weight_decay
    local beta1, beta2 = group.betas[1], group.betas[2]
    local decoupled, maximize = group.decoupled_weight_decay, group.maximize
    local rho_inf = 2 / (1 - beta2) - 1
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local state = self.state[p]
        if state.step == nil then
          state.step = 0
          state.exp_avg = torch.zeros_like(p)
          state.exp_avg_sq = torch.zeros_like(p)
        end
        local step = state.step + 1
        state.step = step
        local bc1, bc2 = 1 - beta1 ^ step, 1 - beta2 ^ step
        local rho_t = rho_inf - 2 * step * (beta2 ^ step) / bc2
        local rect = 0
        if rho_t > 5 then
          rect = ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ^ 0.5
        end
        update(p, grad, state.exp_avg, state.exp_avg_sq, lr, beta1, beta2, eps, wd, bc1, bc2, rect, decoupled,
               maximize)
      end
    end
  end
  return loss
end

return RAdam
