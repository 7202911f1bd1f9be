local torch = require 'torch'

-- nn.ZeroGrad(): x unchanged going forward; a zero gradient going back.
local ZeroGrad = torch.class('nn.ZeroGrad', 'nn.Module')
function ZeroGrad:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.ZeroGrad: expected a tensor input, got ' .. torch.type(x), 3) end
  local frozen = x:detach()
  return frozen + (x - frozen) * 0                     -- the value of x, the slope 0
end

return ZeroGrad
