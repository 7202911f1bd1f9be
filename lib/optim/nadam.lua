-- optim.NAdam, as torch.optim.NAdam: Adam with Nesterov momentum and the
-- momentum schedule mu_t = beta1 (1 - 0.5 * 0.96^(t momentum_decay)). The
-- schedule is kept in Lua (state.mu_product); the update is one fused
-- kernel per parameter and step.
local torch = require 'torch'
local optim = require 'optim'

local NAdam = torch.class('optim.NAdam', 'optim.Optimizer')

local defaults = {lr = 2e-3, betas = {0.9, 0.999}, eps = 1e-8, weight_decay = 0, momentum_decay = 4e-3,
                  decoupled_weight_decay = false, maximize = false}

-- optim.NAdam(params, {lr=2e-3, betas={0.9, 0.999}, eps=1e-8,
-- weight_decay=0, momentum_decay=4e-3, decoupled_weight_decay=false,
-- maximize=false})
function NAdam:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options('optim.NAdam', opts, defaults))
end

function NAdam:check_group(g)
  local name = 'optim.NAdam'
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_nonneg(name, 'epsilon', g.eps)
  optim._check_betas(name, g.betas)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
  optim._check_nonneg(name, 'momentum_decay', g.momentum_decay)
end

function NAdam:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_nadam
  for _, group in ipairs(self.param_groups) do
    local lr, eps, wd, momentum_decay = group.lr, group.eps, group.weight_decay, group.momentum_decay
    local beta1, beta2 = group.betas[1], group.betas[2]
    local decoupled, maximize = group.decoupled_weight_decay, group.maximize
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local state = self.state[p]
        if state.step == nil then
          state.step = 0
          state.mu_product = 1.0
          state.exp_avg = torch.zeros_like(p)
          state.exp_avg_sq = torch.zeros_like(p)
        end
        local step = state.step + 1
        state.step = step
        local mu = beta1 * (1.0 - 0.5 * 0.96 ^ (step * momentum_decay))
        local mu_next = beta1 * (1.0 - 0.5 * 0.96 ^ ((step + 1) * momentum_decay))
        local mu_product = state.mu_product * mu
        state.mu_product = mu_product
        local grad_coef = -lr * (1.0 - mu) / (1.0 - mu_product)
        local avg_coef = (-lr * mu_next) / (1.0 - mu_product * mu_next)
        update(p, grad, state.exp_avg, state.exp_avg_sq, lr, beta1, beta2, eps, wd, 1 - beta2 ^ step,
               grad_coef, avg_coef, decoupled, maximize)
      end
    end
  end
  return loss
end

return NAdam
