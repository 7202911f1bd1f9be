local Reduce7 = require 'nn._Reduce7'

-- nn.Min(dimension=1, nInputDims): the smallest value along dimension (dropped;
-- a vector gives a 1-element vector); the gradient goes to the first smallest.
return Reduce7.define('Min', function(_, x, dim)
  local values = x:min(dim)
  if x:dim() == 1 then return values:view(1) end
  return values
end)
