local torch = require 'torch'
local F = require 'nn.functional'
local C7 = require 'nn._Criterion7'
require 'nn.MSECriterion'

-- the n + 1 vertices (rows, n coordinates each) of a regular simplex centred at the
-- origin, each at distance 1 from it: vertex k's first k - 1 coordinates are fixed by the
-- earlier ones, its k-th makes its norm 1, and the later vertices all share the k-th
-- coordinate that makes their dot product with vertex k equal -1/n.
local function simplex_vertices(n)
  local a = {}
  for i = 1, n + 1 do a[i] = {} for j = 1, n do a[i][j] = 0 end end
  for k = 1, n do
    local sq = 0
    for j = 1, k - 1 do sq = sq + a[k][j] ^ 2 end
    a[k][k] = math.sqrt(1 - sq)
    local shared = (a[k][k] ^ 2 - 1 - 1 / n) / a[k][k]
    for i = k + 1, n + 1 do a[i][k] = shared end
  end
  return a
end

-- nn.ClassSimplexCriterion(nClasses): Torch7's MSECriterion between the input (nClasses)
-- or (N, nClasses) and the embeddings of the 1-based labels (a number, or N of them): class
-- k's embedding is vertex k of a regular simplex in nClasses - 1 dimensions, padded with a
-- 0 (crit.simplex holds them, one row per class). crit:getPredictions(input) gives the
-- input's dot products with every embedding, crit:getTopPrediction(input) the best labels.
local ClassSimplexCriterion = C7.define('ClassSimplexCriterion', function(self, nClasses)
  if math.type(nClasses) ~= 'integer' and not (type(nClasses) == 'number' and nClasses % 1 == 0) or nClasses < 2 then
    C7.fail(self, 'nClasses must be a whole number > 1, got %s', tostring(nClasses))
  end
  self.nClasses = math.tointeger(nClasses)
  local rows = simplex_vertices(self.nClasses - 1)
  for _, row in ipairs(rows) do row[#row + 1] = 0 end
  self.simplex = torch.tensor(rows, {dtype = 'float64'})
end, function(self, input, target)
  C7.input(self, input)
  local n = type(target) == 'number' and 1 or (torch.is_tensor(target) and target:numel() or 0)
  if type(target) ~= 'number' and not (torch.is_tensor(target) and target:dim() == 1) then
    C7.fail(self, 'target must be a number or a 1-D tensor of labels, got %s', C7.size_of(target))
  end
  if input:numel() ~= n * self.nClasses then
    C7.fail(self, 'input of size %s does not hold %d sample%s of %d classes', C7.size_of(input), n,
            n == 1 and '' or 's', self.nClasses)
  end
  local t = C7.classes(self, target, n, self.nClasses, nil)
  local embedded = self.simplex:to(input.dtype):index_select(1, t):view_as(input)
  return F.mse_loss(input, embedded, {reduction = self.sizeAverage and 'mean' or 'sum'})
end, 'nn.MSECriterion')

-- crit:getPredictions(input): (N, nClasses) dot products of each sample with each class
function ClassSimplexCriterion:getPredictions(input)
  local x = input:dim() == 1 and input:view(1, -1) or input
  return (x:mm(self.simplex:to(x.dtype):t()))
end

-- crit:getTopPrediction(input): the 1-based label of each sample's best class (N)
function ClassSimplexCriterion:getTopPrediction(input)
  local _, best = self:getPredictions(input):max(2)
  return best:view(-1)
end

return ClassSimplexCriterion
