local torch = require 'torch'
local Activation = require 'nn._Activation'

-- nn.MulConstant(c, inplace): x * c (Torch7's inplace flag is accepted; the result is a new tensor).
return Activation.define('MulConstant',
  function(self, x) return x * self.constant_scalar end,
  function(self, c)
    if torch.is_tensor(c) and c:numel() == 1 then c = c:item() end   -- Torch7's squeeze() of one value
    if type(c) ~= 'number' then error('nn.MulConstant: expected a number, got ' .. type(c), 4) end
    self.constant_scalar = c
  end,
  function(self) return tostring(self.constant_scalar) end)
