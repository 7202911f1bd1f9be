-- optim.Adadelta, as torch.optim.Adadelta: steps scaled by the ratio of
-- running RMS of past updates to running RMS of gradients (rho). One fused
-- kernel per parameter and step.
local torch = require 'torch'
local optim = require 'optim'

local Adadelta = torch.class('optim.Adadelta', 'optim.Optimizer')

local defaults = {lr = 1.0, rho = 0.9, eps = 1e-6, weight_decay = 0, maximize = false}

-- optim.Adadelta(params, {lr=1, rho=0.9, eps=1e-6, weight_decay=0,
-- maximize=false})
function Adadelta:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options('optim.Adadelta', opts, defaults))
end

function Adadelta:check_group(g)
  local name = 'optim.Adadelta'
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_unit(name, 'rho', g.rho, true)
  optim._check_nonneg(name, 'epsilon', g.eps)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
end

function Adadelta:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_adadelta
  for _, group in ipairs(self.param_groups) do
    local lr, rho, eps, wd, maximize = group.lr, group.rho, group.eps, group.weight_decay, group.maximize
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local state = self.state[p]
        if state.step == nil then
          state.step = 0
          state.square_avg = torch.zeros_like(p)
          state.acc_delta = torch.zeros_like(p)
        end
        state.step = state.step + 1
        update(p, grad, state.square_avg, state.acc_delta, lr, rho, eps, wd, maximize)
      end
    end
  end
  return loss
end

return Adadelta
