local nn = require 'nn'
local F = require 'nn.functional'
local conv_class = require 'nn._ConvNd'

-- nn.Conv2d(in_channels, out_channels, kernel_size, {stride=, padding=, dilation=, groups=, bias=true}).
local Conv2d = conv_class('Conv2d', 2, F.conv2d)

-- Torch7's fields of a 2-D convolution built by one of its constructors
local function torch7_fields(m, nin, nout, kw, kh, dw, dh, padw, padh)
  m.nInputPlane, m.nOutputPlane, m.kW, m.kH = nin, nout, kw, kh
  m.dW, m.dH, m.padW, m.padH = dw, dh, padw, padh
  return m
end

-- Torch7: nn.SpatialConvolution(nIn, nOut, kW, kH, dW=1, dH=1, padW=0, padH=padW): an nn.Conv2d
-- (weight nOut x nIn x kH x kW) with Torch7's fields (nInputPlane, kW, dW, padW...) beside.
function nn.SpatialConvolution(nin, nout, kw, kh, dw, dh, padw, padh)
  kh, dw, dh, padw = kh or kw, dw or 1, dh or 1, padw or 0
  padh = padh or padw
  local m = nn.Conv2d(nin, nout, {kh, kw}, {stride = {dh, dw}, padding = {padh, padw}})
  return torch7_fields(m, nin, nout, kw, kh, dw, dh, padw, padh)
end

-- Torch7: nn.SpatialDilatedConvolution(nIn, nOut, kW, kH, dW=1, dH=1, padW=0, padH=padW,
-- dilationW=1, dilationH=1): an nn.Conv2d whose kernel taps are dilation apart (weight
-- nOut x nIn x kH x kW), with Torch7's fields (dilationW, dilationH too) beside.
function nn.SpatialDilatedConvolution(nin, nout, kw, kh, dw, dh, padw, padh, dilw, dilh)
  kh, dw, dh, padw, dilw, dilh = kh or kw, dw or 1, dh or 1, padw or 0, dilw or 1, dilh or 1
  padh = padh or padw
  local m = nn.Conv2d(nin, nout, {kh, kw}, {stride = {dh, dw}, padding = {padh, padw}, dilation = {dilh, dilw}})
  m.dilationW, m.dilationH = dilw, dilh
  return torch7_fields(m, nin, nout, kw, kh, dw, dh, padw, padh)
end

return Conv2d
