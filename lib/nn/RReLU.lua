local torch = require 'torch'

-- nn.RReLU(l=1/8, u=1/3, inplace): x for x >= 0, a * x otherwise, where in training a is
-- drawn uniform in [l, u] for each element (kept in self.noise), and in evaluation
-- a = (l + u) / 2. (Torch7's inplace flag is accepted; the result is a new tensor.)
local RReLU, Module = torch.class('nn.RReLU', 'nn.Module')
function RReLU:__init(l, u, inplace)
  Module.__init(self)
  self.lower, self.upper, self.inplace = l or 1 / 8, u or 1 / 3, inplace or false
  if type(self.lower) ~= 'number' or type(self.upper) ~= 'number' or self.lower < 0 or self.lower > self.upper then
    error(string.format('nn.RReLU: expected 0 <= l <= u, got %s, %s', tostring(l), tostring(u)), 3)
  end
end
function RReLU:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.RReLU: expected a tensor input, got ' .. torch.type(x), 3) end
  local slope
  if self.training then
    slope = torch.empty(x:size(), {dtype = x.dtype}):uniform_(self.lower, self.upper)
  else
    slope = torch.full(x:size(), (self.lower + self.upper) / 2, {dtype = x.dtype})
  end
  local noise = torch.where(x:detach():ge(0), torch.ones_like(slope), slope)
  self.noise = noise
  return x * noise
end
function RReLU:extra_repr() return string.format('l=%g, u=%g', self.lower, self.upper) end

return RReLU
