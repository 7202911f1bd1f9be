local torch = require 'torch'
local nn = require 'nn'
local E = require 'nn._Elementwise7'
local Torch7Dim = require 'nn._Torch7Dim'

-- nn.CMul(size...): x * weight element by element, a learned weight of the given size
-- (sizes or a LongStorage) in the input's shape, broadcast to it, or one copy per example.
local CMul, Module = torch.class('nn.CMul', 'nn.Module')
function CMul:__init(...)
  Module.__init(self)
  self.size = Torch7Dim.sizes('nn.CMul', ...)
  self.weight = nn.Parameter(torch.empty(self.size))
  self:reset()
end
function CMul:reset(stdv)
  E.reset(self.weight, self.weight:numel(), stdv)
  return self
end
function CMul:updateOutput(x)
  local w, xv = E.shaped('nn.CMul', self.weight, x)
  local y = xv * w
  return y:numel() == x:numel() and y:view(x:size()) or y
end
function CMul:extra_repr() return 'size={' .. table.concat(self.size, ', ') .. '}' end

return CMul
