local torch = require 'torch'
local F = require 'nn.functional'

-- nn.SpatialLogSoftMax(): the log-softmax over the channels at each position: along dim 1 of
-- (C, H, W), dim 2 of (N, C, H, W) (a vector along dim 1, a batch of rows along dim 2).
local SpatialLogSoftMax = torch.class('nn.SpatialLogSoftMax', 'nn.Module')
function SpatialLogSoftMax:updateOutput(x)
  if not torch.is_tensor(x) or x:dim() < 1 or x:dim() > 4 then
    error('nn.SpatialLogSoftMax: expected input of 1 to 4 dims, got ' .. (torch.is_tensor(x) and 'size '
          .. tostring(x:size()) or torch.type(x)), 3)
  end
  return F.log_softmax(x, (x:dim() == 1 or x:dim() == 3) and 1 or 2)
end

return SpatialLogSoftMax
