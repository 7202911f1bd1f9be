local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.LeakyReLU(negative_slope=0.01): x for x > 0, negative_slope * x otherwise.
return Activation.define('LeakyReLU', function(self, x) return F.leaky_relu(x, self.negative_slope) end,
  function(self, slope) self.negative_slope = slope or 0.01 end,
  function(self) return string.format('negative_slope=%g', self.negative_slope) end)
