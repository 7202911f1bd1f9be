local Reduce7 = require 'nn._Reduce7'

-- nn.Max(dimension=1, nInputDims): the largest value along dimension (dropped;
-- a vector gives a 1-element vector); the gradient goes to the first largest.
return Reduce7.define('Max', function(_, x, dim)
  local values = x:max(dim)
  if x:dim() == 1 then return values:view(1) end
  return values
end)
