local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.NarrowTable(offset, length=1): the entries offset .. offset + length - 1 of
-- the input table (a table; the entries themselves, tensors or tables).
local NarrowTable, parent = torch.class('nn.NarrowTable', 'nn.Module')
function NarrowTable:__init(offset, length)
  parent.__init(self)
  length = length or 1
  if math.type(offset) ~= 'integer' or math.type(length) ~= 'integer' then
    error(string.format('nn.NarrowTable: expected integers offset, length, got %s, %s', tostring(offset), tostring(length)), 0)
  end
  self.offset, self.length = offset, length
end
function NarrowTable:updateOutput(input)
  if type(input) ~= 'table' or torch.is_tensor(input) or self.offset < 1 or self.offset + self.length - 1 > #input then
    error(string.format('nn.NarrowTable: cannot take entries %d..%d of %s', self.offset,
                        self.offset + self.length - 1, Table.describe(input)), 0)
  end
  return {table.unpack(input, self.offset, self.offset + self.length - 1)}
end
function NarrowTable:extra_repr() return string.format('offset=%d, length=%d', self.offset, self.length) end

return NarrowTable
