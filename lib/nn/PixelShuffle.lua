local torch = require 'torch'

-- nn.PixelShuffle(r): (N, C*r*r, H, W) or (C*r*r, H, W) to (N, C, H*r, W*r) or
-- (C, H*r, W*r): output[c][h][w] = input[c*r*r + (h mod r)*r + (w mod r)][h // r][w // r]
-- (0-based; sub-pixel convolution's rearrangement, Shi et al. 2016).
local PixelShuffle, Module = torch.class('nn.PixelShuffle', 'nn.Module')

function PixelShuffle:__init(r)
  Module.__init(self)
  if type(r) ~= 'number' or r ~= math.floor(r) or r < 1 then
    error('nn.PixelShuffle: expected a positive integer upscale factor, got ' .. tostring(r), 3)
  end
  self.upscaleFactor = math.tointeger(r)
  self.upscale_factor = self.upscaleFactor
end

function PixelShuffle:updateOutput(x)
  local r = self.upscaleFactor
  if not torch.is_tensor(x) or (x:dim() ~= 3 and x:dim() ~= 4) or x:size(-3) % (r * r) ~= 0 then
    error(string.format('nn.PixelShuffle: expected a (N, C*%d, H, W) or (C*%d, H, W) input, got %s',
                        r * r, r * r, torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x)), 3)
  end
  local batched = x:dim() == 4
  local xb = batched and x or x:unsqueeze(1)
  local n, c, h, w = xb:size(1), xb:size(2) // (r * r), xb:size(3), xb:size(4)
  local y = xb:reshape(n, c, r, r, h, w):permute(1, 2, 5, 3, 6, 4):reshape(n, c, h * r, w * r)
  return batched and y or y:squeeze(1)
end

function PixelShuffle:extra_repr() return 'upscale_factor=' .. self.upscaleFactor end

return PixelShuffle
