local torch = require 'torch'

-- nn.Replicate(nf, dim=1, ndim): nf copies of x along a new dim inserted at dim (after a
-- batch dim when x has more than ndim dims); a view, no copy.
local Replicate, Module = torch.class('nn.Replicate', 'nn.Module')
function Replicate:__init(nf, dim, ndim)
  Module.__init(self)
  self.nfeatures, self.dim, self.ndim = nf, dim or 1, ndim
  if math.type(nf) ~= 'integer' or nf < 0 or math.type(self.dim) ~= 'integer' or self.dim < 1 then
    error(string.format('nn.Replicate: expected a count and a positive dim, got %s, %s', tostring(nf), tostring(dim)), 3)
  end
end
function Replicate:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Replicate: expected a tensor input, got ' .. torch.type(x), 3) end
  local rdim = self.dim + ((self.ndim and x:dim() > self.ndim) and 1 or 0)
  if rdim > x:dim() + 1 then
    error(string.format('nn.Replicate: cannot insert dim %d into input of size %s', rdim, tostring(x:size())), 3)
  end
  local sizes = x:size():totable()
  table.insert(sizes, rdim, self.nfeatures)
  return x:unsqueeze(rdim):expand(sizes)
end
function Replicate:extra_repr() return string.format('nf=%d, dim=%d', self.nfeatures, self.dim) end

return Replicate
