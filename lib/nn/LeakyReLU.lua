local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.LeakyReLU(negative_slope=0.01, inplace): x for x > 0, negative_slope * x
-- otherwise. Torch7's form nn.LeakyReLU(negval, ip) is the same call (the slope
-- is also self.negval; nn.LeakyReLU(true) keeps the default slope); the inplace
-- flag is kept in self.inplace, the result is a new tensor.
return Activation.define('LeakyReLU',
  function(self, x) return F.leaky_relu(x, self.negative_slope) end,
  function(self, slope, inplace)
    if type(slope) == 'boolean' then slope, inplace = nil, slope end
    slope = slope or 0.01
    if type(slope) ~= 'number' then
      error('nn.LeakyReLU: expected a number for the negative slope, got ' .. type(slope), 4)
    end
    self.negative_slope, self.negval, self.inplace = slope, slope, inplace or false
  end,
  function(self) return string.format('negative_slope=%g', self.negative_slope) end)
