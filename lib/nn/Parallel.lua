local torch = require 'torch'
local list_class = require 'nn._Container'
local Table = require 'nn._Table'

-- nn.Parallel(inputDim, outputDim): applies the i-th child to the i-th slice of
-- the input along inputDim (x:select(inputDim, i)) and concatenates the outputs
-- along outputDim. As Torch7's, the slices count: children past the last slice
-- are left unused.
local Parallel = list_class('Parallel')
local list_init = Parallel.__init
function Parallel:__init(inputDim, outputDim)
  list_init(self)
  if math.type(inputDim) ~= 'integer' or math.type(outputDim) ~= 'integer' then
    error(string.format('nn.Parallel: expected integers inputDim, outputDim, got %s, %s', tostring(inputDim),
                        tostring(outputDim)), 0)
  end
  self.inputDimension, self.outputDimension = inputDim, outputDim
end
function Parallel:updateOutput(x)
  Table.tensor('nn.Parallel', x)
  local mods = rawget(self, '_items')
  if self.inputDimension > x:dim() or x:size(self.inputDimension) > #mods then
    error(string.format('nn.Parallel: an input of size %s has more slices along dim %d than the %d modules '
                        .. '(one per slice)', Table.describe(x), self.inputDimension, #mods), 0)
  end
  local outs = {}
  for i = 1, x:size(self.inputDimension) do outs[i] = self:_run_child(i, x:select(self.inputDimension, i)) end
  return (torch.cat(outs, self.outputDimension))
end
function Parallel:extra_repr() return string.format('inputDim=%d, outputDim=%d', self.inputDimension, self.outputDimension) end

return Parallel
