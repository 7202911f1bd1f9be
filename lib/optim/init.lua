-- optim: optimizers, learning-rate schedulers and Torch7's functional
-- optimizers. `local optim = require 'optim'` (it also sets the global
-- `optim`).
--   PyTorch style: optim.SGD(params, {lr = 0.1, momentum = 0.9}),
--     opt:zero_grad(), loss:backward(), opt:step(); schedulers in
--     optim.lr_scheduler (also reachable as optim.StepLR, ...).
--   Torch7 style: optim.sgd(feval, x, config, state) over a flat parameter
--     tensor (model:getParameters()).
require 'torch'

local optim = _G.optim or {}
package.loaded.optim = optim
_G.optim = optim

require 'optim.optimizer'
require 'optim.sgd'
require 'optim.adam'
require 'optim.rmsprop'
require 'optim.adagrad'
require 'optim.adadelta'
require 'optim.adamax'
require 'optim.nadam'
require 'optim.radam'
require 'optim.lbfgs'
require 'optim.lr_scheduler'
require 'optim.functional'
require 'optim.rprop'
require 'optim.asgd'
require 'optim.cg'
require 'optim.lswolfe'
require 'optim.fista'
require 'optim.cmaes'
require 'optim.de'
require 'optim.checkgrad'
require 'optim.ConfusionMatrix'
require 'optim.Logger'

return optim
