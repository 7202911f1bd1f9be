local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.SelectTable(index): the index-th entry of the input table (a tensor or a
-- table); index < 0 counts from the end. The other entries get zero gradients.
local SelectTable, parent = torch.class('nn.SelectTable', 'nn.Module')
function SelectTable:__init(index)
  parent.__init(self)
  if math.type(index) ~= 'integer' or index == 0 then
    error('nn.SelectTable: expected a nonzero integer index, got ' .. tostring(index), 0)
  end
  self.index = index
end
function SelectTable:updateOutput(input)
  local n = type(input) == 'table' and not torch.is_tensor(input) and #input or 0
  local i = self.index < 0 and n + self.index + 1 or self.index
  if i < 1 or i > n then
    error(string.format('nn.SelectTable: index %d out of range for %s', self.index, Table.describe(input)), 0)
  end
  return input[i]
end
function SelectTable:extra_repr() return 'index=' .. self.index end

return SelectTable
