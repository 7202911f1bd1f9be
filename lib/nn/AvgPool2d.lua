local nn = require 'nn'
local F = require 'nn.functional'
local pool_class = require 'nn._PoolNd'

-- nn.AvgPool2d(kernel_size, {stride=kernel_size, padding=0, ceil_mode=false, count_include_pad=true,
-- divisor_override=nil}).
local AvgPool2d = pool_class('AvgPool2d', F.avg_pool2d)

-- Torch7: nn.SpatialAveragePooling(kW, kH, dW, dH)
function nn.SpatialAveragePooling(kw, kh, dw, dh)
  return nn.AvgPool2d({kh or kw, kw}, {stride = {dh or kh or kw, dw or kw}})
end

return AvgPool2d
