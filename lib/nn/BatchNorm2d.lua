local torch = require 'torch'
local nn = require 'nn'
require 'nn._BatchNorm'

-- nn.BatchNorm2d(num_features, opts): (N, C, H, W) input. Torch7's nn.SpatialBatchNormalization.
local BatchNorm2d = torch.class('nn.BatchNorm2d', 'nn._BatchNorm')
BatchNorm2d._input_dims = {4}
nn.SpatialBatchNormalization = BatchNorm2d

return BatchNorm2d
