local torch = require 'torch'
local F = require 'nn.functional'
require 'nn._BatchNorm'

-- nn.InstanceNorm2d(num_features, {eps=1e-5, momentum=0.1, affine=false, track_running_stats=false}):
-- (N, C, H, W) or (C, H, W) input normalized per sample and channel (PyTorch's defaults: no
-- affine weight, no running stats). With track_running_stats, training also updates running
-- statistics, which evaluation then uses.
local InstanceNorm2d, BatchNorm = torch.class('nn.InstanceNorm2d', 'nn._BatchNorm')
InstanceNorm2d._input_dims = {3, 4}
function InstanceNorm2d:__init(num_features, opts)
  opts = opts or {}
  BatchNorm.__init(self, num_features, {eps = opts.eps, momentum = opts.momentum, dtype = opts.dtype,
                                        affine = opts.affine == true,
                                        track_running_stats = opts.track_running_stats == true})
end
function InstanceNorm2d:updateOutput(x)
  self:_check_input(x)
  local unbatched = x:dim() == 3
  local track = self.track_running_stats
  local y = F.instance_norm(unbatched and x:unsqueeze(1) or x, track and self.running_mean or nil,
                            track and self.running_var or nil, self.weight, self.bias, self.training or not track,
                            self.momentum or 0.1, self.eps)
  return unbatched and y:squeeze(1) or y
end

return InstanceNorm2d
