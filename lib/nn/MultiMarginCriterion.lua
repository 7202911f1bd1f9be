local torch = require 'torch'
local C7 = require 'nn._Criterion7'

-- nn.MultiMarginCriterion(p=1, weights, margin=1): Torch7's multi-class hinge loss of
-- scores x (C) with a number label y, or (N, C) with N labels: for each sample
-- sum over i ~= y of w[y] max(0, margin - x[y] + x[i])^p, divided by C; summed over the
-- samples and divided by N when sizeAverage (the field, true by default). p is 1 or 2.
local MultiMarginCriterion = C7.define('MultiMarginCriterion', function(self, p, weights, margin)
  if p ~= nil and p ~= 1 and p ~= 2 then C7.fail(self, 'p must be 1 or 2, got %s', tostring(p)) end
  self.p = p or 1
  self.weights = C7.weights(self, weights)
  self.margin = margin or 1
end, function(self, input, target)
  C7.input(self, input)
  if input:dim() ~= 1 and input:dim() ~= 2 then
    C7.fail(self, 'input must be 1-D (one sample) or 2-D (a batch), got size %s', C7.size_of(input))
  end
  local x = input:dim() == 1 and input:view(1, -1) or input
  local n, classes = x:size(1), x:size(2)
  local t = C7.classes(self, target, n, classes, nil)
  local is_target = torch.arange(1, classes + 1):view(1, classes):eq(t:view(n, 1))
  local z = (self.margin - x:gather(2, t:view(n, 1)) + x):clamp_min(0):masked_fill(is_target, 0)
  if self.p == 2 then z = z * z end
  if self.weights ~= nil then
    if self.weights:numel() ~= classes then
      C7.fail(self, 'weights must have one element per class (%d), got size %s', classes, C7.size_of(self.weights))
    end
    z = z * self.weights:to(x.dtype):index_select(1, t):view(n, 1)
  end
  return C7.reduce(self, z, n) / classes
end)

return MultiMarginCriterion
