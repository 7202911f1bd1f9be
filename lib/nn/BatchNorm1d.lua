local torch = require 'torch'
local nn = require 'nn'
require 'nn._BatchNorm'

-- nn.BatchNorm1d(num_features, {eps=1e-5, momentum=0.1, affine=true, track_running_stats=true}):
-- (N, C) or (N, C, L) input. Torch7's nn.BatchNormalization.
local BatchNorm1d = torch.class('nn.BatchNorm1d', 'nn._BatchNorm')
BatchNorm1d._input_dims = {2, 3}
nn.BatchNormalization = BatchNorm1d

return BatchNorm1d
