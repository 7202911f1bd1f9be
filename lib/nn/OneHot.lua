local torch = require 'torch'

-- nn.OneHot(outputSize): the indices x (a number or a tensor of them, 1-based) as one-hot
-- vectors of outputSize values, in a new last dim; no gradient.
local OneHot, Module = torch.class('nn.OneHot', 'nn.Module')
function OneHot:__init(output_size)
  Module.__init(self)
  if math.type(output_size) ~= 'integer' or output_size < 1 then
    error('nn.OneHot: expected a positive integer outputSize, got ' .. tostring(output_size), 3)
  end
  self.outputSize = output_size
end
function OneHot:updateOutput(x)
  if type(x) == 'number' then x = torch.tensor(x) end
  if not torch.is_tensor(x) then error('nn.OneHot: expected indices, got ' .. torch.type(x), 3) end
  local indices = x:detach():long()
  if indices:numel() > 0 and (indices:min():item() < 1 or indices:max():item() > self.outputSize) then
    error(string.format('nn.OneHot: indices must lie in 1..%d, got input of size %s with values %d..%d',
                        self.outputSize, tostring(x:size()), indices:min():item(), indices:max():item()), 3)
  end
  local sizes = x:size():totable()
  sizes[#sizes + 1] = self.outputSize
  local dtype = x:is_floating_point() and x.dtype or torch.get_default_dtype()
  self.output = torch.zeros(sizes, {dtype = dtype}):scatter_(#sizes, indices:unsqueeze(-1), 1)
  return self.output
end
function OneHot:extra_repr() return 'outputSize=' .. self.outputSize end

-- the indices get no gradient: zeros of their shape (Torch7's)
function OneHot:updateGradInput(x)
  self.gradInput = torch.is_tensor(x) and torch.zeros(x:size(), {dtype = self.output.dtype}) or 0
  return self.gradInput
end

return OneHot
