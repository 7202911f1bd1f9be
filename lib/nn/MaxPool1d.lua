local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local pool_class = require 'nn._PoolNd'

-- nn.MaxPool1d(kernel_size, {stride=kernel_size, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false}) of (N, C, L) or (C, L).
local MaxPool1d = pool_class('MaxPool1d', F.max_pool1d)

-- Torch7: nn.TemporalMaxPooling(kW, dW) of (nFrames, frameSize) or (N, nFrames, frameSize): the
-- frames pooled, each feature on its own
local TemporalMaxPooling = torch.class('nn.TemporalMaxPooling', 'nn.Module')
function TemporalMaxPooling:__init(kw, dw)
  nn.Module.__init(self)
  self.kW, self.dW = kw, dw or kw
end
function TemporalMaxPooling:updateOutput(x)
  return F.max_pool1d(x:transpose(-1, -2), self.kW, {stride = self.dW}):transpose(-1, -2)
end

return MaxPool1d
