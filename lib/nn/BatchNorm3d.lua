local torch = require 'torch'
local nn = require 'nn'
local BatchNorm = require 'nn._BatchNorm'

-- nn.BatchNorm3d(num_features, {eps=1e-5, momentum=0.1, affine=true,
-- track_running_stats=true}): batch normalization of (N, C, T, H, W) input over all but C.
local BatchNorm3d = torch.class('nn.BatchNorm3d', 'nn._BatchNorm')
BatchNorm3d._input_dims = {5}

function BatchNorm3d:updateOutput(x)
  -- Torch7's module also takes one (C, T, H, W) sample in evaluation
  if self.unbatched_eval and torch.is_tensor(x) and x:dim() == 4 and not self.training then
    return BatchNorm.updateOutput(self, x:unsqueeze(1)):squeeze(1)
  end
  return BatchNorm.updateOutput(self, x)
end

-- Torch7: nn.VolumetricBatchNormalization(nOutput, eps=1e-5, momentum=0.1, affine=true):
-- an nn.BatchNorm3d over (N, C, T, H, W), also of one (C, T, H, W) sample in evaluation.
function nn.VolumetricBatchNormalization(n, eps, momentum, affine)
  if math.type(n) ~= 'integer' or n < 1 then
    error(string.format('nn.VolumetricBatchNormalization: nOutput must be a positive integer, got %s', tostring(n)), 2)
  end
  local m = nn.BatchNorm3d(n, {eps = eps, momentum = momentum, affine = affine})
  m.unbatched_eval = true
  return m
end

return BatchNorm3d
