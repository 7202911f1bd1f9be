local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.DotProduct(): the dot product of input[1] and input[2]: vectors of n give a
-- tensor of 1 value, matrices of b x n the b row-wise dot products.
local DotProduct = torch.class('nn.DotProduct', 'nn.Module')

function DotProduct:updateOutput(input)
  local a, b = Table.pair_rows('nn.DotProduct', input)
  return (a * b):sum(2):view(-1)
end

return DotProduct
