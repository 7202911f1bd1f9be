local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialConvolutionLocal(nInputPlane, nOutputPlane, iW, iH, kW, kH=kW, dW=1, dH=1, padW=0,
-- padH=padW): Torch7's locally connected layer: a convolution whose filters are not shared,
-- one set for each output position, so the input size (iH x iW) is fixed. The output is
-- oH = floor((iH + 2 * padH - kH) / dH) + 1 by oW = floor((iW + 2 * padW - kW) / dW) + 1;
-- weight oH x oW x nOutputPlane x nInputPlane x kH x kW (weight[y][x] the filters of output
-- position y, x), bias nOutputPlane x oH x oW. Takes (nInputPlane x iH x iW) or
-- (batch x nInputPlane x iH x iW) inputs.
local SpatialConvolutionLocal, Module = torch.class('nn.SpatialConvolutionLocal', 'nn.Module')
spatial7.torch7_methods(SpatialConvolutionLocal, function(self) return self.nInputPlane * self.kH * self.kW end)

function SpatialConvolutionLocal:__init(nin, nout, iw, ih, kw, kh, dw, dh, padw, padh)
  Module.__init(self)
  local name = 'nn.SpatialConvolutionLocal'
  spatial7.conv_fields(self, name, nin, nout, kw, kh, dw, dh, padw, padh)
  self.iW = spatial7.int_arg(iw, 'iW', name)
  self.iH = spatial7.int_arg(ih, 'iH', name)
  self.oW = (self.iW + 2 * self.padW - self.kW) // self.dW + 1
  self.oH = (self.iH + 2 * self.padH - self.kH) // self.dH + 1
  if self.iW + 2 * self.padW < self.kW or self.iH + 2 * self.padH < self.kH then
    error(string.format('%s: input %dx%d (padded %dx%d) is smaller than the kernel %dx%d', name, self.iH, self.iW,
                        self.iH + 2 * self.padH, self.iW + 2 * self.padW, self.kH, self.kW), 3)
  end
  self.weight = nn.Parameter(torch.empty(self.oH, self.oW, self.nOutputPlane, self.nInputPlane, self.kH, self.kW))
  self.bias = nn.Parameter(torch.empty(self.nOutputPlane, self.oH, self.oW))
  self:reset()
end

function SpatialConvolutionLocal:updateOutput(x)
  local name = 'nn.SpatialConvolutionLocal'
  local x4, unbatched = spatial7.batched(x, name, self.nInputPlane)
  if x4:size(3) ~= self.iH or x4:size(4) ~= self.iW then
    error(string.format('%s: input is %dx%d, expected %dx%d (iH x iW)', name, x4:size(3), x4:size(4),
                        self.iH, self.iW), 2)
  end
  local n, l, o, k = x4:size(1), self.oH * self.oW, self.nOutputPlane, self.nInputPlane * self.kH * self.kW
  if self.weight:numel() ~= l * o * k then
    error(string.format('%s: weight has %d values, expected %dx%dx%dx%dx%dx%d', name, self.weight:numel(), self.oH,
                        self.oW, o, self.nInputPlane, self.kH, self.kW), 2)
  end
  -- the windows as columns (n, k, l), then per position l: (o x k) @ (k x n)
  local cols = F.unfold(x4, {self.kH, self.kW}, {stride = {self.dH, self.dW}, padding = {self.padH, self.padW}})
  local y = torch.bmm(self.weight:reshape(l, o, k), cols:permute(3, 2, 1))   -- (l, o, n)
  y = y:permute(3, 2, 1):reshape(n, o, self.oH, self.oW)
  if self.bias ~= nil then y = y + self.bias:reshape(1, o, self.oH, self.oW) end
  return unbatched and y:squeeze(1) or y
end

function SpatialConvolutionLocal:extra_repr()
  local s = string.format('%d -> %d, %dx%d, %dx%d', self.nInputPlane, self.nOutputPlane, self.iW, self.iH,
                          self.kW, self.kH)
  if self.dW ~= 1 or self.dH ~= 1 or self.padW ~= 0 or self.padH ~= 0 then
    s = s .. string.format(', %d,%d', self.dW, self.dH)
  end
  if self.padW ~= 0 or self.padH ~= 0 then s = s .. string.format(', %d,%d', self.padW, self.padH) end
  return s
end

return SpatialConvolutionLocal
