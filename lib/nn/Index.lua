local torch = require 'torch'

-- nn.Index(dim): of the input {t, indices}, t's entries at indices (a LongTensor) along
-- dim (t:index_select); the indices get no gradient.
local Index, Module = torch.class('nn.Index', 'nn.Module')
function Index:__init(dim)
  Module.__init(self)
  if math.type(dim) ~= 'integer' then error('nn.Index: expected an integer dim, got ' .. tostring(dim), 3) end
  self.dimension = dim
end
function Index:updateOutput(input)
  local t, indices = type(input) == 'table' and input[1], type(input) == 'table' and input[2]
  if not torch.is_tensor(t) or not torch.is_tensor(indices) then
    error('nn.Index: expected the input {tensor, indices}, got ' .. torch.type(input), 3)
  end
  if indices:dim() ~= 1 or indices:is_floating_point() then
    error(string.format('nn.Index: expected a vector of integer indices, got %s of size %s', indices:type(),
                        tostring(indices:size())), 3)
  end
  return (t:index_select(self.dimension, indices))
end
function Index:extra_repr() return 'dim=' .. self.dimension end

return Index
