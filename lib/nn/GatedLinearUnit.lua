local Activation = require 'nn._Activation'

-- nn.GatedLinearUnit(dim=last): the first half of x along dim times the sigmoid
-- of the second half.
return Activation.define('GatedLinearUnit',
  function(self, x)
    local dim = self.dim or x:dim()
    local n = x:size(dim)
    if n % 2 ~= 0 then
      error(string.format('nn.GatedLinearUnit: dim %d of the input has odd size %d', dim, n), 4)
    end
    return x:narrow(dim, 1, n // 2) * x:narrow(dim, n // 2 + 1, n // 2):sigmoid()
  end,
  function(self, dim) self.dim = dim end)
