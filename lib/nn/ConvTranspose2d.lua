local torch = require 'torch'
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

-- Torch7's dual input: m:forward({input, target}) makes the output the size of target's
-- last two dims (the adjustment computed, 0 <= adj < stride); backward's gradient for
-- target is a zero of one element expanded to its shape, as Torch7's
local Module = nn.Module
local single_input = ConvTranspose2d.updateOutput
local function pair(v, i) return type(v) == 'table' and v[i] or v end
function ConvTranspose2d:updateOutput(x)
  if type(x) ~= 'table' or torch.is_tensor(x) then return single_input(self, x) end
  local input, target = x[1], x[2]
  if not (torch.is_tensor(input) and torch.is_tensor(target)) or target:dim() < 2 or input:dim() < 3 then
    error(string.format('nn.%s: a dual input is {input, target} (two tensors, the target of 2 dims or more), got {%s, %s}',
                        torch.typename(self):sub(4), torch.type(input), torch.type(target)), 0)
  end
  local adj = {}
  for i = 1, 2 do
    local stride, pad, dil = pair(self.stride, i), pair(self.padding, i), pair(self.dilation, i)
    local size = (input:size(input:dim() - 2 + i) - 1) * stride - 2 * pad + dil * (self.kernel_size[i] - 1) + 1
    adj[i] = target:size(target:dim() - 2 + i) - size
    if adj[i] < 0 or adj[i] >= math.max(stride, dil) then
      error(string.format('nn.%s: an input of %dx%d cannot give an output of %dx%d (the target\'s size) with these '
                          .. 'strides and paddings', torch.typename(self):sub(4), input:size(input:dim() - 1),
                          input:size(input:dim()), target:size(target:dim() - 1), target:size(target:dim())), 0)
    end
  end
  return F.conv_transpose2d(input, self.weight, self.bias, {stride = self.stride, padding = self.padding,
                            dilation = self.dilation, groups = self.groups, output_padding = adj})
end
function ConvTranspose2d:backward(input, gradOutput, scale)
  local gi = Module.backward(self, input, gradOutput, scale)
  if type(input) == 'table' and not torch.is_tensor(input) and type(gi) == 'table' and torch.is_tensor(input[2]) then
    gi[2] = torch.zeros(1, {dtype = input[2].dtype, device = input[2].device}):expand(input[2]:size())
  end
  return gi
end

return ConvTranspose2d
