local torch = require 'torch'
local nn = require 'nn'

-- nn.WeightedEuclidean(inputSize, outputSize): y_j = || c_j * (x - w_j) ||, nn.Euclidean
-- with a learned diagonal scale c_j per template (diagCov, inputSize x outputSize, ones).
local WeightedEuclidean = torch.class('nn.WeightedEuclidean', 'nn.Euclidean')
function WeightedEuclidean:__init(input_size, output_size)
  nn.Euclidean.__init(self, input_size, output_size)
end
function WeightedEuclidean:reset(stdv)
  nn.Euclidean.reset(self, stdv)
  if not self.diagCov then self.diagCov = nn.Parameter(torch.empty(self.weight:size())) end
  torch.no_grad(function() self.diagCov:fill_(1) end)
  return self
end
function WeightedEuclidean:updateOutput(x)
  return (((self:differences(x) * self.diagCov) ^ 2):sum(-2):sqrt())
end

return WeightedEuclidean
