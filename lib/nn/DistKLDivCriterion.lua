local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'

-- nn.DistKLDivCriterion(sizeAverage=true): Torch7's Kullback-Leibler divergence of the
-- log-probabilities x from the probabilities y, sum y (log y - x) over the elements where
-- y > 0, divided by the number of elements when sizeAverage.
local DistKLDivCriterion = C7.define('DistKLDivCriterion', function(self, sizeAverage)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  local x, y = C7.pair(self, input, target)
  return F.kl_div(x, y, {reduction = self.sizeAverage and 'mean' or 'sum'})
end)

return DistKLDivCriterion
