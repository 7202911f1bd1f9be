local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.ELU(alpha=1): x for x > 0, alpha * (exp(x) - 1) otherwise.
return Activation.define('ELU', function(self, x) return F.elu(x, self.alpha) end,
  function(self, alpha) self.alpha = alpha or 1 end,
  function(self) return string.format('alpha=%g', self.alpha) end)
