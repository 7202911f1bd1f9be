local torch = require 'torch'
local Table = require 'nn._Table'

-- nn.PairwiseDistance(p=2): the p-norm distance |input[1] - input[2]|_p:
-- vectors give a tensor of 1 value, matrices of b x n one value a row.
local PairwiseDistance, parent = torch.class('nn.PairwiseDistance', 'nn.Module')
function PairwiseDistance:__init(p)
  parent.__init(self)
  p = p or 2
  if type(p) ~= 'number' or p <= 0 then error('nn.PairwiseDistance: expected a positive norm p, got ' .. tostring(p), 0) end
  self.norm = p
end
function PairwiseDistance:updateOutput(input)
  local a, b = Table.pair_rows('nn.PairwiseDistance', input)
  return (a - b):norm(self.norm, 2):view(-1)
end
function PairwiseDistance:extra_repr() return 'p=' .. self.norm end

return PairwiseDistance
