local torch = require 'torch'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.AdaptiveMaxPool2d(output_size, {return_indices=false}): (N, C, H, W) or (C, H, W) to
-- out_h x out_w maxima over adaptive windows; with return_indices also their 1-based positions.
local AdaptiveMaxPool2d, Module = torch.class('nn.AdaptiveMaxPool2d', 'nn.Module')
function AdaptiveMaxPool2d:__init(size, opts)
  Module.__init(self)
  self.output_size = size
  self.return_indices = type(opts) == 'table' and opts.return_indices == true or opts == true
end
function AdaptiveMaxPool2d:updateOutput(x)
  return F.adaptive_max_pool2d(x, self.output_size, {return_indices = self.return_indices})
end
function AdaptiveMaxPool2d:extra_repr() return 'output_size=' .. helpers.show(self.output_size) end

return AdaptiveMaxPool2d
