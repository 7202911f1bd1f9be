local torch = require 'torch'
-- fail(self, fmt, ...): an error naming the module, at the caller's line
local fail = require('nn._Criterion7').fail
local F = require 'nn.functional'

-- nn.SpatialLogSoftMax(): the log-softmax over the channels at each position: along dim 1 of
-- (C, H, W), dim 2 of (N, C, H, W) (a vector along dim 1, a batch of rows along dim 2).
local SpatialLogSoftMax = torch.class('nn.SpatialLogSoftMax', 'nn.Module')
function SpatialLogSoftMax:updateOutput(x)
  if not torch.is_tensor(x) or x:dim() < 1 or x:dim() > 4 then
    fail(self, '%s', 'expected input of 1 to 4 dims, got ' .. (torch.is_tensor(x) and 'size '
         .. tostring(x:size()) or torch.type(x)))
  end
  return F.log_softmax(x, (x:dim() == 1 or x:dim() == 3) and 1 or 2)
end

return SpatialLogSoftMax
