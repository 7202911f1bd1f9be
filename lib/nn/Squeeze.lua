local torch = require 'torch'

-- nn.Squeeze(dim, numInputDims): x without its dim of size 1 at dim (every dim of size
-- 1 when dim is nil); with numInputDims, dim counts after a batch dim, which is kept.
local Squeeze, Module = torch.class('nn.Squeeze', 'nn.Module')
function Squeeze:__init(dim, num_input_dims)
  Module.__init(self)
  self.dim = dim
  self.numInputDims = num_input_dims
end
function Squeeze:setNumInputDims(n)
  self.numInputDims = n
  return self
end
function Squeeze:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Squeeze: expected a tensor input, got ' .. torch.type(x), 3) end
  local dim, batched = self.dim, self.numInputDims and x:dim() == self.numInputDims + 1
  if dim then
    if batched then dim = dim + 1 end
    if dim < 1 or dim > x:dim() then
      error(string.format('nn.Squeeze: dim %d is out of range for input of size %s', dim, tostring(x:size())), 3)
    end
    return x:squeeze(dim)
  end
  local y = x:squeeze()
  if batched and x:size(1) == 1 then y = y:unsqueeze(1) end      -- a batch of one stays a batch
  return y
end
function Squeeze:extra_repr() return self.dim and 'dim=' .. self.dim or '' end

return Squeeze
