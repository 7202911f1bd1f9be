-- optim.Adadelta, as torch.optim.Adadelta: steps scaled by the ratio of the
-- running RMS of past updates to that of the gradients. One fused kernel per
-- parameter and step (torch._optim_adadelta, which optim.adadelta uses too).
local torch = require 'torch'
local optim = require 'optim'

local kernel = torch._optim_adadelta

-- optim.Adadelta(params, {lr=1, rho=0.9, eps=1e-6, weight_decay=0,
-- maximize=false})
return optim._define('Adadelta', {
  positional = {'lr', 'rho', 'eps', 'weight_decay'},
  defaults = {lr = 1, rho = 0.9, eps = 1e-6, weight_decay = 0, maximize = false},
  checks = {'lr', 'eps', 'weight_decay'},
  check = function(name, g) optim._check_unit(name, 'rho', g.rho, true) end,
  buffers = {'square_avg', 'acc_delta'},
  update = function(p, grad, state, g)
    state.step = state.step + 1
    kernel(p, grad, state.square_avg, state.acc_delta, g.lr, g.rho, g.eps, g.weight_decay, g.maximize)
  end,
})
