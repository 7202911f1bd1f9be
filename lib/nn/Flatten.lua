local torch = require 'torch'

-- nn.Flatten(start_dim=2, end_dim=-1): flattens dims start_dim..end_dim (1-based; the
-- default keeps the batch dim, as PyTorch's start_dim=1).
local Flatten, Module = torch.class('nn.Flatten', 'nn.Module')
function Flatten:__init(start_dim, end_dim)
  Module.__init(self)
  self.start_dim, self.end_dim = start_dim or 2, end_dim or -1
end
function Flatten:updateOutput(x) return x:flatten(self.start_dim, self.end_dim) end
function Flatten:extra_repr() return string.format('start_dim=%d, end_dim=%d', self.start_dim, self.end_dim) end

return Flatten
