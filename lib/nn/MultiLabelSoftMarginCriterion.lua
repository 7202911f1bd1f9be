local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'

-- nn.MultiLabelSoftMarginCriterion(weights, sizeAverage=true): Torch7's multi-label
-- logistic loss of scores x with 0/1 targets y of x's size, the binary cross-entropy of
-- sigmoid(x): -sum w (y log sigmoid(x) + (1 - y) log(1 - sigmoid(x))) (in a stable form),
-- divided by the number of elements when sizeAverage; weights (1-D) has one weight per
-- class (per column of a 2-D input).
local MultiLabelSoftMarginCriterion = C7.define('MultiLabelSoftMarginCriterion', function(self, weights, sizeAverage)
  self.weights = C7.weights(self, weights)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  local x, y = C7.pair(self, input, target)
  local w = self.weights
  if w ~= nil then
    local columns = x:dim() == 0 and 1 or x:size(x:dim())
    if w:numel() ~= columns then
      C7.fail(self, 'weights must have one element per class (%d), got size %s', columns, C7.size_of(w))
    end
    w = w:to(x.dtype)
  end
  return F.binary_cross_entropy_with_logits(x, y, {weight = w, reduction = self.sizeAverage and 'mean' or 'sum'})
end)

return MultiLabelSoftMarginCriterion
