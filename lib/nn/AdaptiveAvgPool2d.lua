local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.AdaptiveAvgPool2d(output_size): (N, C, H, W) to (N, C, out_h, out_w).
local AdaptiveAvgPool2d, Module = torch.class('nn.AdaptiveAvgPool2d', 'nn.Module')
function AdaptiveAvgPool2d:__init(size)
  Module.__init(self)
  self.output_size = size
end
function AdaptiveAvgPool2d:updateOutput(x) return F.adaptive_avg_pool2d(x, self.output_size) end
function AdaptiveAvgPool2d:extra_repr() return 'output_size=' .. helpers.show(self.output_size) end

-- Torch7: nn.SpatialAdaptiveAveragePooling(W, H): an nn.AdaptiveAvgPool2d({H, W}) (width first,
-- as Torch7): the means over the windows of nn.SpatialAdaptiveMaxPooling.
function nn.SpatialAdaptiveAveragePooling(w, h)
  if math.type(w) ~= 'integer' or math.type(h) ~= 'integer' or w < 1 or h < 1 then
    error(string.format('nn.SpatialAdaptiveAveragePooling(W, H): expected two positive integers, got %s, %s',
                        tostring(w), tostring(h)), 2)
  end
  return nn.AdaptiveAvgPool2d({h, w})
end

return AdaptiveAvgPool2d
