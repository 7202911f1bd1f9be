local nn = require 'nn'
local F = require 'nn.functional'
local conv_class = require 'nn._ConvNd'

-- nn.ConvTranspose2d(in_channels, out_channels, kernel_size, {stride=, padding=,
-- output_padding=, groups=, dilation=, bias=true}); weight (in, out / groups, kh, kw).
local ConvTranspose2d = conv_class('ConvTranspose2d', 2, F.conv_transpose2d, true)

-- Torch7: nn.SpatialFullConvolution(nIn, nOut, kW, kH, dW=1, dH=1, padW=0, padH=0, adjW=0, adjH=0):
-- an nn.ConvTranspose2d (weight nIn x nOut x kH x kW, output (H - 1) * dH - 2 * padH + kH + adjH
-- high), with Torch7's fields (nInputPlane, nOutputPlane, kW, dW, padW, adjW...) beside.
function nn.SpatialFullConvolution(nin, nout, kw, kh, dw, dh, padw, padh, adjw, adjh)
  kh, dw, dh, padw, padh, adjw, adjh = kh or kw, dw or 1, dh or 1, padw or 0, padh or 0, adjw or 0, adjh or 0
  local m = nn.ConvTranspose2d(nin, nout, {kh, kw}, {stride = {dh, dw}, padding = {padh, padw},
                               output_padding = {adjh, adjw}})
  m.nInputPlane, m.nOutputPlane, m.kW, m.kH = nin, nout, kw, kh
  m.dW, m.dH, m.padW, m.padH, m.adjW, m.adjH = dw, dh, padw, padh, adjw, adjh
  return m
end

return ConvTranspose2d
