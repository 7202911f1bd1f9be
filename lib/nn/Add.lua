local torch = require 'torch'
local nn = require 'nn'
local E = require 'nn._Elementwise7'

-- nn.Add(inputSize, scalar=false): x + bias, a learned bias of inputSize values (one
-- value added everywhere when scalar), each example of a batch its own row.
local Add, Module = torch.class('nn.Add', 'nn.Module')
function Add:__init(input_size, scalar)
  Module.__init(self)
  if not scalar and (math.type(input_size) ~= 'integer' or input_size < 1) then
    error('nn.Add: expected a positive integer inputSize, got ' .. tostring(input_size), 3)
  end
  self.scalar = scalar
  self.bias = nn.Parameter(torch.empty(scalar and 1 or input_size))
  self:reset()
end
function Add:reset(stdv)
  E.reset(self.bias, self.bias:size(1), stdv)
  return self
end
function Add:updateOutput(x)
  if self.scalar then
    if not torch.is_tensor(x) then error('nn.Add: expected a tensor input, got ' .. torch.type(x), 3) end
    return x + self.bias
  end
  local b, xv = E.shaped('nn.Add', self.bias, x)
  return (xv + b):view(x:size())
end
function Add:extra_repr() return 'size=' .. self.bias:numel() end

return Add
