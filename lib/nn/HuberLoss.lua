local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.HuberLoss({delta=1, reduction=}): delta * SmoothL1 with beta = delta.
return Loss.define('HuberLoss', function(self, opts)
  self.reduction = Loss.reduction_of(opts)
  self.delta = type(opts) == 'table' and opts.delta or 1
end, function(self, x, y) return F.huber_loss(x, y, {delta = self.delta, reduction = self.reduction}) end)
