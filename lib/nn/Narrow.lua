local torch = require 'torch'

-- nn.Narrow(dimension, offset, length=1): x:narrow(dimension, offset, length); a negative
-- dimension counts from the last, a negative length stops that many from the end
-- (-1: through the last), a negative offset keeps the first size - length.
local Narrow, Module = torch.class('nn.Narrow', 'nn.Module')
function Narrow:__init(dimension, offset, length)
  Module.__init(self)
  if math.type(dimension) ~= 'integer' or math.type(offset) ~= 'integer' then
    error(string.format('nn.Narrow(dimension, offset, length): expected integers, got %s, %s', tostring(dimension),
                        tostring(offset)), 3)
  end
  self.dimension, self.index, self.length = dimension, offset, length or 1
end
function Narrow:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Narrow: expected a tensor input, got ' .. torch.type(x), 3) end
  local dim = self.dimension < 0 and x:dim() + self.dimension + 1 or self.dimension
  if dim < 1 or dim > x:dim() then
    error(string.format('nn.Narrow: dimension %d is out of range for input of size %s', self.dimension,
                        tostring(x:size())), 3)
  end
  local index, length = self.index, self.length
  if length < 0 then length = x:size(dim) - index + length + 2 end
  if index < 0 then index, length = 1, x:size(dim) - length end
  if index < 1 or length < 0 or index + length - 1 > x:size(dim) then
    error(string.format('nn.Narrow: offset %d, length %d do not fit dim %d of input of size %s%s', index, length, dim,
                        tostring(x:size()), self.index == 0 and ' (offsets are 1-based)' or ''), 3)
  end
  return x:narrow(dim, index, length)
end
function Narrow:extra_repr()
  return string.format('dimension=%d, offset=%d, length=%d', self.dimension, self.index, self.length)
end

return Narrow
