local torch = require 'torch'

-- nn.CReLU(nInputDims, inplace): relu(x) and relu(-x) joined along the first dim after a
-- batch dim (x has nInputDims + 1 dims when batched), so that dim doubles.
local CReLU, Module = torch.class('nn.CReLU', 'nn.Module')
function CReLU:__init(n_input_dims, inplace)
  Module.__init(self)
  if math.type(n_input_dims) ~= 'integer' then
    error('nn.CReLU: expected the integer nInputDims, got ' .. tostring(n_input_dims), 3)
  end
  self.nInputDims, self.inplace = n_input_dims, inplace or false
end
function CReLU:updateOutput(x)
  if not torch.is_tensor(x) or x:dim() < 1 then
    error('nn.CReLU: expected a tensor input of at least 1 dim, got ' .. torch.type(x), 3)
  end
  local dim = x:dim() == self.nInputDims + 1 and 2 or 1
  if dim > x:dim() then error('nn.CReLU: input of size ' .. tostring(x:size()) .. ' has no feature dim', 3) end
  return (torch.cat({x:relu(), (-x):relu()}, dim))
end
function CReLU:__tostring__() return 'CReLU()' end

return CReLU
