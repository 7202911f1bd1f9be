local torch = require 'torch'

-- nn.Unsqueeze(pos, numInputDims): x with a dim of size 1 inserted at pos (counted after
-- the batch dims, x:dim() - numInputDims of them, when numInputDims is given).
local Unsqueeze, Module = torch.class('nn.Unsqueeze', 'nn.Module')
function Unsqueeze:__init(pos, num_input_dims)
  Module.__init(self)
  if math.type(pos) ~= 'integer' then
    error('nn.Unsqueeze: expected the integer position of the new dim, got ' .. tostring(pos), 3)
  end
  self.pos, self.numInputDims = pos, num_input_dims
end
function Unsqueeze:setNumInputDims(n)
  self.numInputDims = n
  return self
end
function Unsqueeze:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Unsqueeze: expected a tensor input, got ' .. torch.type(x), 3) end
  local offset = x:dim() - (self.numInputDims or x:dim())
  local pos = self.pos + offset
  if offset < 0 or pos < 1 or pos > x:dim() + 1 then
    error(string.format('nn.Unsqueeze: cannot insert dim %d into input of size %s (numInputDims %s)', self.pos,
                        tostring(x:size()), tostring(self.numInputDims)), 3)
  end
  return x:unsqueeze(pos)
end
function Unsqueeze:extra_repr() return 'dim=' .. self.pos end

return Unsqueeze
