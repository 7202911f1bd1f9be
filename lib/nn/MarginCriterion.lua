local C7 = require 'nn._Criterion7'

-- nn.MarginCriterion(margin=1): Torch7's two-class hinge loss, sum max(0, margin - x y)
-- for targets y (1 or -1 for two classes; any real value is taken as it is), divided by the number of elements when sizeAverage (the field,
-- true by default).
local MarginCriterion = C7.define('MarginCriterion', function(self, margin)
  self.margin = margin or 1
end, function(self, input, target)
  local _, y = C7.pair(self, input, target)
  return C7.reduce(self, (self.margin - input * y):clamp_min(0), input:numel())
end)

return MarginCriterion
