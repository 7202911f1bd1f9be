local Activation = require 'nn._Activation'

-- nn.HardShrink(lambda=0.5): x where |x| > lambda, else 0.
return Activation.define('HardShrink',
  function(self, x) return x * x:abs():gt(self.lambda):to(x.dtype) end,
  function(self, lambda) self.lambda = lambda or 0.5 end,
  function(self) return tostring(self.lambda) end)
