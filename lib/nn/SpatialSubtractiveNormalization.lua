local torch = require 'torch'
local nn = require 'nn'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialSubtractiveNormalization(nInputPlane=1, kernel=torch.ones(9, 9)): Torch7's
-- local mean removal: from each value subtracts the weighted mean, over every plane, of
-- the window around its position: output = input - sums / coef, where sums are the input
-- convolved (zero-padded, same size) with the kernel across all planes and coef the
-- same of an input of ones (so the mean is taken over the part of the window inside the
-- image). kernel: 2-D, or 1-D (applied down and across: the outer product); odd sizes.
-- Takes (nInputPlane x H x W) or (batch x nInputPlane x H x W) inputs. self.kernel holds
-- the kernel normalized as Torch7's (divided by its sum times nInputPlane; the caller's
-- tensor is left as it was).
local SpatialSubtractiveNormalization = torch.class('nn.SpatialSubtractiveNormalization', 'nn.Module')

function SpatialSubtractiveNormalization:__init(nin, kernel)
  spatial7.norm_init(self, 'nn.SpatialSubtractiveNormalization', nin, kernel, function(c) return c end)
end

function SpatialSubtractiveNormalization:updateOutput(x)
  local x4, unbatched = spatial7.batched(x, 'nn.SpatialSubtractiveNormalization', self.nInputPlane)
  local y = x4 - spatial7.local_sums(self, x4) / spatial7.norm_coef(self, x4)
  return unbatched and y:squeeze(1) or y
end

function SpatialSubtractiveNormalization:extra_repr()
  return string.format('%d, %s kernel', self.nInputPlane, table.concat(self.kernel:size():totable(), 'x'))
end

return SpatialSubtractiveNormalization
