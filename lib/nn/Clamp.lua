local Activation = require 'nn._Activation'

-- nn.Clamp(min, max): x clamped to [min, max].
return Activation.define('Clamp',
  function(self, x) return x:clamp(self.min_val, self.max_val) end,
  function(self, lo, hi)
    if type(lo) ~= 'number' or type(hi) ~= 'number' or hi < lo then
      error(string.format('nn.Clamp: expected numbers min <= max, got %s, %s', tostring(lo), tostring(hi)), 4)
    end
    self.min_val, self.max_val = lo, hi
  end,
  function(self) return string.format('min_val=%g, max_val=%g', self.min_val, self.max_val) end)
