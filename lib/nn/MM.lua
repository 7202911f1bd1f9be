local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.MM(transA=false, transB=false): the matrix product of input[1] and input[2]
-- (each transposed first when its flag is set): two matrices, or two batches of
-- them (b x n x m), multiplied pairwise.
local MM, parent = torch.class('nn.MM', 'nn.Module')
function MM:__init(transA, transB)
  parent.__init(self)
  self.transA, self.transB = transA == true, transB == true
end
function MM:updateOutput(input)
  local a, b = table.unpack(Table.tensors('nn.MM', input, 2, 2))
  local nd = a:dim()
  if (nd ~= 2 and nd ~= 3) or b:dim() ~= nd then
    error('nn.MM: expected two matrices or two batches of matrices, got ' .. Table.describe(input), 0)
  end
  if self.transA then a = a:transpose(nd - 1, nd) end
  if self.transB then b = b:transpose(nd - 1, nd) end
  if a:size(nd) ~= b:size(nd - 1) or (nd == 3 and a:size(1) ~= b:size(1)) then
    error(string.format('nn.MM: cannot multiply %s by %s', Table.describe(a), Table.describe(b)), 0)
  end
  if nd == 2 then return (a:mm(b)) end
  return (a:bmm(b))
end
function MM:extra_repr() return string.format('transA=%s, transB=%s', self.transA, self.transB) end

return MM
