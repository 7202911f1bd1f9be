local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local dropout_class = require 'nn._DropoutNd'
local t7 = require 'nn._Torch7Params'

-- nn.Dropout3d(p=0.5): zeroes whole channels of (N, C, T, H, W) or (C, T, H, W) input with
-- probability p while training, scaling the rest by 1/(1-p) (F.dropout3d).
local Dropout3d = dropout_class('Dropout3d', F.dropout3d)

local scaled = Dropout3d.updateOutput
function Dropout3d:updateOutput(x)
  if not self.torch7_scaling then return scaled(self, x) end
  -- Torch7's: kept channels unscaled while training, everything times 1 - p in evaluation
  if not self.training and not self.stochastic_inference then return x * (1 - self.p) end
  if not torch.is_tensor(x) or (x:dim() ~= 4 and x:dim() ~= 5) then
    t7.fail('nn.VolumetricDropout: expected a 4-D (C, T, H, W) or 5-D (N, C, T, H, W) input, got %s',
            torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x))
  end
  local shape = x:size():totable()
  for i = #shape - 2, #shape do shape[i] = 1 end
  self.noise = torch.empty(shape, {dtype = x.dtype, device = x.device}):bernoulli_(1 - self.p)
  return x * self.noise
end

-- Torch7: nn.VolumetricDropout(p=0.5, stochasticInference=false): an nn.Dropout3d with
-- Torch7's scaling: while training the kept channels pass unscaled, in evaluation the output
-- is the input times 1 - p (or, with stochasticInference, channels dropped as in training).
function nn.VolumetricDropout(p, stochastic_inference)
  local m = nn.Dropout3d(p)
  m.torch7_scaling = true
  m.stochastic_inference = stochastic_inference == true
  return m
end

return Dropout3d
