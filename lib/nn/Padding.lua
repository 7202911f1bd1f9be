local torch = require 'torch'

-- nn.Padding(dim, pad, nInputDim, value=0, index=1): |pad| entries of value inserted along
-- dim: before the index-th entry counted from the start when pad < 0, from the end when
-- pad > 0 (index 1: at the very end); dim + 1 when x has other than nInputDim dims.
local Padding, Module = torch.class('nn.Padding', 'nn.Module')
function Padding:__init(dim, pad, n_input_dim, value, index)
  Module.__init(self)
  if math.type(dim) ~= 'integer' or math.type(pad) ~= 'integer' then
    error(string.format('nn.Padding(dim, pad, ...): expected integers, got %s, %s', tostring(dim), tostring(pad)), 3)
  end
  self.dim, self.pad, self.nInputDim, self.value, self.index = dim, pad, n_input_dim, value or 0, index or 1
end
function Padding:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Padding: expected a tensor input, got ' .. torch.type(x), 3) end
  local dim = self.dim
  if self.nInputDim and x:dim() ~= self.nInputDim then dim = dim + 1 end
  if dim < 1 or dim > x:dim() then
    error(string.format('nn.Padding: dim %d is out of range for input of size %s', dim, tostring(x:size())), 3)
  end
  local n, index = x:size(dim), self.index
  if self.pad > 0 then index = n - index + 2 end
  if index < 1 or index > n + 1 then
    error(string.format('nn.Padding: index %d is out of range for dim %d of input of size %s', self.index, dim,
                        tostring(x:size())), 3)
  end
  local sizes = x:size():totable()
  sizes[dim] = math.abs(self.pad)
  local fill = torch.full(sizes, self.value, {dtype = x.dtype, device = x.device})
  return (torch.cat({x:narrow(dim, 1, index - 1), fill, x:narrow(dim, index, n - index + 1)}, dim))
end
function Padding:extra_repr()
  return string.format('dim=%d, pad=%d, value=%g, index=%d', self.dim, self.pad, self.value, self.index)
end

return Padding
