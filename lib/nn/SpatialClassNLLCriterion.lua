local torch = require 'torch'
local C7 = require 'nn._Criterion7'

-- nn.SpatialClassNLLCriterion(weights, sizeAverage=true): ClassNLLCriterion at every
-- pixel: log-probabilities (N, C, H, W) with 1-based labels (N, H, W), or (C, H, W) with
-- (H, W); -sum w[y] x[y] over all pixels, divided by the sum of their weights when sizeAverage.
local SpatialClassNLLCriterion = C7.define('SpatialClassNLLCriterion', function(self, weights, sizeAverage)
  self.weights = C7.weights(self, weights)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  C7.input(self, input)
  if input:dim() ~= 3 and input:dim() ~= 4 then
    C7.fail(self, 'input must be 4-D (N x C x H x W) or 3-D (C x H x W), got size %s', C7.size_of(input))
  end
  local x = input:dim() == 3 and input:unsqueeze(1) or input
  local n, classes, h, w = x:size(1), x:size(2), x:size(3), x:size(4)
  local dims = input:dim() == 3 and {h, w} or {n, h, w}
  local fits = torch.is_tensor(target) and target:dim() == #dims
  for i = 1, #dims do fits = fits and target:size(i) == dims[i] end
  if not fits then
    C7.fail(self, 'input of size %s expects a target of size %s, got %s', C7.size_of(input),
            table.concat(dims, 'x'), C7.size_of(target))
  end
  if self.weights ~= nil and self.weights:numel() ~= classes then
    C7.fail(self, 'weights must have one element per class (%d), got size %s', classes, C7.size_of(self.weights))
  end
  local t = C7.classes(self, target, n * h * w, classes, nil)
  local logp = x:permute(1, 3, 4, 2):reshape(-1, classes)
  return C7.nll(logp, t, self.weights, nil, self.sizeAverage)
end)

return SpatialClassNLLCriterion
