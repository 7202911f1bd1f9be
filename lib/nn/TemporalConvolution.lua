local torch = require 'torch'
local nn = require 'nn'
local Module = require 'nn.Module'
local t7 = require 'nn._Torch7Params'

-- Torch7's 1-D convolution over the frames of a sequence (nFrames x frameSize) or a batch of
-- them (B x nFrames x frameSize).
local TemporalConvolution = torch.class('nn.TemporalConvolution', 'nn.Module')

-- nn.TemporalConvolution(inputFrameSize, outputFrameSize, kW, dW=1): each output frame is
-- bias + weight * (the kW input frames of its window, concatenated), windows dW frames apart:
-- (nFrames x inputFrameSize) -> (((nFrames - kW) // dW + 1) x outputFrameSize), also with a
-- batch dim in front; weight (outputFrameSize x inputFrameSize * kW), bias (outputFrameSize).
function TemporalConvolution:__init(inputFrameSize, outputFrameSize, kW, dW)
  Module.__init(self)
  t7.integers('nn.TemporalConvolution', {'inputFrameSize', 'outputFrameSize', 'kW', 'dW?'}, inputFrameSize,
              outputFrameSize, kW, dW)
  dW = dW or 1
  if inputFrameSize < 1 or outputFrameSize < 1 or kW < 1 or dW < 1 then
    error(string.format('nn.TemporalConvolution: sizes must be positive, got (%d, %d, %d, %d)', inputFrameSize,
                        outputFrameSize, kW, dW), 3)
  end
  self.inputFrameSize, self.outputFrameSize, self.kW, self.dW = inputFrameSize, outputFrameSize, kW, dW
  self.weight = nn.Parameter(torch.empty(outputFrameSize, inputFrameSize * kW))
  self.bias = nn.Parameter(torch.empty(outputFrameSize))
  self:reset()
end


-- conv:reset(stdv): weight and bias uniform in +-stdv * sqrt(3), or in
-- +-1 / sqrt(kW * inputFrameSize) without stdv; returns conv.
TemporalConvolution.reset = t7.reset(function(self) return self.kW * self.inputFrameSize end)

-- conv:noBias(): the convolution without its bias; returns conv.
TemporalConvolution.noBias = t7.noBias

function TemporalConvolution:updateOutput(x)
  local win = t7.temporal_windows(x, self.inputFrameSize, self.kW, self.dW, 'nn.TemporalConvolution')
  local rows = win:transpose(-1, -2):reshape(table.unpack(self:_row_shape(win)))
  local y = rows:matmul(self.weight:t())
  if self.bias ~= nil then y = y + self.bias end
  return y
end

-- the shape (..., nOut, kW * frameSize) of the windows win (..., nOut, frameSize, kW)
function TemporalConvolution:_row_shape(win)
  local shape = win:size():totable()
  local k = table.remove(shape)
  shape[#shape] = shape[#shape] * k
  return shape
end

function TemporalConvolution:extra_repr()
  return string.format('%d -> %d, kW=%d, dW=%d', self.inputFrameSize, self.outputFrameSize, self.kW, self.dW)
end

return TemporalConvolution
