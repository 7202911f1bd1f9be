local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.MaskedSelect(): {input, mask} gives the 1-D tensor of input's elements where mask
-- (a byte or bool tensor of input's shape) is nonzero, in order. The gradient reaches
-- the selected elements of input (zeros elsewhere); the mask gets none.
local MaskedSelect, parent = torch.class('nn.MaskedSelect', 'nn.Module')
function MaskedSelect:__init()
  parent.__init(self)
end

function MaskedSelect:updateOutput(input)
  local who = 'nn.MaskedSelect'
  local x, mask = table.unpack(Table.tensors(who, input, 2, 2))
  if mask:numel() ~= x:numel() or not mask:isSameSizeAs(x) then
    error(string.format('%s: mask %s does not have the shape of the input %s', who, Table.describe(mask),
                        Table.describe(x)), 0)
  end
  if mask.dtype ~= 'bool' then mask = mask:ne(0) end
  return (x:masked_select(mask))
end

return MaskedSelect
