-- Datasets: map-style (#ds and ds:get(i), 1-based) and iterable
-- (ds:iter()); TensorDataset, ConcatDataset, Subset, random_split, IDX files
-- (MNIST, FashionMNIST) and memory-mapped token files.
local torch = require 'torch'
local data = require 'data'

-- the length of any dataset: #ds, ds:size(), ds:__len()
function data.len(ds)
  local mt = getmetatable(ds)
  if mt and mt.__len then return mt.__len(ds) end
  if type(ds.size) == 'function' then return (ds:size()) end
  if type(ds.__len) == 'function' then return ds:__len() end
  return #ds
end

-- data.Dataset: the base of map-style datasets. Subclasses define
-- __len(self) (or size()) and get(self, i) for i in 1..#self; ds[i] is ds:get(i)
-- for i in 1..#ds and nil outside, as in a Lua array, so ipairs(ds) walks the
-- items; so do `for item in ds do` and pairs(ds) (i, item).
--   local MyData = data.Dataset:extend('MyData')   -- or torch.class('MyData', 'data.Dataset')
local Dataset = torch.class('data.Dataset')
Dataset.__len = function(self) return (self:size()) end
-- print(ds): its class and length (printing never reads the items)
Dataset.__tostring = function(self)
  local ok, n = pcall(data.len, self)
  return string.format('%s (%s items)', torch.typename(self), ok and tostring(n) or '?')
end
function Dataset:size() error(torch.typename(self) .. ': define __len or size()', 2) end
function Dataset:get() error(torch.typename(self) .. ': define get(i)', 2) end

-- an integer key is an item, nil outside 1..#ds (torch.class would make
-- __index the class table, which never calls get); other keys are the class's
local function read(self, i)
  if i >= 1 and i <= data.len(self) then return self:get(i) end
  return nil
end
data._iterable(Dataset, {
  read = read,
  start = function(self)
    local i, n = 0, data.len(self)
    return function()
      i = i + 1
      if i <= n then return self:get(i) end
    end
  end,
  pairs = function(self)
    local n = data.len(self)
    return function(_, i)
      i = i + 1
      if i <= n then return i, self:get(i) end
    end, self, 0
  end,
  noun = 'dataset', var = 'ds', item = 'item', items = 'items', iter_form = 'for i, item in ipairs(ds) do',
  ipairs_form = 'for i, item in ipairs(ds) do',
  call_form = 'for item in ds do',
})

-- data.Dataset:extend(name): a new dataset class, as subclassing
-- torch.utils.data.Dataset in PyTorch (optim.Optimizer:extend's form;
-- torch.class('MyData', 'data.Dataset') works as well):
--   local Squares = data.Dataset:extend('Squares')
--   function Squares:__init(n) self.n = n end
--   function Squares:size() return self.n end
--   function Squares:get(i) return i * i end
function Dataset:extend(name) return data._extend(self, name) end

-- item i of any map-style dataset: ds:get(i), else ds[i]
function data.item(ds, i)
  if type(ds.get) == 'function' then return ds:get(i) end
  return ds[i]
end

-- data.IterableDataset: subclasses define iter() returning a Lua iterator of samples;
-- `for x in ds do`, ipairs(ds) and pairs(ds) (i, x) stream them as well.
local IterableDataset = torch.class('data.IterableDataset')
function IterableDataset:iter() error(torch.typename(self) .. ': define iter()', 2) end
IterableDataset.__tostring = function(self) return torch.typename(self) .. ' (iterable)' end
data._iterable(IterableDataset, {
  start = function(self) return self:iter() end,
  pairs = function(self)
    local it, i = self:iter(), 0
    return function()
      local x = it()
      if x == nil then return nil end
      i = i + 1
      return i, x
    end
  end,
  noun = 'dataset', var = 'ds', item = 'item', items = 'items', iter_form = 'for x in ds:iter() do',
  ipairs_form = 'for i, x in ipairs(ds) do',
  call_form = 'for x in ds do',
})
-- data.IterableDataset:extend(name): a new iterable dataset class (its iter() gives the samples).
function IterableDataset:extend(name) return data._extend(self, name) end

local function check_index(name, i, n)
  if math.type(i) ~= 'integer' or i < 1 or i > n then
    error(string.format('%s: index %s out of range 1..%d', name, tostring(i), n), 3)
  end
end

