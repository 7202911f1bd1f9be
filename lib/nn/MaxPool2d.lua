local nn = require 'nn'
local F = require 'nn.functional'
local pool_class = require 'nn._PoolNd'

-- nn.MaxPool2d(kernel_size, {stride=kernel_size, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false}). With m.keep_indices = true (Torch7's SpatialMaxPooling sets it),
-- each forward also keeps the maxima's 1-based positions in each H*W plane in m.indices
-- (the output's shape) and the input's height and width in m.iheight, m.iwidth, as
-- Torch7's module did (nn.SpatialMaxUnpooling reads them).
local MaxPool2d = pool_class('MaxPool2d', F.max_pool2d)

local pool = MaxPool2d.updateOutput
function MaxPool2d:updateOutput(x)
  if not self.keep_indices then return pool(self, x) end
  local o = self.opts
  local v, idx = F.max_pool2d(x, self.kernel_size, {stride = self.stride, padding = self.padding,
                                                    dilation = o.dilation, ceil_mode = o.ceil_mode,
                                                    return_indices = true})
  self.indices, self.iheight, self.iwidth = idx, x:size(x:dim() - 1), x:size(x:dim())
  if o.return_indices then return v, idx end
  return v
end

-- Torch7: nn.SpatialMaxPooling(kW, kH, dW=kW, dH=kH, padW=0, padH=0): an nn.MaxPool2d that keeps
-- its indices; :ceil() and :floor() choose the rounding of the output size.
function nn.SpatialMaxPooling(kw, kh, dw, dh, padw, padh)
  local m = nn.MaxPool2d({kh or kw, kw}, {stride = {dh or kh or kw, dw or kw}, padding = {padh or 0, padw or 0}})
  m.keep_indices = true
  return m
end

-- Torch7: nn.SpatialDilatedMaxPooling(kW, kH, dW=kW, dH=kH, padW=0, padH=0, dilationW=1,
-- dilationH=1): max pooling over windows whose taps are dilation apart (an nn.MaxPool2d with
-- dilation); the output is op((width - (dilationW * (kW - 1) + 1) + 2 padW) / dW + 1) wide, op
-- floor or, after :ceil(), ceil.
function nn.SpatialDilatedMaxPooling(kw, kh, dw, dh, padw, padh, dilw, dilh)
  local m = nn.MaxPool2d({kh or kw, kw}, {stride = {dh or kh or kw, dw or kw}, padding = {padh or 0, padw or 0},
                                          dilation = {dilh or 1, dilw or 1}})
  m.keep_indices = true
  return m
end

return MaxPool2d
