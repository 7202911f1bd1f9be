local nn = require 'nn'
local F = require 'nn.functional'
local dropout_class = require 'nn._DropoutNd'

-- nn.Dropout3d(p=0.5): zeroes whole channels of (N, C, T, H, W) or (C, T, H, W) input with
-- probability p while training, scaling the rest by 1/(1-p) (F.dropout3d). Torch7's
-- nn.VolumetricDropout.
local Dropout3d = dropout_class('Dropout3d', F.dropout3d)
nn.VolumetricDropout = Dropout3d

return Dropout3d
