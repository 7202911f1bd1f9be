local torch = require 'torch'
local C7 = require 'nn._Criterion7'

-- nn.MultiLabelMarginCriterion(): Torch7's multi-label hinge loss of scores x (C) or
-- (N, C); the target has x's size and lists each sample's 1-based labels first, ended by
-- a 0 (or the row's end): for each sample, sum over its labels j and the classes i that
-- are not labels of max(0, 1 - (x[j] - x[i])), divided by C; summed over the samples and
-- divided by N when sizeAverage (the field, true by default).
local MultiLabelMarginCriterion = C7.define('MultiLabelMarginCriterion', nil, function(self, input, target)
  C7.input(self, input)
  if input:dim() ~= 1 and input:dim() ~= 2 then
    C7.fail(self, 'input must be 1-D (one sample) or 2-D (a batch), got size %s', C7.size_of(input))
  end
  local x = input:dim() == 1 and input:view(1, -1) or input
  local n, classes = x:size(1), x:size(2)
  if not torch.is_tensor(target) or target:numel() ~= x:numel() then
    C7.fail(self, 'input of size %s expects a target of the same size, got %s', C7.size_of(input), C7.size_of(target))
  end
  local raw = C7.labels(self, target, n * classes):view(n, classes)
  -- the labels are the entries before each row's first 0 (or negative entry)
  local listed = raw:gt(0):long():cumprod(2):gt(0)
  C7.check_labels(self, raw, classes, listed)
  local labels = torch.where(listed, raw, 1)
  local counts = torch.zeros(n, classes, {dtype = x.dtype}):scatter_add(2, labels, listed:to(x.dtype))
  local others = counts:eq(0):to(x.dtype)
  local at_labels = x:gather(2, labels)
  local z = (1 - at_labels:unsqueeze(3) + x:unsqueeze(2)):clamp_min(0)
  z = z * listed:to(x.dtype):unsqueeze(3) * others:unsqueeze(2)
  return C7.reduce(self, z, n) / classes
end)

return MultiLabelMarginCriterion
