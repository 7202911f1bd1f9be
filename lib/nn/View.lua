local torch = require 'torch'
local helpers = require 'nn._helpers'

-- nn.View(d1, d2, ...): like Reshape but a view (no copy; the input must allow it); -1 infers a size.
local View, Module = torch.class('nn.View', 'nn.Module')
function View:__init(...)
  Module.__init(self)
  self.size = helpers.sizes_of(...)
end
function View:updateOutput(x) return x:view(helpers.batch_shape(x, self.size)) end
function View:extra_repr() return table.concat(self.size, 'x') end

return View
