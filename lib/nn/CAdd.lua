local torch = require 'torch'
local nn = require 'nn'
local E = require 'nn._Elementwise7'
local Torch7Dim = require 'nn._Torch7Dim'

-- nn.CAdd(size...): x + bias, a learned bias of the given size (sizes or a LongStorage)
-- in the input's shape, broadcast to it, or one copy per example of a batch.
local CAdd, Module = torch.class('nn.CAdd', 'nn.Module')
function CAdd:__init(...)
  Module.__init(self)
  self.size = Torch7Dim.sizes('nn.CAdd', ...)
  self.bias = nn.Parameter(torch.empty(self.size))
  self:reset()
end
function CAdd:reset(stdv)
  E.reset(self.bias, self.bias:numel(), stdv)
  return self
end
function CAdd:updateOutput(x)
  local b, xv = E.shaped('nn.CAdd', self.bias, x)
  local y = xv + b
  return y:numel() == x:numel() and y:view(x:size()) or y
end
function CAdd:extra_repr() return 'size={' .. table.concat(self.size, ', ') .. '}' end

return CAdd
