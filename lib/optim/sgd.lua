-- optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov
-- momentum, weight decay and maximize, as torch.optim.SGD. Each step is one
-- fused kernel per parameter (torch._optim_sgd).
local torch = require 'torch'
local optim = require 'optim'

local SGD = torch.class('optim.SGD', 'optim.Optimizer')

local defaults = {lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false}

-- optim.SGD(params, {lr=1e-3, momentum=0, dampening=0, weight_decay=0,
-- nesterov=false, maximize=false})
function SGD:__init(params, opts)
  optim.Optimizer.__init(self, params, optim._options('optim.SGD', opts, defaults))
end

function SGD:check_group(g)
  local name = 'optim.SGD'
  optim._check_nonneg(name, 'learning rate', g.lr)
  optim._check_nonneg(name, 'momentum', g.momentum)
  optim._check_nonneg(name, 'weight_decay', g.weight_decay)
  if type(g.dampening) ~= 'number' then optim._error('%s: invalid dampening value: %s', name, tostring(g.dampening)) end
  if g.nesterov and (g.momentum <= 0 or g.dampening ~= 0) then
    optim._error('%s: Nesterov momentum requires a momentum and zero dampening (momentum %s, dampening %s)',
                 name, tostring(g.momentum), tostring(g.dampening))
  end
end

function SGD:step(closure)
  local loss
  if closure then loss = closure() end
  local update = torch._optim_sgd
  for _, group in ipairs(self.param_groups) do
    local lr, wd, momentum, dampening = group.lr, group.weight_decay, group.momentum, group.dampening
    local nesterov, maximize = group.nesterov, group.maximize
    for _, p in ipairs(group.params) do
      local grad = p.grad
      if grad ~= nil then
        local buf, first = nil, false
        if momentum ~= 0 then
          local state = self.state[p]
          buf = state.momentum_buffer
          if buf == nil then
            buf = torch.empty_like(p)
            state.momentum_buffer = buf
            first = true
          end
        end
        update(p, grad, buf, lr, wd, momentum, dampening, nesterov, maximize, first)
      end
    end
  end
  return loss
end

return SGD
