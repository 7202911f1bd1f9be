local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.SplitTable(dim, nInputDims): the table of the input's slices along dim
-- (x:select(dim, i) for each i); dim < 0 counts from the end, and with nInputDims
-- an input of nInputDims + 1 dims has a batch dim in front (dim moves one on).
local SplitTable, parent = torch.class('nn.SplitTable', 'nn.Module')
function SplitTable:__init(dim, nInputDims)
  parent.__init(self)
  if math.type(dim) ~= 'integer' then error('nn.SplitTable: expected an integer dim, got ' .. tostring(dim), 0) end
  self.dimension, self.nInputDims = dim, nInputDims
end
function SplitTable:updateOutput(x)
  Table.tensor('nn.SplitTable', x)
  local d = Table.dimension(self, x:dim())
  if d < 1 or d > x:dim() then
    error(string.format('nn.SplitTable: dim %d out of range for an input of size %s', self.dimension, Table.describe(x)), 0)
  end
  local out = {}
  for i = 1, x:size(d) do out[i] = x:select(d, i) end
  return out
end
function SplitTable:extra_repr() return 'dim=' .. self.dimension end

return SplitTable
