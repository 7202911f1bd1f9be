local nn = require 'nn'
local F = require 'nn.functional'
local conv_class = require 'nn._ConvNd'

-- nn.Conv2d(in_channels, out_channels, kernel_size, {stride=, padding=, dilation=, groups=, bias=true}).
local Conv2d = conv_class('Conv2d', 2, F.conv2d)

-- Torch7: nn.SpatialConvolution(nIn, nOut, kW, kH, dW=1, dH=1, padW=0, padH=0)
function nn.SpatialConvolution(nin, nout, kw, kh, dw, dh, padw, padh)
  return nn.Conv2d(nin, nout, {kh or kw, kw}, {stride = {dh or 1, dw or 1}, padding = {padh or padw or 0, padw or 0}})
end

return Conv2d
