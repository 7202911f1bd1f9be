local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'
local t7 = require 'nn._Torch7Params'

-- nn.MaxPool3d(kernel_size, {stride=kernel_size, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false}) (or the stride as second argument): the maximum of each window of
-- (N, C, T, H, W) or (C, T, H, W) input (F.max_pool3d); sizes a number or {t, h, w}. With
-- return_indices the output is (values, 1-based positions in each T * H * W volume).
local MaxPool3d, Module = torch.class('nn.MaxPool3d', 'nn.Module')

function MaxPool3d:__init(kernel, opts)
  Module.__init(self)
  if type(opts) == 'number' or (type(opts) == 'table' and #opts == 3) then opts = {stride = opts} end
  opts = opts or {}
  self.kernel_size, self.stride, self.padding = kernel, opts.stride or kernel, opts.padding or 0
  self.dilation, self.ceil_mode, self.return_indices = opts.dilation or 1, opts.ceil_mode == true,
                                                       opts.return_indices == true
end

function MaxPool3d:updateOutput(x)
  local keep = self.keep_indices          -- Torch7's modules keep the positions for VolumetricMaxUnpooling
  local v, idx = F.max_pool3d(x, self.kernel_size, {stride = self.stride, padding = self.padding,
                              dilation = self.dilation, ceil_mode = self.ceil_mode,
                              return_indices = self.return_indices or keep})
  if keep then
    self.indices = idx
    local d = x:dim()
    self.itime, self.iheight, self.iwidth = x:size(d - 2), x:size(d - 1), x:size(d)
  end
  if self.return_indices then return v, idx end
  return v
end

-- pool:ceil(): Torch7's: output sizes rounded up (ceil_mode); returns pool.
function MaxPool3d:ceil()
  self.ceil_mode = true
  return self
end

-- pool:floor(): Torch7's: output sizes rounded down (the default); returns pool.
function MaxPool3d:floor()
  self.ceil_mode = false
  return self
end

function MaxPool3d:extra_repr()
  local show = helpers.show
  local s = string.format('kernel_size=%s, stride=%s, padding=%s', show(self.kernel_size), show(self.stride),
                          show(self.padding))
  if self.dilation ~= 1 then s = s .. ', dilation=' .. show(self.dilation) end
  if self.ceil_mode then s = s .. ', ceil_mode=true' end
  return s
end

-- Torch7: nn.VolumetricMaxPooling(kT, kW, kH, dT=kT, dW=kW, dH=kH, padT=0, padW=0, padH=0):
-- an nn.MaxPool3d of kernel {kT, kH, kW} that keeps its last positions in m.indices (for
-- nn.VolumetricMaxUnpooling); m:ceil() rounds the output sizes up.
function nn.VolumetricMaxPooling(kT, kW, kH, dT, dW, dH, padT, padW, padH)
  return nn.VolumetricDilatedMaxPooling(kT, kW, kH, dT, dW, dH, padT, padW, padH)
end

-- Torch7: nn.VolumetricDilatedMaxPooling(kT, kW, kH, dT=kT, dW=kW, dH=kH, padT=0, padW=0,
-- padH=0, dilationT=1, dilationW=1, dilationH=1): nn.VolumetricMaxPooling with the kernel's
-- taps dilation apart.
function nn.VolumetricDilatedMaxPooling(kT, kW, kH, dT, dW, dH, padT, padW, padH, dilT, dilW, dilH)
  t7.integers('nn.VolumetricMaxPooling', {'kT', 'kW', 'kH', 'dT?', 'dW?', 'dH?', 'padT?', 'padW?', 'padH?',
              'dilationT?', 'dilationW?', 'dilationH?'}, kT, kW, kH, dT, dW, dH, padT, padW, padH, dilT, dilW, dilH)
  dT, dW, dH = dT or kT, dW or kW, dH or kH
  padT, padW, padH = padT or 0, padW or 0, padH or 0
  dilT, dilW, dilH = dilT or 1, dilW or 1, dilH or 1
  local m = nn.MaxPool3d({kT, kH, kW}, {stride = {dT, dH, dW}, padding = {padT, padH, padW},
                                       dilation = {dilT, dilH, dilW}})
  m.keep_indices = true
  m.kT, m.kW, m.kH, m.dT, m.dW, m.dH, m.padT, m.padW, m.padH = kT, kW, kH, dT, dW, dH, padT, padW, padH
  m.dilationT, m.dilationW, m.dilationH = dilT, dilW, dilH
  return m
end

return MaxPool3d
