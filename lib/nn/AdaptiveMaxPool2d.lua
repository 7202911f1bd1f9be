local torch = require 'torch'
local nn = require 'nn'
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

-- Torch7: nn.SpatialAdaptiveMaxPooling(W, H): an nn.AdaptiveMaxPool2d({H, W}) (width first, as
-- Torch7): a W x H output of any input, window (j, i) spanning floor(j iW / W) to ceil((j + 1) iW / W).
function nn.SpatialAdaptiveMaxPooling(w, h)
  if math.type(w) ~= 'integer' or math.type(h) ~= 'integer' or w < 1 or h < 1 then
    error(string.format('nn.SpatialAdaptiveMaxPooling(W, H): expected two positive integers, got %s, %s',
                        tostring(w), tostring(h)), 2)
  end
  return nn.AdaptiveMaxPool2d({h, w})
end

return AdaptiveMaxPool2d
