local Activation = require 'nn._Activation'

-- nn.SoftShrink(lambda=0.5): x - lambda above lambda, x + lambda below -lambda, else 0.
return Activation.define('SoftShrink',
  function(self, x) return (x - self.lambda):clamp_min(0) + (x + self.lambda):clamp_max(0) end,
  function(self, lambda) self.lambda = lambda or 0.5 end,
  function(self) return tostring(self.lambda) end)
