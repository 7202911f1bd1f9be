local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.MV(trans=false): the product of the matrix input[1] (transposed first when
-- trans) and the vector input[2]; or, batched, of b matrices (b x n x m) and b
-- vectors (b x m), giving b x n.
local MV, parent = torch.class('nn.MV', 'nn.Module')
function MV:__init(trans)
  parent.__init(self)
  self.trans = trans == true
end
function MV:updateOutput(input)
  local m, v = table.unpack(Table.tensors('nn.MV', input, 2, 2))
  local nd = m:dim()
  if (nd ~= 2 and nd ~= 3) or v:dim() ~= nd - 1 then
    error('nn.MV: expected a matrix and a vector, or batches of them, got ' .. Table.describe(input), 0)
  end
  if self.trans then m = m:transpose(nd - 1, nd) end
  if m:size(nd) ~= v:size(nd - 1) or (nd == 3 and m:size(1) ~= v:size(1)) then
    error(string.format('nn.MV: cannot multiply %s by %s', Table.describe(m), Table.describe(v)), 0)
  end
  if nd == 2 then return (m:mv(v)) end
  return m:bmm(v:unsqueeze(3)):squeeze(3)
end
function MV:extra_repr() return 'trans=' .. tostring(self.trans) end

return MV
