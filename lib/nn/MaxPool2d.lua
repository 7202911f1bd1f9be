local nn = require 'nn'
local F = require 'nn.functional'
local pool_class = require 'nn._PoolNd'

-- nn.MaxPool2d(kernel_size, {stride=kernel_size, padding=0}).
local MaxPool2d = pool_class('MaxPool2d', F.max_pool2d)

-- Torch7: nn.SpatialMaxPooling(kW, kH, dW, dH)
function nn.SpatialMaxPooling(kw, kh, dw, dh)
  return nn.MaxPool2d({kh or kw, kw}, {stride = {dh or kh or kw, dw or kw}})
end

return MaxPool2d
