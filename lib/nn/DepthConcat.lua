local torch = require 'torch'
local nn = require 'nn'
local list_class = require 'nn._Container'

-- nn.DepthConcat(dim): applies each child to the same input and concatenates the
-- outputs along dim (the depth, as in Inception's filter banks); outputs smaller
-- than the largest in another dim are padded with zeros around them, centred
-- (the extra zero, when odd, after).
local DepthConcat = list_class('DepthConcat')
local list_init = DepthConcat.__init
function DepthConcat:__init(dim)
  list_init(self)
  self.dimension = dim or 1
end
function DepthConcat:updateOutput(x)
  local outs, d = {}, self.dimension
  for i, m in ipairs(rawget(self, '_items')) do outs[i] = m(x) end
  if #outs == 0 then error('nn.DepthConcat: no modules to apply', 0) end
  local size = outs[1]:size():totable()
  for _, o in ipairs(outs) do
    if o:dim() ~= #size then
      error(string.format('nn.DepthConcat: outputs of %d and %d dims', #size, o:dim()), 0)
    end
    for k = 1, #size do size[k] = math.max(size[k], o:size(k)) end
  end
  for i, o in ipairs(outs) do
    local pads, padded = {}, false
    for k = #size, 1, -1 do                 -- F.pad's order: the last dim first
      local extra = k == d and 0 or size[k] - o:size(k)
      pads[#pads + 1], pads[#pads + 2] = extra // 2, extra - extra // 2
      padded = padded or extra > 0
    end
    if padded then outs[i] = nn.functional.pad(o, pads) end
  end
  return (torch.cat(outs, d))
end
function DepthConcat:extra_repr() return 'dim=' .. self.dimension end

return DepthConcat
