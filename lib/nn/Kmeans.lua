local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line

-- nn.Kmeans(k, dim, scale): online hard k-means of dim-dimensional samples, Torch7's. The k
-- centers are the rows of weight (k x dim). forward(input) (batch x dim) gives each
-- sample's nearest center (1-based, as the weight's type) and sets self.loss, the sum of
-- the squared distances to those centers. accGradParameters (and backward, whose gradInput
-- is zeros: k-means has its own criterion) adds to gradWeight, for each center c,
-- -scale/n * sum (x - c) over its n samples, so that weight - gradWeight (a learning rate of
-- 1, with scale=1) moves each center to the mean of its samples. scale is the constructor's
-- when given, else the call's (default 1).
local Kmeans, parent = torch.class('nn.Kmeans', 'nn.Module')
function Kmeans:__init(k, dim, scale)
  parent.__init(self)
  if math.type(k) ~= 'integer' or k < 1 then error('nn.Kmeans: the number of clusters must be a positive integer, got ' .. tostring(k), 3) end
  if math.type(dim) ~= 'integer' or dim < 1 then error('nn.Kmeans: the dimensionality must be a positive integer, got ' .. tostring(dim), 3) end
  if scale ~= nil and (type(scale) ~= 'number' or scale <= 0) then
    error('nn.Kmeans: scale must be a positive number, got ' .. tostring(scale), 3)
  end
  self.k, self.dim, self.scale = k, dim, scale
  self.weight = torch.empty(k, dim)
  self.gradWeight = torch.zeros(k, dim)
  self.clusterSampleCount = torch.zeros(k)
  self.loss = 0
  self:reset()
end

-- module:reset(stdev=1): centers uniform in +-stdev.
function Kmeans:reset(stdev)
  stdev = stdev or 1
  self.weight:uniform_(-stdev, stdev)
  return self
end

local function check(self, input)
  if not torch.is_tensor(input) or input:dim() ~= 2 or input:size(2) ~= self.dim then
    fail(self, 'expected input of size batch x %d, got %s', self.dim,
         torch.is_tensor(input) and tostring(input:size()) or torch.type(input))
  end
  return input:detach():to({dtype = self.weight.dtype, device = self.weight.device})
end

-- module:initRandom(input): each center a sample of input (batch x dim, at least k rows)
-- drawn at random.
function Kmeans:initRandom(input)
  local x = check(self, input)
  if x:size(1) < self.k then
    error(string.format('nn.Kmeans:initRandom: need at least k = %d samples, got %d', self.k, x:size(1)), 2)
  end
  local picks = torch.randint(1, x:size(1) + 1, {self.k}, {dtype = 'int64'}):to({device = x.device})
  self.weight:copy_(x:index_select(1, picks))
  return self
end

-- module:initKmeansPlus(input, p=0.95): k-means++ seeding: the first center a random
-- sample, each next one drawn among the ceil((1-p) n) samples farthest from the centers
-- chosen so far (squared Euclidean distance to the nearest).
function Kmeans:initKmeansPlus(input, p)
  self.p = p or self.p or 0.95
  if type(self.p) ~= 'number' or self.p < 0 or self.p > 1 then
    error('nn.Kmeans:initKmeansPlus: p must lie in [0, 1], got ' .. tostring(self.p), 2)
  end
  local x = check(self, input)
  local n = x:size(1)
  if n < 1 then error('nn.Kmeans:initKmeansPlus: expected at least one sample', 2) end
  local pcount = math.max(1, math.ceil((1 - self.p) * n))
  pcount = math.min(pcount, n)
  self.weight[1]:copy_(x[torch.randint(1, n + 1, {1}):item()])
  local nearest = torch.full({n}, math.huge, {dtype = x.dtype, device = x.device})
  for c = 2, self.k do
    local d = (x - self.weight[c - 1]:view(1, -1)):pow(2):sum(2)
    nearest = torch.minimum(nearest, d)
    local _, order = nearest:sort(1, true)
    local j = order[torch.randint(1, pcount + 1, {1}):item()]
    if torch.is_tensor(j) then j = j:item() end
    self.weight[c]:copy_(x[j])
  end
  return self
end

function Kmeans:updateOutput(input)
  local x = check(self, input)
  -- squared distances, k x batch
  local d = (x:unsqueeze(1) - self.weight:unsqueeze(2)):pow(2):sum(3)
  local score, index = d:min(1)
  self._minIndx = index
  self.loss = score:sum():item()
  self.output = index:to(self.weight.dtype)
  return self.output
end

-- the gradient of the input: zeros (Torch7's)
function Kmeans:updateGradInput(input)
  self.gradInput = torch.zeros(input:size(), {dtype = self.weight.dtype, device = self.weight.device})
  return self.gradInput
end

function Kmeans:accGradParameters(input, _, scale)
  scale = self.scale or scale or 1
  if scale <= 0 then error('nn.Kmeans:accGradParameters: scale must be positive, got ' .. tostring(scale), 2) end
  local x = check(self, input)
  local index = self._minIndx
  if index == nil or index:numel() ~= x:size(1) then
    error('nn.Kmeans:accGradParameters: call forward on this input first', 2)
  end
  self.clusterSampleCount:zero_():index_add_(1, index, torch.ones(x:size(1), {dtype = self.clusterSampleCount.dtype, device = x.device}))
  local diff = (x - self.weight:index_select(1, index)) * -scale
  local sums = torch.zeros_like(self.weight):index_add_(1, index, diff)
  self.gradWeight:add_(sums / (self.clusterSampleCount + 1e-7):view(-1, 1))
end

require('nn._Plain7').define_to(Kmeans, {'weight', 'gradWeight', 'clusterSampleCount'})

function Kmeans:extra_repr() return string.format('k=%d, dim=%d', self.k, self.dim) end

return Kmeans
