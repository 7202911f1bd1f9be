local C7 = require 'nn._Criterion7'

-- nn.MarginRankingCriterion(margin=1): Torch7's ranking loss of a pair {x1, x2} with y = 1
-- (x1 should rank higher) or -1 (x2 should): max(0, -y (x1 - x2) + margin) (another y
-- scales the difference). One-element
-- tensors with a number y give that value; batches (N elements each, N targets) give the
-- sum, divided by N when sizeAverage (the field, true by default).
local MarginRankingCriterion = C7.define('MarginRankingCriterion', function(self, margin)
  self.margin = margin or 1
end, function(self, input, target)
  if type(input) ~= 'table' or #input ~= 2 then
    C7.fail(self, 'input must be a table of two tensors {x1, x2}, got %s', C7.size_of(input))
  end
  local x1, x2 = C7.input(self, input[1], 'input[1]'), C7.input(self, input[2], 'input[2]')
  if x1:numel() ~= x2:numel() then
    C7.fail(self, 'input[1] of size %s and input[2] of size %s differ in number of elements', C7.size_of(x1), C7.size_of(x2))
  end
  x1, x2 = x1:reshape(-1), x2:reshape(-1)
  local _, y = C7.pair(self, x1, target)
  local loss = (-y * (x1 - x2) + self.margin):clamp_min(0)
  if type(target) == 'number' then return (loss:sum()) end
  return C7.reduce(self, loss, x1:numel())
end)

return MarginRankingCriterion
