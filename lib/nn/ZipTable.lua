local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.ZipTable(): zips a table of tables: {{a1, a2}, {b1, b2}, {c1, c2}} gives
-- {{a1, b1, c1}, {a2, b2, c2}} (the j-th output holds the j-th tensor of every input
-- table; every input table holds as many tensors). Gradients are unzipped back.
local ZipTable, parent = torch.class('nn.ZipTable', 'nn.Module')
function ZipTable:__init()
  parent.__init(self)
end

-- x as a new tensor of the graph (a view), so that the output's gradients reach it
local function pass(x) return x:view(x:size()) end

function ZipTable:updateOutput(input)
  local who = 'nn.ZipTable'
  if type(input) ~= 'table' or torch.is_tensor(input) or #input == 0 then
    error(who .. ': expected a table of tables of tensors, got ' .. Table.describe(input), 0)
  end
  local width
  for i, row in ipairs(input) do
    Table.tensors(who, row, 1, width)
    width = width or #row
  end
  local output = {}
  for j = 1, width do
    local zipped = {}
    for i, row in ipairs(input) do zipped[i] = pass(row[j]) end
    output[j] = zipped
  end
  return output
end

return ZipTable
