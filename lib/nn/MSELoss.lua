local nn = require 'nn'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.MSELoss({reduction=}): mean squared error. Torch7: nn.MSECriterion(sizeAverage).
local MSELoss = Loss.define('MSELoss', function(self, opts) self.reduction = Loss.reduction_of(opts, opts) end,
  function(self, x, y) return F.mse_loss(x, y, {reduction = self.reduction}) end)

return MSELoss
