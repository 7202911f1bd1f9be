-- optim.RMSprop, as torch.optim.RMSprop: a running average of squared
-- gradients (alpha), optionally centered (minus the squared running mean of
-- the gradient) and with momentum. One fused kernel per parameter and step
-- (torch._optim_rmsprop, which optim.rmsprop uses too).
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_rmsprop

-- optim.RMSprop(params, {lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0,
-- momentum=0, centered=false, maximize=false})
return optim._define('RMSprop', {
  positional = {'lr', 'alpha', 'eps', 'weight_decay', 'momentum', 'centered'},
  defaults = {lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0, centered = false,
              maximize = false},
  checks = {'lr', 'eps', 'momentum', 'weight_decay', 'alpha'},
  buffers = {'square_avg'},
  update = function(p, grad, state, g)
    local momentum, centered = g.momentum, g.centered
    if momentum > 0 and state.momentum_buffer == nil then state.momentum_buffer = torch.zeros_like(p) end
    if centered and state.grad_avg == nil then state.grad_avg = torch.zeros_like(p) end
    state.step = state.step + 1
    kernel(p, grad, state.square_avg, state.grad_avg, state.momentum_buffer, g.lr, g.alpha, g.eps, g.weight_decay,
           momentum, centered, g.maximize)
  end,
})
