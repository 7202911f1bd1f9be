local nn = require 'nn'
local F = require 'nn.functional'
local dropout_class = require 'nn._DropoutNd'

-- nn.Dropout2d(p=0.5): zeroes whole channels of (N, C, H, W) or (C, H, W) input.
-- Torch7's nn.SpatialDropout.
local Dropout2d = dropout_class('Dropout2d', F.dropout2d)
nn.SpatialDropout = Dropout2d

return Dropout2d
