-- optim.SGD: stochastic gradient descent with momentum, dampening, Nesterov
-- momentum, weight decay and maximize, as torch.optim.SGD. Each step is one
-- fused kernel per parameter (torch._optim_sgd), the kernel optim.sgd uses.
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_sgd

-- optim.SGD(params, {lr=1e-3, momentum=0, dampening=0, weight_decay=0,
-- nesterov=false, maximize=false})
return optim._define('SGD', {
  positional = {'lr', 'momentum', 'dampening', 'weight_decay', 'nesterov'},
  defaults = {lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0, nesterov = false, maximize = false},
  checks = {'lr', 'momentum', 'weight_decay'},
  check = function(name, g)
    if type(g.dampening) ~= 'number' then optim._error('%s: invalid dampening value: %s', name, tostring(g.dampening)) end
    if g.nesterov and (g.momentum <= 0 or g.dampening ~= 0) then
      optim._error('%s: Nesterov momentum requires a momentum and zero dampening (momentum %s, dampening %s)',
                   name, tostring(g.momentum), tostring(g.dampening))
    end
  end,
  update = function(p, grad, state, g)
    local momentum = g.momentum
    local buf, first = nil, false
    if momentum ~= 0 then
      buf = state.momentum_buffer
      if buf == nil then
        buf = torch.empty_like(p)
        state.momentum_buffer = buf
        first = true
      end
    end
    kernel(p, grad, buf, g.lr, g.weight_decay, momentum, g.dampening, g.nesterov, g.maximize, first)
  end,
})
