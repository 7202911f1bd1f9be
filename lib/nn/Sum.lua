local torch = require 'torch'
local Torch7Dim = require 'nn._Torch7Dim'

-- nn.Sum(dimension=1, nInputDims, sizeAverage=false, squeeze=true): the sum along
-- dimension (the mean when sizeAverage); squeeze drops that dim unless the input
-- is a vector (its result stays a 1-element vector).
local Sum, Module = torch.class('nn.Sum', 'nn.Module')
function Sum:__init(dimension, n_input_dims, size_average, squeeze)
  Module.__init(self)
  self.dimension, self.nInputDims, self.sizeAverage = dimension or 1, n_input_dims, size_average or false
  if math.type(self.dimension) ~= 'integer' then
    error(string.format('%s: expected an integer dimension, got %s', torch.typename(self), tostring(dimension)), 3)
  end
  if squeeze ~= nil and type(squeeze) ~= 'boolean' then
    error(string.format('%s: squeeze must be true or false, got %s', torch.typename(self), tostring(squeeze)), 3)
  end
  self.squeeze = squeeze ~= false
end
function Sum:updateOutput(x)
  local dim = Torch7Dim.resolve(torch.typename(self), x, self.dimension, self.nInputDims)
  local y = x:sum(dim, true)
  if self.sizeAverage then y = y / x:size(dim) end
  if self.squeeze and y:dim() > 1 then y = y:squeeze(dim) end
  return y
end
function Sum:extra_repr()
  return string.format('dimension=%d, sizeAverage=%s', self.dimension, tostring(self.sizeAverage))
end

return Sum
