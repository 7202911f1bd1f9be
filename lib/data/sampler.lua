-- Samplers: streams of 1-based indices (sampler:iter() yields them, #sampler
-- counts them). SequentialSampler, RandomSampler, SubsetRandomSampler,
-- WeightedRandomSampler, BatchSampler (yields Lua arrays of indices) and
-- DistributedSampler (one rank's share, reshuffled per epoch with set_epoch).
local torch = require 'torch'
local data = require 'data'

local function array_iter(list)
  local i = 0
  return function()
    i = i + 1
    return list[i]
  end
end

-- data.is_sampler(s): can s serve as a sampler or a batch sampler? An object with
-- iter(), or a plain Lua array (of indices, or of arrays of indices), as PyTorch takes
-- any iterable.
function data.is_sampler(s)
  return type(s) == 'table' and (type(s.iter) == 'function' or getmetatable(s) == nil)
end

-- data.sampler_iter(s): an iterator over what s yields: s:iter(), or the array's items
function data.sampler_iter(s)
  if type(s.iter) == 'function' then return s:iter() end
  return array_iter(s)
end

-- data.Sampler(): the base class of samplers; a subclass defines size() and
-- iter() (an iterator over 1-based indices). `for idx in sampler:iter() do`,
-- `for idx in sampler do`, ipairs(sampler) and pairs(sampler) (k, idx) each
-- make one pass (a random sampler draws its order as a pass starts).
--   local Evens = data.Sampler:extend('Evens')   -- or torch.class('Evens', 'data.Sampler')
local Sampler = torch.class('data.Sampler')
Sampler.__len = function(self) return (self:size()) end
Sampler.__tostring = function(self)
  local ok, n = pcall(data.len, self)
  return string.format('%s (%s indices)', torch.typename(self), ok and tostring(n) or '?')
end
data._iterable(Sampler, {
  start = function(self) return self:iter() end,
  pairs = function(self)
    local it, k = self:iter(), 0
    return function()
      local idx = it()
      if idx == nil then return nil end
      k = k + 1
      return k, idx
    end
  end,
  noun = 'sampler', var = 'sampler', item = 'index', items = 'indices',
  ipairs_form = 'for k, idx in ipairs(sampler) do',
  iter_form = 'for idx in sampler:iter() do',
  call_form = 'for idx in sampler do',
})
-- data.Sampler:extend(name): a new sampler class (its size() and iter() give the indices).
function Sampler:extend(name) return data._extend(self, name) end
-- sampler:indices(): the whole stream as a Lua array
function Sampler:indices()
  local out = {}
  for i in self:iter() do out[#out + 1] = i end
  return out
end

-- data.SequentialSampler(ds): 1, 2, ..., #ds.
local Sequential = torch.class('data.SequentialSampler', 'data.Sampler')
function Sequential:__init(ds) self.n = type(ds) == 'number' and ds or data.len(ds) end
function Sequential:size() return self.n end
function Sequential:iter()
  local i = 0
  return function()
    i = i + 1
    if i <= self.n then return i end
  end
end

-- data.RandomSampler(ds, {replacement=false, num_samples=#ds, generator=}): a random
-- permutation, or num_samples draws with replacement. Without replacement, num_samples
-- beyond #ds chains fresh permutations, as PyTorch. The indices are read from int64
-- tensors (8 bytes an index, no Lua table however large the dataset).
local RandomSampler = torch.class('data.RandomSampler', 'data.Sampler')
function RandomSampler:__init(ds, opts)
  opts = opts or {}
  self.n = type(ds) == 'number' and ds or data.len(ds)
  self.replacement = opts.replacement or false
  self.num_samples = opts.num_samples or self.n
  self.generator = opts.generator
  if math.type(self.num_samples) ~= 'integer' or self.num_samples < 0 then
    error('RandomSampler: num_samples must be a non-negative integer, got ' .. tostring(self.num_samples), 3)
  end
  if self.n == 0 and self.num_samples > 0 then
    error(string.format('RandomSampler: cannot draw %d samples from an empty dataset', self.num_samples), 3)
  end
end
function RandomSampler:size() return self.num_samples end
function RandomSampler:iter()
  local g, n, total = self.generator, self.n, self.num_samples
  local block                    -- the int64 tensor of indices being read
  if self.replacement then block = torch.randint(1, n + 1, {total}, {generator = g, dtype = 'int64'})
  elseif total > 0 then block = torch.randperm(n, {generator = g}) end
  local given, k = 0, 0
  return function()
    if given >= total then return nil end
    if k == n and not self.replacement then   -- the permutation is used up: the next one
      block, k = torch.randperm(n, {generator = g}), 0
    end
    given, k = given + 1, k + 1
    return block[k]
  end
end

-- data.SubsetRandomSampler(indices, {generator=}): the given indices in random order.
local SubsetRandom = torch.class('data.SubsetRandomSampler', 'data.Sampler')
function SubsetRandom:__init(indices, opts)
  self.list = torch.is_tensor(indices) and indices:totable() or indices
  self.generator = opts and opts.generator
end
function SubsetRandom:size() return #self.list end
function SubsetRandom:iter()
  local out = {}
  for k, p in ipairs(torch.randperm(#self.list, {generator = self.generator}):totable()) do out[k] = self.list[p] end
  return array_iter(out)
end

-- data.WeightedRandomSampler(weights, num_samples, {replacement=true, generator=}):
-- index i drawn with probability proportional to weights[i].
local Weighted = torch.class('data.WeightedRandomSampler', 'data.Sampler')
function Weighted:__init(weights, num_samples, opts)
  opts = opts or {}
  self.weights = torch.is_tensor(weights) and weights:double() or torch.tensor(weights, {dtype = 'float64'})
  self.num_samples = num_samples
  self.replacement = opts.replacement ~= false
  self.generator = opts.generator
  if math.type(num_samples) ~= 'integer' or num_samples < 1 then
    error('WeightedRandomSampler: num_samples must be a positive integer', 3)
  end
end
function Weighted:size() return self.num_samples end
function Weighted:iter()
  local draws = torch.multinomial(self.weights, self.num_samples, {replacement = self.replacement,
                                                                    generator = self.generator})
  return array_iter(draws:totable())
end

-- data.BatchSampler(sampler, batch_size, drop_last): Lua arrays of batch_size indices.
local BatchSampler = torch.class('data.BatchSampler', 'data.Sampler')
function BatchSampler:__init(sampler, batch_size, drop_last)
  if math.type(batch_size) ~= 'integer' or batch_size < 1 then
    error('BatchSampler: batch_size must be a positive integer, got ' .. tostring(batch_size), 3)
  end
  if not data.is_sampler(sampler) then
    error('BatchSampler: expected a sampler (with iter()) or a Lua array, got ' .. torch.type(sampler), 3)
  end
  self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last or false
end
BatchSampler.__tostring = function(self)
  return string.format('%s (%d batches of %d%s)', torch.typename(self), data.len(self), self.batch_size,
                       self.drop_last and ', drop_last' or '')
end
function BatchSampler:size()
  local n = data.len(self.sampler)
  if self.drop_last then return n // self.batch_size end
  return (n + self.batch_size - 1) // self.batch_size
end
function BatchSampler:iter()
  local it = data.sampler_iter(self.sampler)
  return function()
    local batch = {}
    for i in it do
      batch[#batch + 1] = i
      if #batch == self.batch_size then return batch end
    end
    if #batch > 0 and not self.drop_last then return batch end
  end
end

-- data.DistributedSampler(ds, {num_replicas=, rank=, shuffle=true, seed=0, drop_last=false}):
-- one rank's share of the indices: every num_replicas-th, starting at the rank's place,
-- after a shuffle that depends on seed + epoch (the same on every rank); padded by
-- repetition to equal shares, or cut to them with drop_last. rank is 0-based, 0 ..
-- num_replicas - 1, as the process ranks of mpirun and distributed.get_rank() are (the
-- one exception to 1-based numbering: a rank names a process, not a position). Both
-- default to the process group's (world size and rank) once distributed is initialized,
-- else to 1 and 0.
local function whole(v) return math.type(v) == 'integer' or (type(v) == 'number' and v == math.floor(v)) end
local Distributed = torch.class('data.DistributedSampler', 'data.Sampler')
function Distributed:__init(ds, opts)
  opts = opts or {}
  self.n = type(ds) == 'number' and ds or data.len(ds)
  local dist = package.loaded.distributed
  local grouped = type(dist) == 'table' and type(dist.is_initialized) == 'function' and dist.is_initialized()
  self.num_replicas = opts.num_replicas or (grouped and dist.get_world_size()) or 1
  self.rank = opts.rank or (grouped and dist.get_rank()) or 0
  if not whole(self.num_replicas) or self.num_replicas < 1 then
    error(string.format('data.DistributedSampler: num_replicas must be a positive integer, got %s',
                        tostring(self.num_replicas)), 3)
  end
  if not whole(self.rank) or self.rank < 0 or self.rank > self.num_replicas - 1 then
    error(string.format('data.DistributedSampler: rank %s out of range 0..%d (ranks are 0-based, as mpirun\'s '
                        .. 'and distributed.get_rank()\'s)', tostring(self.rank), self.num_replicas - 1), 3)
  end
  self.num_replicas, self.rank = math.tointeger(self.num_replicas), math.tointeger(self.rank)
  self.shuffle = opts.shuffle ~= false
  self.seed, self.epoch, self.drop_last = opts.seed or 0, 0, opts.drop_last or false
  if self.drop_last then self.num_samples = self.n // self.num_replicas
  else self.num_samples = (self.n + self.num_replicas - 1) // self.num_replicas end
  self.total_size = self.num_samples * self.num_replicas
end
-- sampler:set_epoch(e): a different shuffle each epoch, the same on every rank
function Distributed:set_epoch(e) self.epoch = e end
function Distributed:size() return self.num_samples end
function Distributed:iter()
  local order
  if self.shuffle then
    local g = torch.Generator()
    g:manual_seed(self.seed + self.epoch)
    order = torch.randperm(self.n, {generator = g}):totable()
  else
    order = {}
    for i = 1, self.n do order[i] = i end
  end
  local k = 1
  while #order < self.total_size do order[#order + 1] = order[k]; k = k + 1 end
  local mine = {}
  for i = self.rank + 1, self.total_size, self.num_replicas do mine[#mine + 1] = order[i] end
  return array_iter(mine)
end

return data
