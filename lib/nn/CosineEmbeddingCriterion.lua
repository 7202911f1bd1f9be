local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'

-- nn.CosineEmbeddingCriterion(margin=0): Torch7's loss of a pair {x1, x2} of vectors (D)
-- or of row batches (N, D) with y = 1 (similar: 1 - cos(x1, x2)) or -1 (dissimilar:
-- max(0, cos(x1, x2) - margin)) per row (1e-12 added to the squared norms), summed and
-- divided by N when sizeAverage (the field, true by default); y is a tensor, or a number
-- for vectors.
local CosineEmbeddingCriterion = C7.define('CosineEmbeddingCriterion', function(self, margin)
  self.margin = margin or 0
end, function(self, input, target)
  if type(input) ~= 'table' or #input ~= 2 then
    C7.fail(self, 'input must be a table of two tensors {x1, x2}, got %s', C7.size_of(input))
  end
  local x1, x2 = C7.input(self, input[1], 'input[1]'), C7.input(self, input[2], 'input[2]')
  if x1:size() ~= x2:size() or x1:dim() < 1 or x1:dim() > 2 then
    C7.fail(self, 'input[1] and input[2] must be vectors or matrices of one size, got %s and %s',
            C7.size_of(x1), C7.size_of(x2))
  end
  if x1:dim() == 1 then x1, x2 = x1:view(1, -1), x2:view(1, -1) end
  local y = C7.signs(self, target, x1:select(2, 1))
  return F.cosine_embedding_loss(x1, x2, y, {margin = self.margin, reduction = self.sizeAverage and 'mean' or 'sum'})
end)

return CosineEmbeddingCriterion
