local torch = require 'torch'
local list_class = require 'nn._Container'

-- nn.ParallelTable(): applies the i-th child to the i-th element of the input table.
local ParallelTable = list_class('ParallelTable')
function ParallelTable:updateOutput(x)
  if type(x) ~= 'table' or torch.is_tensor(x) then error('nn.ParallelTable: expected a table of inputs', 3) end
  local mods = rawget(self, '_items')
  if #x ~= #mods then
    error(string.format('nn.ParallelTable: %d inputs for %d modules', #x, #mods), 3)
  end
  local out = {}
  for i, m in ipairs(mods) do out[i] = m(x[i]) end
  return out
end

return ParallelTable
