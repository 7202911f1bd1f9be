local nn = require 'nn'
local F = require 'nn.functional'
local pool_class = require 'nn._PoolNd'

-- nn.AvgPool2d(kernel_size, {stride=kernel_size, padding=0, ceil_mode=false, count_include_pad=true,
-- divisor_override=nil}).
local AvgPool2d = pool_class('AvgPool2d', F.avg_pool2d)

-- module:setCountIncludePad(): Torch7's name for count_include_pad=true (the padding's zeros
-- count in each window's divisor, the default); returns self.
function AvgPool2d:setCountIncludePad()
  self.opts.count_include_pad = true
  return self
end

-- module:setCountExcludePad(): count_include_pad=false: each window is divided by the number of
-- its elements inside the input; returns self.
function AvgPool2d:setCountExcludePad()
  self.opts.count_include_pad = false
  return self
end

-- Torch7: nn.SpatialAveragePooling(kW, kH, dW=1, dH=1, padW=0, padH=0): an nn.AvgPool2d (note
-- Torch7's default step of 1); :ceil(), :floor(), :setCountIncludePad(), :setCountExcludePad().
function nn.SpatialAveragePooling(kw, kh, dw, dh, padw, padh)
  return nn.AvgPool2d({kh or kw, kw}, {stride = {dh or 1, dw or 1}, padding = {padh or 0, padw or 0}})
end

return AvgPool2d
