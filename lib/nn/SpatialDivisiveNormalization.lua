local torch = require 'torch'
local nn = require 'nn'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialDivisiveNormalization(nInputPlane=1, kernel=torch.ones(9, 9), threshold=1e-4,
-- thresval=threshold): Torch7's local contrast division: divides each value by the local
-- standard deviation around its position, over every plane: std = sqrt(sums of input^2)
-- / coef (sums: convolved, zero-padded, with the kernel across all planes; coef: the same
-- of an input of ones), and where std <= threshold it is replaced by thresval:
-- output = input / (std > threshold and std or thresval). kernel: 2-D, or 1-D (applied
-- down and across); odd sizes. Takes (nInputPlane x H x W) or (batch x nInputPlane x H x W)
-- inputs. self.kernel holds the kernel normalized as Torch7's (by its sum times
-- nInputPlane, a 1-D one by its sum times sqrt(nInputPlane)).
local SpatialDivisiveNormalization = torch.class('nn.SpatialDivisiveNormalization', 'nn.Module')

function SpatialDivisiveNormalization:__init(nin, kernel, threshold, thresval)
  spatial7.norm_init(self, 'nn.SpatialDivisiveNormalization', nin, kernel, math.sqrt)
  self.threshold = threshold or 1e-4
  self.thresval = thresval or threshold or 1e-4
  if type(self.threshold) ~= 'number' or type(self.thresval) ~= 'number' or self.thresval == 0 then
    error('nn.SpatialDivisiveNormalization: threshold and thresval must be numbers, thresval not 0', 3)
  end
end

function SpatialDivisiveNormalization:updateOutput(x)
  local x4, unbatched = spatial7.batched(x, 'nn.SpatialDivisiveNormalization', self.nInputPlane)
  local std = torch.sqrt(spatial7.local_sums(self, x4 * x4)) / spatial7.norm_coef(self, x4)
  local keep = std:detach():gt(self.threshold):to(std.dtype)
  local y = x4 / (std * keep + (1 - keep) * self.thresval)
  return unbatched and y:squeeze(1) or y
end

function SpatialDivisiveNormalization:extra_repr()
  return string.format('%d, %s kernel, threshold=%g, thresval=%g', self.nInputPlane,
                       table.concat(self.kernel:size():totable(), 'x'), self.threshold, self.thresval)
end

return SpatialDivisiveNormalization
