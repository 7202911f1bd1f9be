local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.Upsample({size=, scale_factor=, mode='nearest', align_corners=}): F.interpolate of
-- (N, C, H, W) input with these options. Torch7: nn.SpatialUpSamplingNearest(scale).
local Upsample, Module = torch.class('nn.Upsample', 'nn.Module')
function Upsample:__init(opts)
  Module.__init(self)
  opts = opts or {}
  if (opts.size == nil) == (opts.scale_factor == nil) then
    error('nn.Upsample: give exactly one of size and scale_factor', 3)
  end
  self.size, self.scale_factor, self.mode = opts.size, opts.scale_factor, opts.mode or 'nearest'
  self.align_corners = opts.align_corners
end
function Upsample:updateOutput(x)
  return F.interpolate(x, {size = self.size, scale_factor = self.scale_factor, mode = self.mode,
                           align_corners = self.align_corners})
end
function Upsample:extra_repr()
  local what = self.size and 'size=' .. helpers.show(self.size) or 'scale_factor=' .. helpers.show(self.scale_factor)
  return string.format("%s, mode='%s'", what, self.mode)
end
function nn.SpatialUpSamplingNearest(scale) return nn.Upsample({scale_factor = scale}) end

return Upsample
