local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'

-- nn.SmoothL1Criterion(sizeAverage=true): Torch7's Huber loss, 0.5 d^2 where |d| < 1 and
-- |d| - 0.5 elsewhere (d = x - y), summed, divided by the number of elements when sizeAverage.
local SmoothL1Criterion = C7.define('SmoothL1Criterion', function(self, sizeAverage)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  local x, y = C7.pair(self, input, target)
  return F.smooth_l1_loss(x, y, {beta = 1, reduction = self.sizeAverage and 'mean' or 'sum'})
end)

return SmoothL1Criterion
