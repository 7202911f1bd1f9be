local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialConvolutionMM(nInputPlane, nOutputPlane, kW, kH=kW, dW=1, dH=1, padW=0, padH=padW):
-- Torch7's 2-D convolution over (nInputPlane x H x W) or (batch x nInputPlane x H x W) inputs
-- whose weight is kept as a matrix, nOutputPlane x (nInputPlane * kH * kW) (each row one
-- filter, in nInputPlane, kH, kW order), bias nOutputPlane; the output is
-- floor((H + 2 * padH - kH) / dH) + 1 high, floor((W + 2 * padW - kW) / dW) + 1 wide.
-- gradWeight and gradBias are the parameters' gradients; :noBias() drops the bias.
local SpatialConvolutionMM, Module = torch.class('nn.SpatialConvolutionMM', 'nn.Module')
spatial7.torch7_methods(SpatialConvolutionMM, function(self) return self.nInputPlane * self.kH * self.kW end)

function SpatialConvolutionMM:__init(nin, nout, kw, kh, dw, dh, padw, padh)
  Module.__init(self)
  local name = 'nn.SpatialConvolutionMM'
  spatial7.conv_fields(self, name, nin, nout, kw, kh, dw, dh, padw, padh)
  self.weight = nn.Parameter(torch.empty(self.nOutputPlane, self.nInputPlane * self.kH * self.kW))
  self.bias = nn.Parameter(torch.empty(self.nOutputPlane))
  self:reset()
end

function SpatialConvolutionMM:updateOutput(x)
  local name = 'nn.SpatialConvolutionMM'
  local w = self.weight
  if w:numel() ~= self.nOutputPlane * self.nInputPlane * self.kH * self.kW then
    error(string.format('%s: weight has %d values, expected %d x %d', name, w:numel(), self.nOutputPlane,
                        self.nInputPlane * self.kH * self.kW), 2)
  end
  local x4, unbatched = spatial7.batched(x, name, self.nInputPlane)
  local h, wd = x4:size(3) + 2 * self.padH, x4:size(4) + 2 * self.padW
  if h < self.kH or wd < self.kW then
    error(string.format('%s: input %dx%d (padded %dx%d) is smaller than the kernel %dx%d', name, x4:size(3),
                        x4:size(4), h, wd, self.kH, self.kW), 2)
  end
  local y = F.conv2d(x4, w:reshape(self.nOutputPlane, self.nInputPlane, self.kH, self.kW), self.bias,
                     {stride = {self.dH, self.dW}, padding = {self.padH, self.padW}})
  return unbatched and y:squeeze(1) or y
end

function SpatialConvolutionMM:extra_repr()
  local s = string.format('%d -> %d, %dx%d', self.nInputPlane, self.nOutputPlane, self.kW, self.kH)
  if self.dW ~= 1 or self.dH ~= 1 or self.padW ~= 0 or self.padH ~= 0 then
    s = s .. string.format(', %d,%d', self.dW, self.dH)
  end
  if self.padW ~= 0 or self.padH ~= 0 then s = s .. string.format(', %d,%d', self.padW, self.padH) end
  return s
end

-- module:__tostring__(): Torch7's text, nn.SpatialConvolutionMM(in -> out, kWxkH[, dW,dH[, padW,padH]])
-- with ' without bias' after a noBias().
function SpatialConvolutionMM:__tostring__()
  return 'nn.SpatialConvolutionMM(' .. self:extra_repr() .. ')' .. (self.bias == nil and ' without bias' or '')
end

return SpatialConvolutionMM
