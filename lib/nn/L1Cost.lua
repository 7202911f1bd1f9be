local C7 = require 'nn._Criterion7'

-- nn.L1Cost(): Torch7's criterion sum |x| over the input's elements (no target: forward(input)
-- gives the number, backward(input) its gradient sign(x)).
local L1Cost = C7.define('L1Cost', nil, function(self, input)
  return (C7.input(self, input):abs():sum())
end)

return L1Cost
