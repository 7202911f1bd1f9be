local torch = require 'torch'

-- nn.Transpose({d1, d2}, {d3, d4}, ...): x with d1 and d2 swapped, then d3 and d4, ...
-- (after the batch dims when setNumInputDims(n) was given); the result is contiguous.
local Transpose, Module = torch.class('nn.Transpose', 'nn.Module')
function Transpose:__init(...)
  Module.__init(self)
  self.permutations = {...}
  for i, p in ipairs(self.permutations) do
    if type(p) ~= 'table' or math.type(p[1]) ~= 'integer' or math.type(p[2]) ~= 'integer' then
      error(string.format('nn.Transpose: expected pairs of dims {d1, d2}, got %s at %d', tostring(p), i), 3)
    end
  end
end
function Transpose:setNumInputDims(n)
  self.numInputDims = n
  return self
end
function Transpose:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Transpose: expected a tensor input, got ' .. torch.type(x), 3) end
  local offset = self.numInputDims and x:dim() - self.numInputDims or 0
  for _, p in ipairs(self.permutations) do
    local a, b = p[1] + offset, p[2] + offset
    if a < 1 or b < 1 or a > x:dim() or b > x:dim() then
      error(string.format('nn.Transpose: cannot swap dims %d and %d of input of size %s', a, b, tostring(x:size())), 3)
    end
    x = x:transpose(a, b)
  end
  return x:contiguous()
end
function Transpose:extra_repr()
  local pairs_text = {}
  for i, p in ipairs(self.permutations) do pairs_text[i] = '{' .. p[1] .. ', ' .. p[2] .. '}' end
  return table.concat(pairs_text, ', ')
end

return Transpose
