local torch = require 'torch'
-- fail(self, fmt, ...): an error naming the module, at the caller's line
local fail = require('nn._Criterion7').fail
local F = require 'nn.functional'

-- nn.SpatialCrossMapLRN(size, alpha=1e-4, beta=0.75, k=1): local response normalization across
-- the channels of (C, H, W) or (N, C, H, W):
-- y_f = x_f / (k + alpha / size * sum of x_l^2 over the size channels around f)^beta, the window
-- l = f - floor(size / 2) .. f + floor((size - 1) / 2), cut at the first and last channel (as
-- PyTorch's local_response_norm; Torch7's for an odd size). No parameters.
local SpatialCrossMapLRN, Module = torch.class('nn.SpatialCrossMapLRN', 'nn.Module')
function SpatialCrossMapLRN:__init(size, alpha, beta, k)
  Module.__init(self)
  if math.type(size) ~= 'integer' or size < 1 then
    fail(self, 'size must be a positive integer, got %s', tostring(size))
  end
  self.size, self.alpha, self.beta, self.k = size, alpha or 0.0001, beta or 0.75, k or 1
end

function SpatialCrossMapLRN:updateOutput(x)
  if not torch.is_tensor(x) or (x:dim() ~= 3 and x:dim() ~= 4) then
    fail(self, '%s', 'expected a 3-D or 4-D input ((N,) C, H, W), got '
         .. (torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x)))
  end
  local batched = x:dim() == 4 and x or x:unsqueeze(1)
  local n, c, h, w = batched:size(1), batched:size(2), batched:size(3), batched:size(4)
  local size = self.size
  -- the squares as (N, 1, C, H*W) summed over windows of size channels: padded by size // 2 on both
  -- sides, the first c windows (an even size leaves one more)
  local sq = (batched * batched):reshape(n, 1, c, h * w)
  local sums = F.avg_pool2d(sq, {size, 1}, {stride = 1, padding = {size // 2, 0}, divisor_override = 1})
  sums = sums:narrow(3, 1, c):reshape(n, c, h, w)
  local y = batched * (sums * (self.alpha / size) + self.k):pow(-self.beta)
  return x:dim() == 4 and y or y:squeeze(1)
end

function SpatialCrossMapLRN:extra_repr()
  return string.format('%d, %s, %s, %s', self.size, tostring(self.alpha), tostring(self.beta), tostring(self.k))
end

return SpatialCrossMapLRN
