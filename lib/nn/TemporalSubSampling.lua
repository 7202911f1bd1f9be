local torch = require 'torch'
local nn = require 'nn'
local Module = require 'nn.Module'
local t7 = require 'nn._Torch7Params'

-- Torch7's 1-D subsampling of the frames of a sequence.
local TemporalSubSampling = torch.class('nn.TemporalSubSampling', 'nn.Module')

-- nn.TemporalSubSampling(inputFrameSize, kW, dW=1): each output frame is the sum of the kW
-- input frames of its window (windows dW frames apart) times weight plus bias, per feature:
-- (nFrames x inputFrameSize) -> (((nFrames - kW) // dW + 1) x inputFrameSize), also with a
-- batch dim in front; weight and bias (inputFrameSize).
function TemporalSubSampling:__init(inputFrameSize, kW, dW)
  Module.__init(self)
  t7.integers('nn.TemporalSubSampling', {'inputFrameSize', 'kW', 'dW?'}, inputFrameSize, kW, dW)
  dW = dW or 1
  if inputFrameSize < 1 or kW < 1 or dW < 1 then
    error(string.format('nn.TemporalSubSampling: sizes must be positive, got (%d, %d, %d)', inputFrameSize, kW, dW), 3)
  end
  self.inputFrameSize, self.kW, self.dW = inputFrameSize, kW, dW
  self.weight = nn.Parameter(torch.empty(inputFrameSize))
  self.bias = nn.Parameter(torch.empty(inputFrameSize))
  self:reset()
end


-- sub:reset(stdv): weight and bias uniform in +-stdv * sqrt(3), or in +-1 / sqrt(kW) without
-- stdv; returns sub.
TemporalSubSampling.reset = t7.reset(function(self) return self.kW end)

function TemporalSubSampling:updateOutput(x)
  local win = t7.temporal_windows(x, self.inputFrameSize, self.kW, self.dW, 'nn.TemporalSubSampling')
  return win:sum(-1) * self.weight + self.bias
end

function TemporalSubSampling:extra_repr()
  return string.format('%d, kW=%d, dW=%d', self.inputFrameSize, self.kW, self.dW)
end

return TemporalSubSampling
