local torch = require 'torch'
local nn = require 'nn'

-- nn.Mean(dimension=1, nInputDims): nn.Sum with sizeAverage: the mean along dimension.
local Mean = torch.class('nn.Mean', 'nn.Sum')
function Mean:__init(dimension, n_input_dims)
  nn.Sum.__init(self, dimension, n_input_dims, true)
end

return Mean
