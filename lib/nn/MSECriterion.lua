local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'

-- nn.MSECriterion(sizeAverage=true): Torch7's mean squared error, sum (x - y)^2 over all
-- elements, divided by their number when sizeAverage; the target has the input's number
-- of elements. forward gives a number, backward 2 (x - y) (/ n).
local MSECriterion = C7.define('MSECriterion', function(self, sizeAverage)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  local x, y = C7.pair(self, input, target)
  return F.mse_loss(x, y, {reduction = self.sizeAverage and 'mean' or 'sum'})
end)

return MSECriterion
