local torch = require 'torch'
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

return AdaptiveAvgPool2d
