-- The builder of Torch7's reductions along one dim (nn.Max, nn.Min, nn.Sum,
-- nn.Mean): the dim dropped from the output, batch dims skipped by nInputDims.
local torch = require 'torch'
local Torch7Dim = require 'nn._Torch7Dim'

local Reduce7 = {}

-- Reduce7.define(name, reduce): nn.<name>(dimension=1, nInputDims) whose output is
-- reduce(self, x, dim) for the positive dim that dimension means for x.
function Reduce7.define(name, reduce)
  local cls, parent = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(dimension, n_input_dims)
    parent.__init(self)
    self.dimension = dimension or 1
    self.nInputDims = n_input_dims
    if math.type(self.dimension) ~= 'integer' then
      error(string.format('nn.%s: expected an integer dimension, got %s', name, tostring(dimension)), 3)
    end
  end
  function cls:updateOutput(x)
    return reduce(self, x, Torch7Dim.resolve('nn.' .. name, x, self.dimension, self.nInputDims))
  end
  function cls:extra_repr() return 'dimension=' .. self.dimension end
  return cls
end

return Reduce7
