local torch = require 'torch'
local helpers = require 'nn._helpers'

-- nn.Reshape(d1, d2, ...): reshapes to the sizes (a batch dim kept in front, as Torch7).
local Reshape, Module = torch.class('nn.Reshape', 'nn.Module')
function Reshape:__init(...)
  Module.__init(self)
  self.size = helpers.sizes_of(...)
end
function Reshape:updateOutput(x) return x:reshape(helpers.batch_shape(x, self.size)) end
function Reshape:extra_repr() return table.concat(self.size, 'x') end

return Reshape
