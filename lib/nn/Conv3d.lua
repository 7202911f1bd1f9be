local nn = require 'nn'
local F = require 'nn.functional'
local conv_class = require 'nn._ConvNd'
local t7 = require 'nn._Torch7Params'

-- nn.Conv3d(in_channels, out_channels, kernel_size, {stride=1, padding=0, dilation=1, groups=1,
-- bias=true, padding_mode='zeros'}): 3-D convolution of (N, C, T, H, W) or (C, T, H, W) input
-- (F.conv3d); kernel_size, stride, padding and dilation a number or {t, h, w}; weight
-- (out, in / groups, kT, kH, kW), bias (out). padding_mode 'zeros', or 'replicate' (the input
-- padded by F.pad first).
local Conv3d = conv_class('Conv3d', 3, F.conv3d)
local Module = require 'nn.Module'

local init = Conv3d.__init
function Conv3d:__init(in_channels, out_channels, kernel, opts)
  if math.type(kernel) == 'integer' then kernel = {kernel, kernel, kernel} end
  if type(kernel) ~= 'table' or #kernel ~= 3 then
    error(string.format('nn.Conv3d: kernel_size must be an integer or {kT, kH, kW}, got %s', t7.show(kernel)), 3)
  end
  if opts and opts.padding_mode and opts.padding_mode ~= 'zeros' and opts.padding_mode ~= 'replicate' then
    error(string.format("nn.Conv3d: padding_mode must be 'zeros' or 'replicate', got '%s'", tostring(opts.padding_mode)), 3)
  end
  return init(self, in_channels, out_channels, kernel, opts)
end

-- the F.pad list {left, right, top, bottom, front, back} of padding_mode's padding
function Conv3d:_mode_pads()
  local p = self.padding
  if p == 'valid' then return {0, 0, 0, 0, 0, 0} end
  if p == 'same' then
    local out, d = {}, self.dilation
    for i = 1, 3 do
      local total = (type(d) == 'table' and d[i] or d) * (self.kernel_size[i] - 1)
      out[7 - 2 * i], out[8 - 2 * i] = total // 2, total - total // 2
    end
    return out
  end
  local t, h, w = p, p, p
  if type(p) == 'table' then t, h, w = p[1], p[2], p[3] end
  return {w, w, h, h, t, t}
end


-- conv:noBias(): Torch7's: the convolution without its bias; returns conv.
Conv3d.noBias = t7.noBias

-- conv:reset(stdv): Torch7's: weight and bias uniform in +-stdv * sqrt(3), or in
-- +-1 / sqrt(in / groups * kT * kH * kW) without stdv; returns conv.
Conv3d.reset = t7.reset(function(self) return self.weight:numel() // self.weight:size(1) end)

-- the Torch7 fields of a volumetric convolution (sizes, strides, padding as Torch7 names them)
local function torch7_fields(m, nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  m.nInputPlane, m.nOutputPlane = nin, nout
  m.kT, m.kW, m.kH, m.dT, m.dW, m.dH = kT, kW, kH, dT, dW, dH
  m.padT, m.padW, m.padH = padT, padW, padH
  return m
end

-- Torch7: nn.VolumetricConvolution(nInputPlane, nOutputPlane, kT, kW, kH, dT=1, dW=1, dH=1,
-- padT=0, padW=padT, padH=padW): an nn.Conv3d of kernel {kT, kH, kW} on (C, T, H, W) or
-- (N, C, T, H, W) input; weight (nOutputPlane, nInputPlane, kT, kH, kW).
function nn.VolumetricConvolution(nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  t7.integers('nn.VolumetricConvolution', {'nInputPlane', 'nOutputPlane', 'kT', 'kW', 'kH', 'dT?', 'dW?', 'dH?',
              'padT?', 'padW?', 'padH?'}, nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH)
  dT, dW, dH = dT or 1, dW or 1, dH or 1
  padT = padT or 0
  padW = padW or padT
  padH = padH or padW
  local m = nn.Conv3d(nin, nout, {kT, kH, kW}, {stride = {dT, dH, dW}, padding = {padT, padH, padW}})
  return torch7_fields(m, nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH)
end

-- Torch7: nn.VolumetricDilatedConvolution(nInputPlane, nOutputPlane, kT, kW, kH, dT=1, dW=1,
-- dH=1, padT=0, padW=0, padH=0, dilationT=1, dilationW=1, dilationH=1): an nn.Conv3d with
-- dilation {dilationT, dilationH, dilationW}.
function nn.VolumetricDilatedConvolution(nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH, dilT, dilW, dilH)
  t7.integers('nn.VolumetricDilatedConvolution', {'nInputPlane', 'nOutputPlane', 'kT', 'kW', 'kH', 'dT?', 'dW?',
              'dH?', 'padT?', 'padW?', 'padH?', 'dilationT?', 'dilationW?', 'dilationH?'}, nin, nout, kT, kW, kH, dT,
              dW, dH, padT, padW, padH, dilT, dilW, dilH)
  dT, dW, dH = dT or 1, dW or 1, dH or 1
  padT, padW, padH = padT or 0, padW or 0, padH or 0
  dilT, dilW, dilH = dilT or 1, dilW or 1, dilH or 1
  local m = nn.Conv3d(nin, nout, {kT, kH, kW}, {stride = {dT, dH, dW}, padding = {padT, padH, padW},
                                               dilation = {dilT, dilH, dilW}})
  m.dilationT, m.dilationW, m.dilationH = dilT, dilW, dilH
  return torch7_fields(m, nin, nout, kT, kW, kH, dT, dW, dH, padT, padW, padH)
end

return Conv3d
