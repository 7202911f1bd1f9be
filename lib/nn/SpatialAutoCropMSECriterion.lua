local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'
require 'nn.MSECriterion'

-- nn.SpatialAutoCropMSECriterion(sizeAverage=true): Torch7's MSECriterion between an image
-- (C, H, W) or batch (N, C, H, W) and the centre of a target of the same dims and a height
-- and width at least the input's: the target is cropped to H x W around its centre (the
-- extra row or column, when odd, falls at the end).
local SpatialAutoCropMSECriterion = C7.define('SpatialAutoCropMSECriterion', function(self, sizeAverage)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  C7.input(self, input)
  C7.input(self, target, 'target')
  if (input:dim() ~= 3 and input:dim() ~= 4) or target:dim() ~= input:dim() then
    C7.fail(self, 'input and target must both be 3-D (C x H x W) or 4-D (N x C x H x W), got %s and %s',
            C7.size_of(input), C7.size_of(target))
  end
  local hdim, wdim = input:dim() - 1, input:dim()
  local h, w, th, tw = input:size(hdim), input:size(wdim), target:size(hdim), target:size(wdim)
  if h > th or w > tw then
    C7.fail(self, 'input of size %s is larger in height or width than the target of size %s',
            C7.size_of(input), C7.size_of(target))
  end
  local cropped = target:narrow(hdim, 1 + (th - h) // 2, h):narrow(wdim, 1 + (tw - w) // 2, w)
  if cropped:size() ~= input:size() then
    C7.fail(self, 'input of size %s and the cropped target of size %s differ', C7.size_of(input), C7.size_of(cropped))
  end
  return F.mse_loss(input, cropped:to(input.dtype), {reduction = self.sizeAverage and 'mean' or 'sum'})
end, 'nn.MSECriterion')

return SpatialAutoCropMSECriterion
