local C7 = require 'nn._Criterion7'

-- nn.SoftMarginCriterion(): Torch7's two-class logistic loss, sum log(1 + exp(-x y)) for
-- targets y of 1 or -1, divided by the number of elements when sizeAverage (the field,
-- true by default).
local SoftMarginCriterion = C7.define('SoftMarginCriterion', nil, function(self, input, target)
  local y = C7.signs(self, target, C7.input(self, input))
  return C7.reduce(self, (-(input * y)):softplus(), input:numel())
end)

return SoftMarginCriterion
