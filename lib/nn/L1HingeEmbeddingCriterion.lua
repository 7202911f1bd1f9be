local torch = require 'torch'
local C7 = require 'nn._Criterion7'

-- nn.L1HingeEmbeddingCriterion(margin=1): Torch7's loss of a pair {x1, x2} with y = 1
-- (similar: d) or -1 (dissimilar: max(0, margin - d)), d the L1 distance |x1 - x2|_1.
-- Vectors with a number y as Torch7's; rows of (N, D) matrices with N targets give one
-- distance per row, summed and divided by N when sizeAverage (the field, true by default).
local L1HingeEmbeddingCriterion = C7.define('L1HingeEmbeddingCriterion', function(self, margin)
  self.margin = margin or 1
end, function(self, input, target)
  if type(input) ~= 'table' or #input ~= 2 then
    C7.fail(self, 'input must be a table of two tensors {x1, x2}, got %s', C7.size_of(input))
  end
  local x1, x2 = C7.input(self, input[1], 'input[1]'), C7.input(self, input[2], 'input[2]')
  if x1:size() ~= x2:size() or x1:dim() < 1 or x1:dim() > 2 then
    C7.fail(self, 'input[1] and input[2] must be vectors or matrices of one size, got %s and %s',
            C7.size_of(x1), C7.size_of(x2))
  end
  local d = (x1 - x2):abs():sum(x1:dim())
  local y = C7.signs(self, target, d)
  local loss = torch.where(y:eq(1), d, (self.margin - d):clamp_min(0))
  return C7.reduce(self, loss, d:numel())
end)

return L1HingeEmbeddingCriterion
