local torch = require 'torch'

-- nn.Unflatten(dim, sizes): splits dim into sizes (a table).
local Unflatten, Module = torch.class('nn.Unflatten', 'nn.Module')
function Unflatten:__init(dim, sizes)
  Module.__init(self)
  if type(sizes) ~= 'table' then error('nn.Unflatten: sizes must be a table', 3) end
  self.dim, self.sizes = dim, sizes
end
function Unflatten:updateOutput(x) return x:unflatten(self.dim, self.sizes) end
function Unflatten:extra_repr()
  local s = {}
  for i, v in ipairs(self.sizes) do s[i] = tostring(v) end
  return string.format('dim=%d, unflattened_size={%s}', self.dim, table.concat(s, ', '))
end

return Unflatten
