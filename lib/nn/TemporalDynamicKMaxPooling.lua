local torch = require 'torch'
local nn = require 'nn'
local t7 = require 'nn._Torch7Params'

-- Torch7's dynamic k-max pooling (Kalchbrenner et al.): the k largest values of each feature
-- over the frames, in their original order.
local TemporalDynamicKMaxPooling, Module = torch.class('nn.TemporalDynamicKMaxPooling', 'nn.Module')

-- nn.TemporalDynamicKMaxPooling(minK, factor=0): of (nFrames x features) or (batch x nFrames x
-- features) input, the k = max(minK, ceil(factor * nFrames)) largest values of each feature
-- along the frames, kept in frame order: (k x features); the input needs at least minK frames.
-- The positions of the last call are in m.indices.
function TemporalDynamicKMaxPooling:__init(minK, factor)
  Module.__init(self)
  if math.type(minK) ~= 'integer' or minK < 1 then
    error('nn.TemporalDynamicKMaxPooling: minK must be a positive integer, got ' .. tostring(minK), 3)
  end
  if factor ~= nil and type(factor) ~= 'number' then
    error('nn.TemporalDynamicKMaxPooling: factor must be a number, got ' .. tostring(factor), 3)
  end
  self.minK, self.factor = minK, factor or 0
end

function TemporalDynamicKMaxPooling:updateOutput(x)
  local fname = 'nn.TemporalDynamicKMaxPooling'
  if not torch.is_tensor(x) or (x:dim() ~= 2 and x:dim() ~= 3) then
    t7.fail('%s: expected a 2-D (nFrames x features) or 3-D (batch) input, got %s', fname,
            torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x))
  end
  local dim = x:dim() - 1
  local n = x:size(dim)
  local k = math.max(self.minK, math.ceil(self.factor * n))
  if n < k then
    t7.fail('%s: input of size %s has %d frames, fewer than k = %d', fname, tostring(x:size()), n, k)
  end
  local _, order = x:detach():topk(k, dim)
  local idx = order:sort(dim)
  self.indices = idx
  return (x:gather(dim, idx))
end

function TemporalDynamicKMaxPooling:extra_repr()
  return string.format('minK=%d, factor=%g', self.minK, self.factor)
end

return TemporalDynamicKMaxPooling
