local torch = require 'torch'
local Activation = require 'nn._Activation'

-- nn.AddConstant(c, inplace): x + c, c a number or a tensor of x's shape (Torch7's
-- inplace flag is accepted; the result is a new tensor).
return Activation.define('AddConstant',
  function(self, x) return x + self.constant_scalar end,
  function(self, c)
    if torch.is_tensor(c) and c:numel() == 1 then c = c:item() end   -- Torch7's squeeze() of one value
    if type(c) ~= 'number' and not torch.is_tensor(c) then
      error('nn.AddConstant: expected a number or a tensor, got ' .. torch.type(c), 4)
    end
    self.constant_scalar = c
  end,
  function(self) return torch.is_tensor(self.constant_scalar) and 'tensor' or tostring(self.constant_scalar) end)
