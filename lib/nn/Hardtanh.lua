local nn = require 'nn'
local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.Hardtanh(min_val=-1, max_val=1): x clamped to [min_val, max_val].
local Hardtanh = Activation.define('Hardtanh', function(self, x) return F.hardtanh(x, self.min_val, self.max_val) end,
  function(self, lo, hi)
    self.min_val, self.max_val = lo or -1, hi or 1
    if self.max_val <= self.min_val then
      error(string.format('nn.Hardtanh: max_val (%g) must be greater than min_val (%g)', self.max_val, self.min_val), 3)
    end
  end,
  function(self) return string.format('min_val=%g, max_val=%g', self.min_val, self.max_val) end)
nn.HardTanh = Hardtanh                    -- Torch7's name
return Hardtanh
