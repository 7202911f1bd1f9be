local Activation = require 'nn._Activation'

-- nn.Power(p): x ^ p.
return Activation.define('Power',
  function(self, x) return x ^ self.pow end,
  function(self, p)
    if type(p) ~= 'number' then error('nn.Power: expected a number power, got ' .. type(p), 4) end
    self.pow = p
  end,
  function(self) return tostring(self.pow) end)
