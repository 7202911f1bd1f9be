local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local dropout_class = require 'nn._DropoutNd'

-- nn.Dropout2d(p=0.5): zeroes whole channels of (N, C, H, W) or (C, H, W) input.
local Dropout2d = dropout_class('Dropout2d', F.dropout2d)

-- nn.SpatialDropout(p=0.5): Torch7's: Dropout2d's masks, the kept channels unscaled in
-- training, and the input scaled by 1-p in evaluation.
local SpatialDropout, parent = torch.class('nn.SpatialDropout', 'nn.Dropout2d')
function SpatialDropout:__init(p, stochastic_inference)
  parent.__init(self, p, true, nil, stochastic_inference)
end

return Dropout2d
