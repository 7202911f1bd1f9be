local C7 = require 'nn._Criterion7'

-- nn.DistanceRatioCriterion(sizeAverage=true): Torch7's probabilistic triplet loss of a
-- pair {X, Y} of distances (similar pairs X, dissimilar Y, N each): -log(exp(-X) /
-- (exp(-X) + exp(-Y))) = log(1 + exp(X - Y)), summed and divided by N when sizeAverage.
-- The target is not used.
local DistanceRatioCriterion = C7.define('DistanceRatioCriterion', function(self, sizeAverage)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input)
  if type(input) ~= 'table' or #input ~= 2 then
    C7.fail(self, 'input must be a table of two tensors {X, Y}, got %s', C7.size_of(input))
  end
  local x, y = C7.input(self, input[1], 'input[1]'), C7.input(self, input[2], 'input[2]')
  if x:numel() ~= y:numel() or x:dim() == 0 or x:size(1) ~= y:size(1) then
    C7.fail(self, 'input[1] of size %s and input[2] of size %s must hold as many distances', C7.size_of(x), C7.size_of(y))
  end
  return C7.reduce(self, (x - y:view_as(x)):softplus(), x:size(1))
end)

return DistanceRatioCriterion
