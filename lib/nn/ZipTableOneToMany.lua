local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.ZipTableOneToMany(): pairs one tensor with each of a table of them: {v, {a, b, c}}
-- gives {{v, a}, {v, b}, {v, c}}. v's gradient is the sum of the gradients of its copies.
local ZipTableOneToMany, parent = torch.class('nn.ZipTableOneToMany', 'nn.Module')
function ZipTableOneToMany:__init()
  parent.__init(self)
end

function ZipTableOneToMany:updateOutput(input)
  local who = 'nn.ZipTableOneToMany'
  local v, many = type(input) == 'table' and input[1], type(input) == 'table' and input[2]
  if not torch.is_tensor(v) or type(many) ~= 'table' or torch.is_tensor(many) or #input ~= 2 then
    error(who .. ': expected {tensor, {tensor, ...}}, got ' .. Table.describe(input), 0)
  end
  Table.tensors(who, many, 1)
  local output = {}
  for i, x in ipairs(many) do output[i] = {v:view(v:size()), x:view(x:size())} end
  return output
end

return ZipTableOneToMany
