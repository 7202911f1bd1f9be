local C7 = require 'nn._Criterion7'

-- nn.SoftMarginCriterion(): Torch7's two-class logistic loss, sum log(1 + exp(-x y)) for
-- targets y (1 or -1 for two classes; any real value is taken as it is), divided by the number of elements when sizeAverage (the field,
-- true by default).
local SoftMarginCriterion = C7.define('SoftMarginCriterion', nil, function(self, input, target)
  local _, y = C7.pair(self, input, target)
  return C7.reduce(self, (-(input * y)):softplus(), input:numel())
end)

return SoftMarginCriterion
