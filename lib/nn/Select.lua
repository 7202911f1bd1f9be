local torch = require 'torch'

-- nn.Select(dimension, index): x:select(dimension, index), the dim dropped; a negative
-- dimension or index counts from the last.
local Select, Module = torch.class('nn.Select', 'nn.Module')
function Select:__init(dimension, index)
  Module.__init(self)
  if math.type(dimension) ~= 'integer' or math.type(index) ~= 'integer' then
    error(string.format('nn.Select(dimension, index): expected integers, got %s, %s', tostring(dimension),
                        tostring(index)), 3)
  end
  self.dimension, self.index = dimension, index
end
function Select:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Select: expected a tensor input, got ' .. torch.type(x), 3) end
  local dim = self.dimension < 0 and x:dim() + self.dimension + 1 or self.dimension
  if dim < 1 or dim > x:dim() then
    error(string.format('nn.Select: dimension %d is out of range for input of size %s', self.dimension,
                        tostring(x:size())), 3)
  end
  local index = self.index < 0 and x:size(dim) + self.index + 1 or self.index
  if index < 1 or index > x:size(dim) then
    error(string.format('nn.Select: index %d is out of range for dim %d of input of size %s%s', self.index, dim,
                        tostring(x:size()), self.index == 0 and ' (indices are 1-based)' or ''), 3)
  end
  return (x:select(dim, index))
end
function Select:extra_repr() return string.format('dimension=%d, index=%d', self.dimension, self.index) end

return Select
