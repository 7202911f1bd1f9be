local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.FlattenTable(): the tensors of a nested input table as one flat table, in
-- depth-first order ({a, {b, {c}}} gives {a, b, c}).
local FlattenTable = torch.class('nn.FlattenTable', 'nn.Module')

local function flatten(input, out)
  for _, v in ipairs(input) do
    if torch.is_tensor(v) then out[#out + 1] = v else flatten(v, out) end
  end
  return out
end

function FlattenTable:updateOutput(input)
  if type(input) ~= 'table' or torch.is_tensor(input) then
    error('nn.FlattenTable: expected a table, got ' .. Table.describe(input), 0)
  end
  return flatten(input, {})
end

return FlattenTable
