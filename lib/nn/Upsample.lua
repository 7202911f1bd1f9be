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

-- Torch7's nn.SpatialUpSamplingBilinear(scale) or ({oheight=, owidth=}): bilinear with the corners
-- aligned, the output (H - 1) * scale + 1 by (W - 1) * scale + 1 for an integer scale, or the
-- size given; input (N, C, H, W) or (C, H, W).
local SpatialUpSamplingBilinear = torch.class('nn.SpatialUpSamplingBilinear', 'nn.Upsample')
function SpatialUpSamplingBilinear:__init(params)
  if type(params) == 'table' then
    if math.type(params.oheight) ~= 'integer' or math.type(params.owidth) ~= 'integer' then
      error('nn.SpatialUpSamplingBilinear: expected an integer scale or {oheight=, owidth=}', 3)
    end
    Upsample.__init(self, {size = {params.oheight, params.owidth}, mode = 'bilinear', align_corners = true})
  else
    if math.type(params) ~= 'integer' or params < 1 then
      error(string.format('nn.SpatialUpSamplingBilinear: scale must be a positive integer, got %s', tostring(params)), 3)
    end
    Upsample.__init(self, {scale_factor = params, mode = 'bilinear', align_corners = true})
    self.scale = params
  end
end
-- a (C, H, W) input is one image (Torch7's non-batch form)
function SpatialUpSamplingBilinear:updateOutput(x)
  if not torch.is_tensor(x) or (x:dim() ~= 3 and x:dim() ~= 4) then
    error(string.format('nn.SpatialUpSamplingBilinear: expected a (N, C, H, W) or (C, H, W) input, got %s',
                        torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x)), 3)
  end
  local single = x:dim() == 3
  if single then x = x:unsqueeze(1) end
  local y
  if not self.scale then
    y = Upsample.updateOutput(self, x)
  else
    local h, w = x:size(3), x:size(4)
    y = F.interpolate(x, {size = {(h - 1) * self.scale + 1, (w - 1) * self.scale + 1}, mode = 'bilinear',
                          align_corners = true})
  end
  return single and y:squeeze(1) or y
end

return Upsample
