local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.CosineDistance(): the cosine similarity of input[1] and input[2], a.b /
-- sqrt((|a|^2 + 1e-12)(|b|^2 + 1e-12)): vectors give a tensor of 1 value,
-- matrices of b x n one value a row.
local CosineDistance = torch.class('nn.CosineDistance', 'nn.Module')

local EPSILON = 1e-12     -- Torch7's guard against a zero norm

function CosineDistance:updateOutput(input)
  local a, b = Table.pair_rows('nn.CosineDistance', input)
  local dot = (a * b):sum(2)
  local norms = ((a * a):sum(2) + EPSILON) * ((b * b):sum(2) + EPSILON)
  return (dot / norms:sqrt()):view(-1)
end

return CosineDistance
