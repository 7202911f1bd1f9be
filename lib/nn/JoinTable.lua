local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.JoinTable(dim, nInputDims): the input tensors concatenated along dim; dim < 0
-- counts from the end, and with nInputDims inputs of nInputDims + 1 dims have a
-- batch dim in front (dim moves one on).
local JoinTable, parent = torch.class('nn.JoinTable', 'nn.Module')
function JoinTable:__init(dim, nInputDims)
  parent.__init(self)
  if math.type(dim) ~= 'integer' then error('nn.JoinTable: expected an integer dim, got ' .. tostring(dim), 0) end
  self.dimension, self.nInputDims = dim, nInputDims
end
function JoinTable:updateOutput(input)
  Table.tensors('nn.JoinTable', input)
  local first = input[1]
  local d = Table.dimension(self, first:dim())
  for _, x in ipairs(input) do
    local ok = x:dim() == first:dim() and d >= 1 and d <= x:dim()
    for k = 1, ok and x:dim() or 0 do ok = ok and (k == d or x:size(k) == first:size(k)) end
    if not ok then
      error(string.format('nn.JoinTable: cannot join %s along dim %d', Table.describe(input), d), 0)
    end
  end
  return (torch.cat(input, d))
end
function JoinTable:extra_repr() return 'dim=' .. self.dimension end

return JoinTable
