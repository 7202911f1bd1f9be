local torch = require 'torch'
local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'
require 'nn.MSECriterion'

-- nn.WeightedMSECriterion(weight): Torch7's MSECriterion against the target multiplied by
-- weight elementwise: sum (x - w y)^2, divided by the number of elements when sizeAverage
-- (the field, true by default). weight has the size of one sample of a batch (then it
-- weighs every sample's target) or of the whole input.
local WeightedMSECriterion = C7.define('WeightedMSECriterion', function(self, weight)
  if not torch.is_tensor(weight) then
    C7.fail(self, 'expected a weight tensor, got %s', type(weight))
  end
  self.weight = weight:clone()
end, function(self, input, target)
  local x, y = C7.pair(self, input, target)
  local w = self.weight:to(x.dtype)
  if x:dim() - 1 == w:dim() then
    local fits = true
    for i = 1, w:dim() do fits = fits and w:size(i) == x:size(i + 1) end
    if not fits then
      C7.fail(self, 'weight of size %s does not fit the samples of an input of size %s', C7.size_of(w), C7.size_of(x))
    end
    w = w:unsqueeze(1)
  elseif w:numel() == x:numel() then
    w = w:view_as(x)
  else
    C7.fail(self, 'weight of size %s fits neither the input of size %s nor its samples', C7.size_of(w), C7.size_of(x))
  end
  return F.mse_loss(x, y * w, {reduction = self.sizeAverage and 'mean' or 'sum'})
end, 'nn.MSECriterion')

return WeightedMSECriterion
