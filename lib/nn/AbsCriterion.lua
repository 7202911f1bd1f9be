local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'

-- nn.AbsCriterion(sizeAverage=true): Torch7's sum |x - y| over all elements, divided by
-- their number when sizeAverage.
local AbsCriterion = C7.define('AbsCriterion', function(self, sizeAverage)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  local x, y = C7.pair(self, input, target)
  return F.l1_loss(x, y, {reduction = self.sizeAverage and 'mean' or 'sum'})
end)

return AbsCriterion
