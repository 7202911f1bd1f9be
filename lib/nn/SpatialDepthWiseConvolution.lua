local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialDepthWiseConvolution(nInputPlane, nOutputPlane, kW, kH=kW, dW=1, dH=1, padW=0,
-- padH=padW): Torch7's depthwise convolution: each input plane convolved with its own
-- nOutputPlane filters (nOutputPlane is the multiplier), giving nInputPlane * nOutputPlane
-- planes, plane (i - 1) * nOutputPlane + j from input plane i and filter j. Torch7's layout:
-- weight nOutputPlane x (nInputPlane * kH * kW) (viewed as nOutputPlane x nInputPlane x kH x kW:
-- weight[j][i] is filter j of plane i), bias nOutputPlane x nInputPlane. :noBias() drops the bias.
local SpatialDepthWiseConvolution, Module = torch.class('nn.SpatialDepthWiseConvolution', 'nn.Module')
spatial7.torch7_methods(SpatialDepthWiseConvolution, function(self) return self.nInputPlane * self.kH * self.kW end)

function SpatialDepthWiseConvolution:__init(nin, nout, kw, kh, dw, dh, padw, padh)
  Module.__init(self)
  local name = 'nn.SpatialDepthWiseConvolution'
  spatial7.conv_fields(self, name, nin, nout, kw, kh, dw, dh, padw, padh)
  self.weight = nn.Parameter(torch.empty(self.nOutputPlane, self.nInputPlane * self.kH * self.kW))
  self.bias = nn.Parameter(torch.empty(self.nOutputPlane, self.nInputPlane))
  self:reset()
end

function SpatialDepthWiseConvolution:updateOutput(x)
  local name = 'nn.SpatialDepthWiseConvolution'
  local nin, mult, kh, kw = self.nInputPlane, self.nOutputPlane, self.kH, self.kW
  if self.weight:numel() ~= mult * nin * kh * kw then
    error(string.format('%s: weight has %d values, expected %d x %d', name, self.weight:numel(), mult,
                        nin * kh * kw), 2)
  end
  if self.bias ~= nil and self.bias:numel() ~= mult * nin then
    error(string.format('%s: bias has %d values, expected %d x %d', name, self.bias:numel(), mult, nin), 2)
  end
  local x4, unbatched = spatial7.batched(x, name, nin)
  if x4:size(3) + 2 * self.padH < kh or x4:size(4) + 2 * self.padW < kw then
    error(string.format('%s: input %dx%d (padded %dx%d) is smaller than the kernel %dx%d', name, x4:size(3),
                        x4:size(4), x4:size(3) + 2 * self.padH, x4:size(4) + 2 * self.padW, kh, kw), 2)
  end
  -- a convolution in nin groups, output plane (i - 1) * mult + j from weight[j][i]
  local w = self.weight:reshape(mult, nin, kh, kw):transpose(1, 2):reshape(nin * mult, 1, kh, kw)
  local b = self.bias ~= nil and self.bias:reshape(mult, nin):t():reshape(nin * mult) or nil
  local y = F.conv2d(x4, w, b, {stride = {self.dH, self.dW}, padding = {self.padH, self.padW}, groups = nin})
  return unbatched and y:squeeze(1) or y
end

function SpatialDepthWiseConvolution:extra_repr()
  local s = string.format('%d -> %d, %dx%d', self.nInputPlane, self.nOutputPlane, self.kW, self.kH)
  if self.dW ~= 1 or self.dH ~= 1 or self.padW ~= 0 or self.padH ~= 0 then
    s = s .. string.format(', %d,%d', self.dW, self.dH)
  end
  if self.padW ~= 0 or self.padH ~= 0 then s = s .. string.format(', %d,%d', self.padW, self.padH) end
  return s
end

return SpatialDepthWiseConvolution
