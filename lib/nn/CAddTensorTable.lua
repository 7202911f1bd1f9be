local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.CAddTensorTable(): adds one tensor to each of a table of them: {v, {a, b, c}} gives
-- {v + a, v + b, v + c} (each of v's shape). v's gradient is the sum of the gradients.
local CAddTensorTable, parent = torch.class('nn.CAddTensorTable', 'nn.Module')
function CAddTensorTable:__init()
  parent.__init(self)
end

function CAddTensorTable:updateOutput(input)
  local who = 'nn.CAddTensorTable'
  local v, many = type(input) == 'table' and input[1], type(input) == 'table' and input[2]
  if not torch.is_tensor(v) or type(many) ~= 'table' or torch.is_tensor(many) or #input ~= 2 then
    error(who .. ': expected {tensor, {tensor, ...}}, got ' .. Table.describe(input), 0)
  end
  Table.tensors(who, many, 1)
  local output = {}
  for i, x in ipairs(many) do
    if not x:isSameSizeAs(v) then
      error(string.format('%s: tensor %d of the table is %s, expected the shape of the first tensor (%s)', who, i,
                          Table.describe(x), Table.describe(v)), 0)
    end
    output[i] = v + x
  end
  return output
end

return CAddTensorTable
