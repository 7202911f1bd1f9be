local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'
local t7 = require 'nn._Torch7Params'

-- nn.AvgPool3d(kernel_size, {stride=kernel_size, padding=0, ceil_mode=false,
-- count_include_pad=true, divisor_override=nil}) (or the stride as second argument): window
-- means of (N, C, T, H, W) or (C, T, H, W) input (F.avg_pool3d); sizes a number or {t, h, w}.
local AvgPool3d, Module = torch.class('nn.AvgPool3d', 'nn.Module')

function AvgPool3d:__init(kernel, opts)
  Module.__init(self)
  if type(opts) == 'number' or (type(opts) == 'table' and #opts == 3) then opts = {stride = opts} end
  opts = opts or {}
  self.kernel_size, self.stride, self.padding = kernel, opts.stride or kernel, opts.padding or 0
  self.ceil_mode, self.count_include_pad = opts.ceil_mode == true, opts.count_include_pad ~= false
  self.divisor_override = opts.divisor_override
end

function AvgPool3d:updateOutput(x)
  return F.avg_pool3d(x, self.kernel_size, {stride = self.stride, padding = self.padding, ceil_mode = self.ceil_mode,
                      count_include_pad = self.count_include_pad, divisor_override = self.divisor_override})
end

-- pool:ceil(): Torch7's: output sizes rounded up (ceil_mode); returns pool.
function AvgPool3d:ceil()
  self.ceil_mode = true
  return self
end

-- pool:floor(): Torch7's: output sizes rounded down (the default); returns pool.
function AvgPool3d:floor()
  self.ceil_mode = false
  return self
end

function AvgPool3d:extra_repr()
  local show = helpers.show
  return string.format('kernel_size=%s, stride=%s, padding=%s', show(self.kernel_size), show(self.stride),
                       show(self.padding))
end

-- Torch7: nn.VolumetricAveragePooling(kT, kW, kH, dT=kT, dW=kW, dH=kH, padT=0, padW=0,
-- padH=0): an nn.AvgPool3d of kernel {kT, kH, kW} (padding counted in the means).
function nn.VolumetricAveragePooling(kT, kW, kH, dT, dW, dH, padT, padW, padH)
  t7.integers('nn.VolumetricAveragePooling', {'kT', 'kW', 'kH', 'dT?', 'dW?', 'dH?', 'padT?', 'padW?', 'padH?'},
              kT, kW, kH, dT, dW, dH, padT, padW, padH)
  dT, dW, dH = dT or kT, dW or kW, dH or kH
  padT, padW, padH = padT or 0, padW or 0, padH or 0
  local m = nn.AvgPool3d({kT, kH, kW}, {stride = {dT, dH, dW}, padding = {padT, padH, padW}})
  m.kT, m.kW, m.kH, m.dT, m.dW, m.dH, m.padT, m.padW, m.padH = kT, kW, kH, dT, dW, dH, padT, padW, padH
  return m
end

return AvgPool3d
