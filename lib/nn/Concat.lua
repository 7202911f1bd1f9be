local torch = require 'torch'
local list_class = require 'nn._Container'

-- nn.Concat(dim): applies each child to the same input and concatenates the outputs along dim.
local Concat = list_class('Concat')
local list_init = Concat.__init
function Concat:__init(dim)
  list_init(self)
  self.dimension = dim or 1
end
function Concat:updateOutput(x)
  local outs = {}
  for i = 1, #rawget(self, '_items') do outs[i] = self:_run_child(i, x) end
  return (torch.cat(outs, self.dimension))
end
function Concat:extra_repr() return 'dim=' .. self.dimension end

return Concat
