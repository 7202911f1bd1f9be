local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local spatial7 = require 'nn._Spatial7'

-- nn.SpatialSubSampling(nInputPlane, kW, kH=kW, dW=1, dH=1): Torch7's subsampling: each
-- plane's sums over kH x kW windows (dH, dW apart), times the plane's weight, plus its
-- bias: output[c] = weight[c] * sum(window of input[c]) + bias[c]; weight and bias hold
-- nInputPlane values, the output floor((H - kH) / dH) + 1 by floor((W - kW) / dW) + 1.
-- Takes (nInputPlane x H x W) or (batch x nInputPlane x H x W) inputs.
local SpatialSubSampling, Module = torch.class('nn.SpatialSubSampling', 'nn.Module')
spatial7.torch7_methods(SpatialSubSampling, function(self) return self.kW * self.kH end)

function SpatialSubSampling:__init(nin, kw, kh, dw, dh)
  Module.__init(self)
  local name = 'nn.SpatialSubSampling'
  self.nInputPlane = spatial7.int_arg(nin, 'nInputPlane', name)
  self.kW = spatial7.int_arg(kw, 'kW', name)
  self.kH = spatial7.int_arg(kh or kw, 'kH', name)
  self.dW = spatial7.int_arg(dw or 1, 'dW', name)
  self.dH = spatial7.int_arg(dh or 1, 'dH', name)
  self.weight = nn.Parameter(torch.empty(self.nInputPlane))
  self.bias = nn.Parameter(torch.empty(self.nInputPlane))
  self:reset()
end

function SpatialSubSampling:updateOutput(x)
  local name = 'nn.SpatialSubSampling'
  local x4, unbatched = spatial7.batched(x, name, self.nInputPlane)
  if x4:size(3) < self.kH or x4:size(4) < self.kW then
    error(string.format('%s: input %dx%d is smaller than the kernel %dx%d', name, x4:size(3), x4:size(4),
                        self.kH, self.kW), 2)
  end
  local c = self.nInputPlane
  -- one kH x kW kernel per plane, every tap the plane's weight: a grouped convolution
  local w = self.weight:reshape(c, 1, 1, 1):expand(c, 1, self.kH, self.kW)
  local y = F.conv2d(x4, w, self.bias, {stride = {self.dH, self.dW}, groups = c})
  return unbatched and y:squeeze(1) or y
end

function SpatialSubSampling:extra_repr()
  return string.format('%d, %dx%d, %d,%d', self.nInputPlane, self.kW, self.kH, self.dW, self.dH)
end

return SpatialSubSampling
