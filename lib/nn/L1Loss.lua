local nn = require 'nn'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.L1Loss({reduction=}): mean absolute error. Torch7: nn.AbsCriterion(sizeAverage).
local L1Loss = Loss.define('L1Loss', function(self, opts) self.reduction = Loss.reduction_of(opts, opts) end,
  function(self, x, y) return F.l1_loss(x, y, {reduction = self.reduction}) end)

return L1Loss