-- data.TensorDataset(t1, t2, ...): sample i is {t1[i], t2[i], ...} (1-D tensors give
-- numbers); all tensors share their first dim. Whole batches come from index_select.
local TensorDataset, DatasetBase = torch.class('data.TensorDataset', 'data.Dataset')
function TensorDataset:__init(...)
  self.tensors = {...}
  if #self.tensors == 0 then error('data.TensorDataset: give at least one tensor', 3) end
  local n = self.tensors[1]:size(1)
  for i, t in ipairs(self.tensors) do
    if not torch.is_tensor(t) or t:dim() == 0 or t:size(1) ~= n then
      error(string.format('data.TensorDataset: tensor %d has size %s, expected %d rows', i,
                          torch.is_tensor(t) and tostring(t:size()) or type(t), n), 3)
    end
  end
  self.n = n
end
function TensorDataset:size() return self.n end
TensorDataset.__len = TensorDataset.size
function TensorDataset:get(i)
  check_index('TensorDataset', i, self.n)
  local out = {}
  for k, t in ipairs(self.tensors) do out[k] = t[i] end
  return out
end
-- ds:get_batch(indices): {t1 rows, t2 rows, ...} for an int64 tensor of indices
function TensorDataset:get_batch(idx)
  local out = {}
  for k, t in ipairs(self.tensors) do out[k] = t:index_select(1, idx) end
  return out
end

-- data.ConcatDataset({ds1, ds2, ...}): the datasets one after the other.
local ConcatDataset = torch.class('data.ConcatDataset', 'data.Dataset')
function ConcatDataset:__init(list)
  self.datasets, self.ends = list, {}
  local total = 0
  for i, d in ipairs(list) do
    total = total + data.len(d)
    self.ends[i] = total
  end
  self.n = total
end
function ConcatDataset:size() return self.n end
ConcatDataset.__len = ConcatDataset.size
function ConcatDataset:get(i)
  check_index('ConcatDataset', i, self.n)
  local lo = 1
  for k, e in ipairs(self.ends) do
    if i <= e then return data.item(self.datasets[k], i - (lo - 1)) end
    lo = e + 1
  end
end

-- data.Subset(ds, indices): the items of ds at indices (a Lua array or int64 tensor).
local Subset = torch.class('data.Subset', 'data.Dataset')
function Subset:__init(ds, indices)
  self.dataset = ds
  self.indices = torch.is_tensor(indices) and indices:totable() or indices
