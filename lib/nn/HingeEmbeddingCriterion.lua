local torch = require 'torch'
local C7 = require 'nn._Criterion7'

-- nn.HingeEmbeddingCriterion(margin=1): Torch7's loss of distances x with targets y of 1
-- (similar: x) or -1 (dissimilar: max(0, margin - x)), summed over the elements and divided
-- by their number when sizeAverage (the field, true by default); y is a tensor of x's
-- number of elements, or a number for a one-element x.
local HingeEmbeddingCriterion = C7.define('HingeEmbeddingCriterion', function(self, margin)
  self.margin = margin or 1
end, function(self, input, target)
  local y = C7.signs(self, target, C7.input(self, input))
  local loss = torch.where(y:eq(1), input, (self.margin - input):clamp_min(0))
  return C7.reduce(self, loss, input:numel())
end)

return HingeEmbeddingCriterion
