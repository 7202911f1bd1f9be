local list_class = require 'nn._Container'

-- nn.ConcatTable(): applies each child to the same input; returns the table of outputs.
local ConcatTable = list_class('ConcatTable')
function ConcatTable:updateOutput(x)
  local out = {}
  for i, m in ipairs(rawget(self, '_items')) do out[i] = m(x) end
  return out
end

return ConcatTable
