local nn = require 'nn'
local F = require 'nn.functional'
local conv_class = require 'nn._ConvNd'

-- nn.ConvTranspose2d(in_channels, out_channels, kernel_size, {stride=, padding=,
-- output_padding=, groups=, dilation=, bias=true}); weight (in, out / groups, kh, kw).
-- Torch7: nn.SpatialFullConvolution(nIn, nOut, kW, kH, dW, dH, padW, padH, adjW, adjH).
local ConvTranspose2d = conv_class('ConvTranspose2d', 2, F.conv_transpose2d, true)

function nn.SpatialFullConvolution(nin, nout, kw, kh, dw, dh, padw, padh, adjw, adjh)
  return nn.ConvTranspose2d(nin, nout, {kh or kw, kw}, {stride = {dh or 1, dw or 1}, padding = {padh or 0, padw or 0},
                            output_padding = {adjh or 0, adjw or 0}})
end

return ConvTranspose2d
