local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local conv_class = require 'nn._ConvNd'
local Module = require 'nn.Module'
local t7 = require 'nn._Torch7Params'

-- nn.ConvTranspose3d(in_channels, out_channels, kernel_size, {stride=1, padding=0,
-- output_padding=0, groups=1, dilation=1, bias=true}): the transposed 3-D convolution
-- (F.conv_transpose3d) of (N, C, T, H, W) or (C, T, H, W) input; weight
-- (in, out / groups, kT, kH, kW). Called on a table {input, target}, as Torch7's
-- VolumetricFullConvolution, the output takes target's last three sizes (output_padding
-- computed from them) and backward gives {gradInput, a one-element zero tensor}.
local ConvTranspose3d = conv_class('ConvTranspose3d', 3, F.conv_transpose3d, true)

local init = ConvTranspose3d.__init
function ConvTranspose3d:__init(in_channels, out_channels, kernel, opts)
  if math.type(kernel) == 'integer' then kernel = {kernel, kernel, kernel} end
  if type(kernel) ~= 'table' or #kernel ~= 3 then
    error(string.format('nn.ConvTranspose3d: kernel_size must be an integer or {kT, kH, kW}, got %s',
                        t7.show(kernel)), 3)
  end
  return init(self, in_channels, out_channels, kernel, opts)
end

-- a number or one of a triple
local function at(v, i) return type(v) == 'table' and v[i] or v end

local conv_output = ConvTranspose3d.updateOutput
-- the output; on {input, target}, output_padding fitted so that the output has target's size
function ConvTranspose3d:updateOutput(x)
  if type(x) ~= 'table' then return conv_output(self, x) end
  local input, target = x[1], x[2]
  if not torch.is_tensor(input) or not torch.is_tensor(target) or target:dim() < 3 then
    t7.fail('nn.ConvTranspose3d: a table input must be {input, target} with a target of at least 3 dims')
  end
  local adj, nd = {}, input:dim()
  for i = 1, 3 do
    local k, s, p, d = self.kernel_size[i], at(self.stride, i), at(self.padding, i), at(self.dilation, i)
    local size = target:size(target:dim() - 3 + i)
    adj[i] = size - ((input:size(nd - 3 + i) - 1) * s - 2 * p + d * (k - 1) + 1)
    if adj[i] < 0 or (adj[i] >= s and adj[i] >= d) then
      t7.fail('nn.ConvTranspose3d: target size %s cannot be reached from input size %s', tostring(target:size()),
              tostring(input:size()))
    end
  end
  return F.conv_transpose3d(input, self.weight, self.bias, {stride = self.stride, padding = self.padding,
                            dilation = self.dilation, groups = self.groups, output_padding = adj})
end

-- transposed:backward(input, gradOutput, scale): Torch7's; on {input, target} the gradient
-- is {gradInput, a one-element zero tensor} (the target only gives a size).
function ConvTranspose3d:backward(input, gradOutput, scale)
  local gi = Module.backward(self, input, gradOutput, scale)
  if type(input) == 'table' and not torch.is_tensor(input) then
    local first = torch.is_tensor(input[1]) and input[1] or nil
    gi = {gi[1], torch.zeros(1, {dtype = first and first.dtype})}
    self.gradInput = gi
  end
  return gi
end


-- transposed:noBias(): Torch7's: the convolution without its bias; returns it.
ConvTranspose3d.noBias = t7.noBias

-- transposed:reset(stdv): Torch7's: weight and bias uniform in +-stdv * sqrt(3), or without
-- stdv in +-1 / sqrt(fan_in) (Torch7's nInputPlane * kT * kH * kW when built by
-- VolumetricFullConvolution, else PyTorch's out / groups * kT * kH * kW); returns it.
ConvTranspose3d.reset = t7.reset(function(self)
  local k = self.kernel_size[1] * self.kernel_size[2] * self.kernel_size[3]
  return (self.nInputPlane or self.weight:size(2)) * k
end)

-- Torch7: nn.VolumetricFullConvolution(nInputPlane, nOutputPlane, kT, kW, kH, dT=1, dW=1, dH=1,
-- padT=0, padW=0, padH=0, adjT=0, adjW=0, adjH=0): an nn.ConvTranspose3d of kernel
-- {kT, kH, kW}, output_padding {adjT, adjH, adjW} (each below its stride); weight
-- (nInputPlane, nOutputPlane, kT, kH, kW). Also takes {input, target}: the output then has
-- target's last three sizes.
function nn.VolumetricFullConvolution(nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH, adjT, adjW, adjH)
  local fname = 'nn.VolumetricFullConvolution'
  t7.integers(fname, {'nInputPlane', 'nOutputPlane', 'kT', 'kW', 'kH', 'dT?', 'dW?', 'dH?', 'padT?', 'padW?',
              'padH?', 'adjT?', 'adjW?', 'adjH?'}, nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH, adjT, adjW,
              adjH)
  dT, dW, dH = dT or 1, dW or 1, dH or 1
  padT, padW, padH = padT or 0, padW or 0, padH or 0
  adjT, adjW, adjH = adjT or 0, adjW or 0, adjH or 0
  if adjT >= dT or adjW >= dW or adjH >= dH or adjT < 0 or adjW < 0 or adjH < 0 then
    error(string.format('%s: adjT, adjW, adjH (%d, %d, %d) must be smaller than dT, dW, dH (%d, %d, %d)', fname,
                        adjT, adjW, adjH, dT, dW, dH), 2)
  end
  local m = nn.ConvTranspose3d(nin, nout, {kT, kH, kW}, {stride = {dT, dH, dW}, padding = {padT, padH, padW},
                                                        output_padding = {adjT, adjH, adjW}})
  m.nInputPlane, m.nOutputPlane = nin, nout
  m.kT, m.kW, m.kH, m.dT, m.dW, m.dH = kT, kW, kH, dT, dW, dH
  m.padT, m.padW, m.padH, m.adjT, m.adjW, m.adjH = padT, padW, padH, adjT, adjW, adjH
  m:reset()
  return m
end

return ConvTranspose3d
