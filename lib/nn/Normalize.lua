local torch = require 'torch'

-- nn.Normalize(p, eps=1e-10): each vector of x (a vector or a batch of rows) divided by
-- its p-norm (sum |x|^p + eps)^(1/p); p = math.huge divides by max |x| + eps.
local Normalize, Module = torch.class('nn.Normalize', 'nn.Module')
function Normalize:__init(p, eps)
  Module.__init(self)
  if type(p) ~= 'number' or p <= 0 then error('nn.Normalize: expected a positive p, got ' .. tostring(p), 3) end
  self.p, self.eps = p, eps or 1e-10
end
function Normalize:updateOutput(x)
  if not torch.is_tensor(x) or x:dim() < 1 or x:dim() > 2 then
    error('nn.Normalize: expected a vector or a batch of rows, got ' .. (torch.is_tensor(x) and 'input of size '
          .. tostring(x:size()) or torch.type(x)), 3)
  end
  local norm
  if self.p == math.huge then norm = x:abs():max(-1, true) + self.eps
  else norm = (x:abs() ^ self.p):sum(-1, true) + self.eps; norm = norm ^ (1 / self.p) end
  return x / norm
end
function Normalize:extra_repr() return string.format('p=%g, eps=%g', self.p, self.eps) end

return Normalize
