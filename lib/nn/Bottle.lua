local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line
local Decorator = require 'nn._Decorator7'

-- nn.Bottle(module, nInputDim=2, nOutputDim=nInputDim): applies module, which takes inputs
-- of nInputDim dims and gives outputs of nOutputDim, to an input with more leading dims:
-- those are folded into module's first dim (input viewed as (n, ...), n the product of
-- the leading sizes and the first of module's) and unfolded again in the output (and in
-- the gradients). An input of at most nInputDim dims goes to module as it is.
local Bottle = Decorator.class('Bottle', {
  input = function(self, x)
    if not torch.is_tensor(x) then fail(self, '%s', 'expected a tensor input, got ' .. torch.type(x)) end
    local lead = x:dim() - self.nInputDim     -- how many leading dims are folded
    if lead < 1 then return x end
    local sizes = {}
    for d = lead + 1, x:dim() do sizes[#sizes + 1] = x:size(d) end
    for d = 1, lead do sizes[1] = sizes[1] * x:size(d) end
    return (x:reshape(sizes))
  end,
  output = function(self, y, x)
    local lead = x:dim() - self.nInputDim
    if lead < 1 then return y end
    if not torch.is_tensor(y) or y:dim() ~= self.nOutputDim then
      fail(self, 'expected the module to give an output of %d dims, got %s', self.nOutputDim,
           torch.is_tensor(y) and tostring(y:size()) or torch.type(y))
    end
    local fold = 1
    for d = 1, lead do fold = fold * x:size(d) end
    local sizes = {}
    for d = 1, lead do sizes[d] = x:size(d) end
    sizes[lead + 1] = y:size(1) // fold
    for d = 2, y:dim() do sizes[lead + d] = y:size(d) end
    self._childOutputSize = y:size()
    return (y:reshape(sizes))
  end,
  grad_output = function(self, g, x)
    if x:dim() - self.nInputDim < 1 then return g end
    return (g:reshape(self._childOutputSize))
  end,
  grad_input = function(self, gi, x)
    if gi == nil or x:dim() - self.nInputDim < 1 then return gi end
    return (gi:reshape(x:size()))
  end,
})

function Bottle:__init(module, nInputDim, nOutputDim)
  self:_decorator_init(module)
  nInputDim = nInputDim or 2
  nOutputDim = nOutputDim or nInputDim
  if math.type(nInputDim) ~= 'integer' or nInputDim < 1 or math.type(nOutputDim) ~= 'integer' or nOutputDim < 1 then
    error(string.format('nn.Bottle: expected positive integer nInputDim and nOutputDim, got %s and %s',
                        tostring(nInputDim), tostring(nOutputDim)), 3)
  end
  self.nInputDim, self.nOutputDim = nInputDim, nOutputDim
  self.dimDelta = nInputDim - nOutputDim
end

function Bottle:extra_repr() return string.format('nInputDim=%d, nOutputDim=%d', self.nInputDim, self.nOutputDim) end

return Bottle
