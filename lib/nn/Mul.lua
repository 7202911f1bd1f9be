local torch = require 'torch'
local nn = require 'nn'
local E = require 'nn._Elementwise7'

-- nn.Mul(): x * w, one learned scalar w (a 1-element weight).
local Mul, Module = torch.class('nn.Mul', 'nn.Module')
function Mul:__init()
  Module.__init(self)
  self.weight = nn.Parameter(torch.empty(1))
  self:reset()
end
function Mul:reset(stdv)
  E.reset(self.weight, 1, stdv)
  return self
end
function Mul:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Mul: expected a tensor input, got ' .. torch.type(x), 3) end
  if x:dim() == 0 then return x * self.weight:view({}) end
  return x * self.weight
end

return Mul