end
function Subset:size() return #self.indices end
Subset.__len = Subset.size
function Subset:get(i)
  check_index('Subset', i, #self.indices)
  return data.item(self.dataset, self.indices[i])
end
function Subset:get_batch(idx)
  if type(self.dataset.get_batch) ~= 'function' then return nil end
  local map = rawget(self, '_index_tensor')            -- made once: an epoch asks for it every batch
  if not map then
    map = torch.tensor(self.indices, {dtype = 'int64'})
    rawset(self, '_index_tensor', map)
  end
  return self.dataset:get_batch(map:index_select(1, idx))
end

-- data.random_split(ds, lengths, {generator=}): Subsets of the given lengths (or
-- fractions summing to 1) over a random permutation.
function data.random_split(ds, lengths, opts)
  local n = data.len(ds)
  local sizes, total = {}, 0
  local fractions = true
  for _, l in ipairs(lengths) do if l >= 1 or math.type(l) == 'integer' then fractions = false end end
  if fractions then
    for i, f in ipairs(lengths) do sizes[i] = math.floor(n * f) end
    local rest = n
    for _, s in ipairs(sizes) do rest = rest - s end
    for i = 1, rest do sizes[(i - 1) % #sizes + 1] = sizes[(i - 1) % #sizes + 1] + 1 end
  else
    for i, l in ipairs(lengths) do sizes[i] = l end
  end
  for _, s in ipairs(sizes) do total = total + s end
  if total ~= n then
    error(string.format('random_split: lengths sum to %d but the dataset has %d items', total, n), 2)
  end
  local perm = torch.randperm(n, {generator = opts and opts.generator}):totable()
  local out, pos = {}, 0
  for i, s in ipairs(sizes) do
    out[i] = data.Subset(ds, {table.unpack(perm, pos + 1, pos + s)})
    pos = pos + s
  end
  return out
end

-- data.read_idx(path): the tensor an IDX file (plain or .gz) holds, read in C.
function data.read_idx(path) return torch._read_idx(path) end

local FASHION_ROOT = '/usr/share/datasets/fashion-mnist'

local function find(root, names, cls)
  for _, n in ipairs(names) do
    for _, suffix in ipairs({'', '.gz'}) do
      local p = root .. '/' .. n .. suffix
      local f = io.open(p, 'rb')
      if f then f:close(); return p end
    end
  end
  local hint = ''
  if root == FASHION_ROOT then      -- the default root: say where the files come from
    hint = ", the default root: Debian's dataset-fashion-mnist package puts them there " ..
           "(apt-get install dataset-fashion-mnist, as scripts/deps.sh does), or give root= a directory that has them"
  end
  error(string.format('%s: none of %s(.gz) found in %s%s', cls, table.concat(names, ', '), root, hint), 4)
end

-- data.MNIST{root=, train=true, transform=, target_transform=}: images (uint8 28x28, or
-- what transform makes of them) and labels 1..10 (int64 numbers).
local MNIST = torch.class('data.MNIST', 'data.Dataset')
function MNIST:__init(opts)
  opts = opts or {}
  local root = opts.root or self.default_root
  if not root then error(torch.typename(self) .. ': give root=', 3) end
  local train = opts.train ~= false
  local prefix = train and 'train' or 't10k'
  local cls = torch.typename(self)
  self.images = torch._read_idx(find(root, {prefix .. '-images-idx3-ubyte', prefix .. '-images.idx3-ubyte'}, cls))
  self.labels = torch._read_idx(find(root, {prefix .. '-labels-idx1-ubyte', prefix .. '-labels.idx1-ubyte'}, cls))
  if self.images:size(1) ~= self.labels:size(1) then
    error(string.format('%s: %d images but %d labels in %s', torch.typename(self), self.images:size(1),
                        self.labels:size(1), root), 3)
  end
  self.targets = self.labels:long() + 1                  -- 1-based classes
  self.transform, self.target_transform = opts.transform, opts.target_transform
  self.train = train
end
function MNIST:size() return (self.images:size(1)) end
MNIST.__len = MNIST.size
function MNIST:get(i)
  check_index(torch.typename(self), i, self:size())
  local img, target = self.images[i], self.targets[i]
  if self.transform then img = self.transform(img) end
  if self.target_transform then target = self.target_transform(target) end
  return {img, target}
end
-- a batch in one go when the transforms work on batches (ToTensor, Normalize, Compose of them)
function MNIST:get_batch(idx)
  if self.target_transform or (self.transform and not self.transform.batchable) then return nil end
  local img = self.images:index_select(1, idx)
  if self.transform then img = self.transform(img, true) end
  return {img, self.targets:index_select(1, idx)}
end

-- data.FashionMNIST{root=, train=true, transform=}: MNIST's format; root defaults to
-- Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist).
local FashionMNIST = torch.class('data.FashionMNIST', 'data.MNIST')
FashionMNIST.default_root = FASHION_ROOT
FashionMNIST.classes = {'T-shirt/top', 'Trouser', 'Pullover', 'Dress', 'Coat', 'Sandal', 'Shirt', 'Sneaker',
                        'Bag', 'Ankle boot'}

-- data.TokenDataset(path, {dtype='uint16'|'int32'|..., block_size=}): a flat file of
-- tokens, mapped (never read whole); item i is {x, y}: block_size tokens from position
-- i and the same shifted by one (int64), as a language model's token stream expects.
local TokenDataset = torch.class('data.TokenDataset', 'data.Dataset')
function TokenDataset:__init(path, opts)
  opts = opts or {}
  self.dtype = opts.dtype or 'uint16'
  self.block_size = opts.block_size or error('data.TokenDataset: give block_size', 3)
  local map_dtype = self.dtype == 'uint16' and 'int16' or self.dtype
  self.tokens = torch._map_file(path, map_dtype)
  self.n = self.tokens:size(1) - self.block_size
  if self.n < 1 then
    error(string.format('data.TokenDataset: %s holds %d tokens, fewer than block_size + 1 = %d', path,
                        self.tokens:size(1), self.block_size + 1), 3)
  end
end
function TokenDataset:size() return self.n end
TokenDataset.__len = TokenDataset.size
function TokenDataset:_window(i, len)
  local w = self.tokens:narrow(1, i, len):long()
  if self.dtype == 'uint16' then w = (w + 65536) % 65536 end
  return w
end
function TokenDataset:get(i)
  check_index('TokenDataset', i, self.n)
  local w = self:_window(i, self.block_size + 1)
  return {w:narrow(1, 1, self.block_size), w:narrow(1, 2, self.block_size)}
end

return data
