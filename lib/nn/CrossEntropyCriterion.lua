local nn = require 'nn'
local C7 = require 'nn._Criterion7'
require 'nn.ClassNLLCriterion'

-- nn.CrossEntropyCriterion(weights, sizeAverage=true): Torch7's LogSoftMax followed by
-- ClassNLLCriterion(weights, sizeAverage) (crit.nll) on raw scores: input (C) with a number
-- label or (N, C) with N 1-based labels; an input of more dims loses its size-1 dims first
-- (a convolution's N x C x 1 x 1 output), as Torch7 squeezed it. As in Torch7, a change
-- of crit.sizeAverage passes on to crit.nll, and crit.nll.sizeAverage set alone holds.
local CrossEntropyCriterion = C7.define('CrossEntropyCriterion', function(self, weights, sizeAverage)
  self.nll = nn.ClassNLLCriterion(weights, sizeAverage)
  self.sizeAverage = self.nll.sizeAverage
  self.oldSizeAverage = self.sizeAverage
end, function(self, input, target)
  if self.sizeAverage ~= self.oldSizeAverage then
    self.nll.sizeAverage = self.sizeAverage
    self.oldSizeAverage = self.sizeAverage
  end
  C7.input(self, input)
  local scores = input:dim() > 2 and input:squeeze() or input
  if scores:dim() ~= 1 and scores:dim() ~= 2 then
    C7.fail(self, 'input must be 1-D (one sample) or 2-D (a batch), got size %s', C7.size_of(input))
  end
  local logp, t, ignore = nn.ClassNLLCriterion.batch_of(self, scores:log_softmax(scores:dim()), target,
                                                           self.nll.ignoreIndex)
  local weights = self.nll.weights
  if weights ~= nil and weights:numel() ~= logp:size(2) then
    C7.fail(self, 'weights must have one element per class (%d), got size %s', logp:size(2), C7.size_of(weights))
  end
  return C7.nll(logp, t, weights, ignore, self.nll.sizeAverage)
end)

return CrossEntropyCriterion
