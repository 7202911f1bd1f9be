local torch = require 'torch'
local nn = require 'nn'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialContrastiveNormalization(nInputPlane=1, kernel=torch.ones(9, 9), threshold=1e-4,
-- thresval=threshold): Torch7's local contrast normalization: an
-- nn.SpatialSubtractiveNormalization then an nn.SpatialDivisiveNormalization with the same
-- kernel (self.normalizer, an nn.Sequential of the two). Takes (nInputPlane x H x W) or
-- (batch x nInputPlane x H x W) inputs.
local SpatialContrastiveNormalization, Module = torch.class('nn.SpatialContrastiveNormalization', 'nn.Module')

function SpatialContrastiveNormalization:__init(nin, kernel, threshold, thresval)
  Module.__init(self)
  self.nInputPlane = spatial7.int_arg(nin or 1, 'nInputPlane', 'nn.SpatialContrastiveNormalization')
  self.kernel = kernel or torch.ones(9, 9)
  self.threshold = threshold or 1e-4
  self.thresval = thresval or threshold or 1e-4
  self.normalizer = nn.Sequential(nn.SpatialSubtractiveNormalization(self.nInputPlane, self.kernel),
                                  nn.SpatialDivisiveNormalization(self.nInputPlane, self.kernel, self.threshold,
                                                                  self.thresval))
end

function SpatialContrastiveNormalization:updateOutput(x)
  return self.normalizer(x)
end

function SpatialContrastiveNormalization:extra_repr()
  return string.format('%d, %s kernel, threshold=%g, thresval=%g', self.nInputPlane,
                       table.concat(self.kernel:size():totable(), 'x'), self.threshold, self.thresval)
end

return SpatialContrastiveNormalization
