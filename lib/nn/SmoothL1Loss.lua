local nn = require 'nn'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.SmoothL1Loss({beta=1, reduction=}): quadratic below beta, linear above. Torch7: nn.SmoothL1Criterion.
local SmoothL1Loss = Loss.define('SmoothL1Loss', function(self, opts)
  self.reduction = Loss.reduction_of(opts, opts)
  self.beta = type(opts) == 'table' and opts.beta or 1
end, function(self, x, y) return F.smooth_l1_loss(x, y, {beta = self.beta, reduction = self.reduction}) end)

return SmoothL1Loss
