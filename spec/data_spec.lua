-- data: datasets, samplers, collate, the DataLoader with worker processes,
-- IDX files and mapped token files, transforms, CmdLine.
local torch = require 'torch'
local data = require 'data'

local tmp = os.tmpname()
os.remove(tmp)
os.execute('mkdir -p ' .. tmp)
teardown(function() os.execute('rm -rf ' .. tmp) end)

local function write(path, bytes)
  local f = assert(io.open(path, 'wb'))
  f:write(bytes)
  f:close()
end

local th_bin = dofile('spec/support/th.lua').path

local function be32(n) return string.char((n >> 24) & 255, (n >> 16) & 255, (n >> 8) & 255, n & 255) end

local function batches(loader)
  local out = {}
  for i, b in loader:iter() do out[i] = b end
  return out
end

local function labels(list)
  local out = {}
  for _, b in ipairs(list) do for _, v in ipairs(b[2]:totable()) do out[#out + 1] = v end end
  return out
end

local x = torch.arange(0, 40):float():view(20, 2)
local y = torch.arange(1, 21, {dtype = 'int64'})
local ds = data.TensorDataset(x, y)

describe('datasets', function()
  it('TensorDataset, Subset, ConcatDataset and random_split', function()
    assert.are.equal(20, #ds)
    local item = ds:get(3)
    assert.are.same({4, 5}, item[1]:totable())
    assert.are.equal(3, item[2])
    local sub = data.Subset(ds, {5, 1})
    assert.are.equal(5, sub:get(1)[2])
    local cat = data.ConcatDataset({ds, sub})
    assert.are.equal(22, #cat)
    assert.are.equal(1, cat:get(22)[2])
    local parts = data.random_split(ds, {15, 5})
    assert.are.equal(15, #parts[1])
    local seen = {}
    for _, p in ipairs(parts) do for i = 1, #p do seen[p:get(i)[2]] = true end end
    for i = 1, 20 do assert.is_true(seen[i]) end
    assert.has_error(function() data.random_split(ds, {3, 4}) end)
    assert.has_error(function() ds:get(21) end)
  end)

  it('ds[i] is ds:get(i), in every map-style dataset, with methods and fields still read', function()
    local item = data.TensorDataset(torch.arange(0, 5), torch.arange(1, 6))[3]
    assert.are.same({2, 3}, item)
    assert.are.same(ds:get(20)[1]:totable(), ds[20][1]:totable())
    assert.is_nil(ds[21])
    assert.is_nil(ds[0])
    assert.are.equal(2, ds[2.0][2])
    assert.are.equal(20, ds.n)
    assert.are.equal('function', type(ds.get_batch))
    assert.are.equal(5, data.Subset(ds, {5, 1})[1][2])
    assert.are.equal(1, data.ConcatDataset({ds, data.Subset(ds, {5, 1})})[22][2])
    local Squares = torch.class('data.SpecSquares', 'data.Dataset')
    function Squares:__init(n) self.count = n end
    function Squares:size() return self.count end
    function Squares:get(i) return i * i end
    local sq = data.SpecSquares(4)
    assert.are.equal(9, sq[3])
    assert.are.equal(4, sq.count)
    local walked = {}
    for i, v in ipairs(sq) do walked[i] = v end
    assert.are.same({1, 4, 9, 16}, walked)
  end)

  it('reads IDX files, plain and gzip, and refuses truncated or corrupt ones', function()
    local body = string.char(0, 0, 0x08, 2) .. be32(2) .. be32(3) .. string.char(1, 2, 3, 4, 5, 250)
    write(tmp .. '/a.idx', body)
    local t = data.read_idx(tmp .. '/a.idx')
    assert.are.equal('uint8', t.dtype)
    assert.are.same({{1, 2, 3}, {4, 5, 250}}, t:totable())
    os.execute('env -u LD_PRELOAD gzip -c ' .. tmp .. '/a.idx > ' .. tmp .. '/a.idx.gz')
    assert.is_true(data.read_idx(tmp .. '/a.idx.gz'):equal(t))
    local ints = string.char(0, 0, 0x0C, 1) .. be32(2) .. be32(7) .. be32(0xFFFFFFFE)
    write(tmp .. '/i.idx', ints)
    assert.are.same({7, -2}, data.read_idx(tmp .. '/i.idx'):totable())
    write(tmp .. '/short.idx', body:sub(1, #body - 2))
    local ok, err = pcall(data.read_idx, tmp .. '/short.idx')
    assert.truthy(err:find('declares 6 values', 1, true) or err:find('truncated', 1, true), err)
    write(tmp .. '/magic.idx', 'PK' .. body:sub(3))
    ok, err = pcall(data.read_idx, tmp .. '/magic.idx')
    assert.truthy(err:find('not an IDX file', 1, true), err)
    write(tmp .. '/huge.idx', string.char(0, 0, 0x08, 2) .. be32(0x7fffffff) .. be32(0x7fffffff))
    ok, err = pcall(data.read_idx, tmp .. '/huge.idx')
    assert.truthy(err:find('declares', 1, true), err)
    local gz = io.open(tmp .. '/a.idx.gz', 'rb'):read('a')
    write(tmp .. '/cut.idx.gz', gz:sub(1, #gz - 12))
    ok, err = pcall(data.read_idx, tmp .. '/cut.idx.gz')
    assert.truthy(err:find('truncated', 1, true), err)
    local floats = string.char(0, 0, 0x0D, 1) .. be32(2) .. string.pack('>f>f', 1.5, -2.25)
    write(tmp .. '/f.idx', floats)
    local ft = data.read_idx(tmp .. '/f.idx')
    assert.are.equal('float32', ft.dtype)
    assert.are.same({1.5, -2.25}, ft:totable())
    write(tmp .. '/long.idx', body .. 'x')
    ok, err = pcall(data.read_idx, tmp .. '/long.idx')
    assert.truthy(err:find('data after', 1, true), err)
    write(tmp .. '/b.gz', '\31\139garbage-not-deflate')
    assert.is_false(pcall(data.read_idx, tmp .. '/b.gz'))
    assert.is_false(pcall(data.read_idx, tmp .. '/missing.idx'))
  end)

  it('maps a token file and reads the right windows without loading it', function()
    local bytes = {}
    for i = 0, 99 do bytes[#bytes + 1] = string.char(i, 0) end
    -- uint16 little-endian tokens 0..99, and one large token 65000 at the end
    write(tmp .. '/tok.bin', table.concat(bytes) .. string.char(65000 & 255, 65000 >> 8))
    local tok = data.TokenDataset(tmp .. '/tok.bin', {dtype = 'uint16', block_size = 8})
    assert.are.equal(101 - 8, #tok)
    local item = tok:get(3)
    assert.are.same({2, 3, 4, 5, 6, 7, 8, 9}, item[1]:totable())
    assert.are.same({3, 4, 5, 6, 7, 8, 9, 10}, item[2]:totable())
    assert.are.equal(65000, tok:get(#tok)[2][8])
    assert.are.equal('int64', item[1].dtype)
    -- the tokens are a mapping of the file, not a copy in memory
    local maps = io.open('/proc/self/maps'):read('a')
    assert.truthy(maps:find(tmp .. '/tok.bin', 1, true))
    assert.has_error(function() data.TokenDataset(tmp .. '/tok.bin', {block_size = 101}) end)
  end)

  it("FashionMNIST from Debian's dataset-fashion-mnist", function()
    local f = io.open('/usr/share/datasets/fashion-mnist/t10k-labels-idx1-ubyte.gz')
    if not f then
      pending('dataset-fashion-mnist is not installed: FashionMNIST not checked')
      return
    end
    f:close()
    local T = data.transforms
    local test = data.FashionMNIST{train = false, transform = T.Compose{T.ToTensor(), T.Normalize(0.5, 0.5)}}
    assert.are.equal(10000, #test)
    local img, label = table.unpack(test:get(1))
    assert.are.same({1, 28, 28}, img:size():totable())
    assert.are.equal(10, label)                     -- ankle boot, 1-based
    local b = test:get_batch(torch.tensor({1, 2}))
    assert.are.same({2, 1, 28, 28}, b[1]:size():totable())
    assert.is_true(b[1][1]:equal(img))
    local raw = data.FashionMNIST{train = false}
    assert.are.equal('uint8', raw:get(1)[1].dtype)
  end)
end)

describe('samplers', function()
  it('give the index streams PyTorch gives, 1-based', function()
    assert.are.same({1, 2, 3}, data.SequentialSampler(3):indices())
    local g = torch.Generator()
    g:manual_seed(1)
    local perm = data.RandomSampler(5, {generator = g}):indices()
    table.sort(perm)
    assert.are.same({1, 2, 3, 4, 5}, perm)
    assert.are.equal(12, #data.RandomSampler(5, {replacement = true, num_samples = 12}):indices())
    local sub = data.SubsetRandomSampler({4, 8, 9}):indices()
    table.sort(sub)
    assert.are.same({4, 8, 9}, sub)
    local w = data.WeightedRandomSampler({0, 0, 1}, 5):indices()
    assert.are.same({3, 3, 3, 3, 3}, w)
    local bs = data.BatchSampler(data.SequentialSampler(7), 3, false)
    assert.are.same({{1, 2, 3}, {4, 5, 6}, {7}}, bs:indices())
    assert.are.equal(2, #data.BatchSampler(data.SequentialSampler(7), 3, true))
  end)

  it('RandomSampler chains permutations past #ds without replacement, as PyTorch', function()
    local g = torch.Generator()
    g:manual_seed(3)
    local s = data.RandomSampler(6, {num_samples = 8, generator = g})
    assert.are.equal(8, #s)
    local idx = s:indices()
    assert.are.equal(8, #idx)
    local first = {table.unpack(idx, 1, 6)}
    table.sort(first)
    assert.are.same({1, 2, 3, 4, 5, 6}, first)
    assert.are_not.equal(idx[7], idx[8])
    local counts = {}
    for _, i in ipairs(data.RandomSampler(3, {num_samples = 9}):indices()) do counts[i] = (counts[i] or 0) + 1 end
    assert.are.same({3, 3, 3}, counts)
    assert.are.same({}, data.RandomSampler(0):indices())
    assert.has_error(function() data.RandomSampler(0, {num_samples = 2}) end)
  end)

  it('RandomSampler reads its permutation from a tensor, building no Lua table per index', function()
    local s = data.RandomSampler(1000000)
    collectgarbage('collect')
    local before = collectgarbage('count')
    local it = s:iter()
    local first = it()
    local grown = collectgarbage('count') - before
    assert.is_true(first >= 1 and first <= 1000000)
    assert.is_true(grown < 1024, string.format('iter() grew the Lua heap by %.0f KB', grown))
  end)

  it('DistributedSampler splits evenly, pads, and reshuffles per epoch identically on every rank', function()
    -- PyTorch's DistributedSampler(range(10), num_replicas=3, rank=0 / 1, shuffle=False) gives
    -- [0, 3, 6, 9] / [1, 4, 7, 0]: the same indices here, 1-based, at the same 0-based ranks
    local a = data.DistributedSampler(10, {num_replicas = 3, rank = 0, shuffle = false}):indices()
    local b = data.DistributedSampler(10, {num_replicas = 3, rank = 1, shuffle = false}):indices()
    assert.are.same({1, 4, 7, 10}, a)
    assert.are.same({2, 5, 8, 1}, b)
    -- drop_last: [0, 3, 6] and [2, 5, 8]
    assert.are.same({3, 6, 9}, data.DistributedSampler(10, {num_replicas = 3, rank = 2, shuffle = false,
                                                            drop_last = true}):indices())
    -- shards of a dataset that divides evenly are disjoint and cover it, shuffled or not
    for _, shuffle in ipairs({false, true}) do
      local seen = {}
      for rank = 0, 3 do
        for _, i in ipairs(data.DistributedSampler(12, {num_replicas = 4, rank = rank, shuffle = shuffle}):indices()) do
          assert.is_nil(seen[i], 'index ' .. i .. ' in two shards')
          seen[i] = rank
        end
      end
      for i = 1, 12 do assert.is_not_nil(seen[i], 'index ' .. i .. ' in no shard') end
    end
    assert.has_error(function() data.DistributedSampler(10, {num_replicas = 2, rank = 2}) end)
    local ok, err = pcall(data.DistributedSampler, 10, {num_replicas = 2, rank = -1})
    assert.is_false(ok)
    assert.truthy(err:find('out of range 0..1 (ranks are 0-based', 1, true), err)
    assert.are.same({1, 2, 3}, data.DistributedSampler(3, {shuffle = false}):indices())   -- one replica, rank 0
    local r1 = data.DistributedSampler(10, {num_replicas = 2, rank = 0})
    local r2 = data.DistributedSampler(10, {num_replicas = 2, rank = 1})
    local all = {}
    for _, v in ipairs(r1:indices()) do all[#all + 1] = v end
    for _, v in ipairs(r2:indices()) do all[#all + 1] = v end
    table.sort(all)
    assert.are.same({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, all)
    local e0 = r1:indices()
    r1:set_epoch(1)
    assert.are_not.same(e0, r1:indices())
  end)
end)

describe('collate', function()
  it('stacks tensors, batches numbers and recurses into tables', function()
    local b = data.default_collate({{x = torch.ones(2), y = 1, n = 'a', f = 0.5, ok = true},
                                     {x = torch.zeros(2), y = 2, n = 'b', f = 1.5, ok = false}})
    assert.are.same({2, 2}, b.x:size():totable())
    assert.are.equal('int64', b.y.dtype)
    assert.are.equal('float32', b.f.dtype)
    assert.are.equal('bool', b.ok.dtype)
    assert.are.same({'a', 'b'}, b.n)
    assert.has_error(function() data.default_collate({{torch.ones(2)}, {torch.ones(3)}}) end)
    local nested = data.default_collate({{torch.ones(3), {mask = torch.zeros(2, {dtype = 'bool'}), len = 3}},
                                         {torch.zeros(3), {mask = torch.ones(2, {dtype = 'bool'}), len = 1}}})
    assert.are.same({2, 3}, nested[1]:size():totable())
    assert.are.same({{false, false}, {true, true}}, nested[2].mask:totable())
    assert.are.same({3, 1}, nested[2].len:totable())
    assert.has_error(function() data.default_collate({{a = 1}, {b = 2}}) end)
  end)
end)

describe('DataLoader', function()
  it('batches, drops the last partial batch, and shuffles with a generator', function()
    local l = data.DataLoader(ds, {batch_size = 6})
    assert.are.equal(4, #l)
    local bs = batches(l)
    assert.are.same({6, 2}, bs[1][1]:size():totable())
    assert.are.equal(2, bs[4][1]:size(1))
    assert.are.equal(3, #batches(data.DataLoader(ds, {batch_size = 6, drop_last = true})))
    local g = torch.Generator()
    g:manual_seed(5)
    local shuffled = labels(batches(data.DataLoader(ds, {batch_size = 4, shuffle = true, generator = g})))
    local sorted = {table.unpack(shuffled)}
    table.sort(sorted)
    assert.are_not.same(sorted, shuffled)
    assert.are.same(labels(batches(data.DataLoader(ds, {batch_size = 4}))), sorted)
  end)

  it('takes plain Lua arrays as sampler and batch_sampler, as PyTorch takes any iterable', function()
    local l = data.DataLoader(ds, {sampler = {3, 1, 2}})
    assert.are.equal(3, #l)
    assert.are.same({3, 1, 2}, labels(batches(l)))
    l = data.DataLoader(ds, {sampler = {3, 1, 2}, batch_size = 2})
    assert.are.equal(2, #l)
    assert.are.same({3, 1, 2}, labels(batches(l)))
    l = data.DataLoader(ds, {batch_sampler = {{1, 2}, {9, 10, 3}}})
    assert.are.equal(2, #l)
    local bs = batches(l)
    assert.are.same({1, 2}, bs[1][2]:totable())
    assert.are.same({9, 10, 3}, bs[2][2]:totable())
    assert.are.same({{4, 5}, {1, 2}}, data.BatchSampler({4, 5, 1, 2}, 2):indices())
    assert.has_error(function() data.DataLoader(ds, {sampler = 5}) end,
                     'DataLoader: sampler must be a sampler (with iter()) or a Lua array, got number')
  end)

  it('gives the same batches in the same order with 0, 1 or 2 workers', function()
    local plain = labels(batches(data.DataLoader(ds, {batch_size = 3})))
    for _, nw in ipairs({1, 2}) do
      assert.are.same(plain, labels(batches(data.DataLoader(ds, {batch_size = 3, num_workers = nw}))))
    end
    local function shuffled(nw)
      local g = torch.Generator()
      g:manual_seed(9)
      return labels(batches(data.DataLoader(ds, {batch_size = 3, shuffle = true, generator = g, num_workers = nw})))
    end
    assert.are.same(shuffled(0), shuffled(1))
    assert.are.same(shuffled(0), shuffled(2))
    -- shuffled by the global generator: the workers draw nothing from it
    local function global(nw)
      torch.manual_seed(4)
      local got = labels(batches(data.DataLoader(ds, {batch_size = 3, shuffle = true, num_workers = nw})))
      return got, torch.rand(1)[1]
    end
    local order0, after0 = global(0)
    local order2, after2 = global(2)
    assert.are.same(order0, order2)
    assert.are.equal(after0, after2)
  end)

  it('splits an iterable dataset among workers that shard it with get_worker_info', function()
    local Stream = torch.class('data.SpecStream', 'data.IterableDataset')
    function Stream:iter()
      local info = data.get_worker_info()
      local i, step = info and info.id or 1, info and info.num_workers or 1
      i = i - step
      return function()
        i = i + step
        if i <= 10 then return {torch.ones(2) * i, i} end
      end
    end
    local function values(nw, opts)
      opts = opts or {}
      opts.num_workers = nw
      local out = {}
      for _, b in data.DataLoader(Stream(), opts):iter() do
        if opts.batch_size == false then out[#out + 1] = b[2]
        else out[#out + 1] = b[2]:totable() end
      end
      return out
    end
    assert.are.same({{1, 2, 3, 4}, {5, 6, 7, 8}, {9, 10}}, values(0, {batch_size = 4}))
    -- worker 1 has 1, 3, 5, 7, 9 and worker 2 has 2, 4, 6, 8, 10: batches alternate
    assert.are.same({{1, 3, 5}, {2, 4, 6}, {7, 9}, {8, 10}}, values(2, {batch_size = 3}))
    assert.are.same({{1, 3, 5}, {2, 4, 6}}, values(2, {batch_size = 3, drop_last = true}))
    assert.are.same({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, values(2, {batch_size = false}))
    local l = data.DataLoader(Stream(), {batch_size = 4, num_workers = 2, persistent_workers = true})
    local first = {}
    for _, b in l:iter() do first[#first + 1] = b[2]:totable() end
    local second = {}
    for _, b in l:iter() do second[#second + 1] = b[2]:totable() end
    l:shutdown()
    assert.are.same(first, second)
    assert.has_error(function() data.DataLoader(Stream(), {shuffle = true}) end)
    assert.has_error(function() return #data.DataLoader(Stream()) end)
  end)

  it('refuses unknown options and bad values', function()
    local ok, err = pcall(data.DataLoader, ds, {batchsize = 4})
    assert.is_false(ok)
    assert.truthy(err:find("unknown option 'batchsize'", 1, true), err)
    assert.has_error(function() data.DataLoader(ds, {num_workers = -1}) end)
    assert.has_error(function() data.DataLoader(ds, {batch_size = 0}) end)
    assert.has_error(function() data.DataLoader(ds, {sampler = data.SequentialSampler(ds), shuffle = true}) end)
    assert.are.equal(10, #data.DataLoader(ds, {batch_size = 2, pin_memory = true}))
    assert.are.equal(20, #data.DataLoader(ds, {batch_size = false}))
  end)

  it('workers build batches from any dataset, seeded apart, with worker_init_fn', function()
    local D = torch.class('data.SpecWorkerDS', 'data.Dataset')
    function D:size() return 8 end
    function D:get(i)
      local info = data.get_worker_info()
      return {v = torch.rand(1), id = info and info.id or 0, i = i}
    end
    local l = data.DataLoader(D(), {batch_size = 2, num_workers = 2,
                                    worker_init_fn = function(id) assert(id == 1 or id == 2) end})
    local bs = batches(l)
    assert.are.equal(4, #bs)
    assert.are.same({1, 1}, bs[1].id:totable())
    assert.are.same({2, 2}, bs[2].id:totable())
    assert.are_not.equal(bs[1].v[1][1], bs[2].v[1][1])     -- distinct seeds
    assert.are.same({7, 8}, bs[4].i:totable())
  end)

  it('names the worker and the dataset error; a dying or silent worker raises, never hangs', function()
    local Bad = torch.class('data.SpecBadDS', 'data.Dataset')
    function Bad:size() return 6 end
    function Bad:get(i)
      if i == 5 then error('cannot read item 5') end
      return {torch.ones(1) * i}
    end
    local ok, err = pcall(batches, data.DataLoader(Bad(), {batch_size = 2, num_workers = 2}))
    assert.is_false(ok)
    assert.truthy(err:find('DataLoader worker 1 %(pid %d+%)'), err)
    assert.truthy(err:find('cannot read item 5', 1, true), err)
    local Dying = torch.class('data.SpecDyingDS', 'data.Dataset')
    function Dying:size() return 4 end
    function Dying:get(i) if i == 3 then os.exit(7) end return {i} end
    ok, err = pcall(batches, data.DataLoader(Dying(), {batch_size = 1, num_workers = 2}))
    assert.is_false(ok)
    assert.truthy(err:find('exited with status 7', 1, true) or err:find('closed its connection', 1, true), err)
    local Slow = torch.class('data.SpecSlowDS', 'data.Dataset')
    function Slow:size() return 2 end
    function Slow:get(i)
      if i == 2 then local t0 = torch.clock(); while torch.clock() - t0 < 3 do end end   -- busy for 3 s
      return {i}
    end
    local t0 = torch.clock()
    ok, err = pcall(batches, data.DataLoader(Slow(), {batch_size = 1, num_workers = 1, timeout = 0.5}))
    assert.is_false(ok)
    assert.truthy(err:find('timed out after 0.5 s', 1, true), err)
    assert.is_true(torch.clock() - t0 < 2.5)
    local Killed = torch.class('data.SpecKilledDS', 'data.Dataset')
    function Killed:size() return 4 end
    function Killed:get(i) if i == 2 then torch._kill(torch._getpid(), 9) end return {i} end
    ok, err = pcall(batches, data.DataLoader(Killed(), {batch_size = 1, num_workers = 2}))
    assert.is_false(ok)
    assert.truthy(err:find('DataLoader worker 2 %(pid %d+%) was killed by signal 9'), err)
    ok, err = pcall(batches, data.DataLoader(ds, {num_workers = 1, worker_init_fn = function() error('no GPU here') end}))
    assert.is_false(ok)
    assert.truthy(err:find('DataLoader worker 1 %(pid %d+%): worker_init_fn: .*no GPU here'), err)
  end)

  it('seeds workers apart, afresh each epoch, and reproducibly from torch.manual_seed', function()
    local R = torch.class('data.SpecRandDS', 'data.Dataset')
    function R:size() return 4 end
    function R:get(i) return {torch.rand(1)[1], data.get_worker_info().seed} end
    local function epochs()
      torch.manual_seed(11)
      local l = data.DataLoader(R(), {batch_size = 2, num_workers = 2})
      local a, b = batches(l), batches(l)
      return {a[1][1]:totable(), a[2][1]:totable(), b[1][1]:totable()}, a[1][2][1], a[2][2][1]
    end
    local run1, seed1, seed2 = epochs()
    assert.are_not.equal(seed1, seed2)
    assert.are_not.same(run1[1], run1[2])          -- two workers
    assert.are_not.same(run1[1], run1[3])          -- two epochs
    assert.are.same(run1, (epochs()))              -- the same seed, the same numbers
  end)

  it('hands batches over in shared memory and leaves none of it behind', function()
    local function shared()
      local n = 0
      local f = io.open('/proc/self/maps')
      for line in f:lines() do if line:find('moontorch-batch', 1, true) then n = n + 1 end end
      f:close()
      return n
    end
    collectgarbage(); collectgarbage()
    local before = shared()
    local got = batches(data.DataLoader(ds, {batch_size = 5, num_workers = 2}))
    assert.are.equal(4, #got)
    assert.is_true(shared() >= before + 1)        -- the batches view mapped memory
    assert.are.same({10, 11}, got[2][1][1]:totable())
    got = nil
    collectgarbage(); collectgarbage()
    assert.are.equal(before, shared())
  end)

  it('keeps persistent workers across epochs and leaves no zombie processes', function()
    local l = data.DataLoader(ds, {batch_size = 5, num_workers = 2, persistent_workers = true})
    local first = labels(batches(l))
    local pids = {}
    for _, w in ipairs(rawget(l, '_workers')) do pids[#pids + 1] = w.pid end
    assert.are.same(first, labels(batches(l)))
    local again = {}
    for _, w in ipairs(rawget(l, '_workers')) do again[#again + 1] = w.pid end
    assert.are.same(pids, again)
    l:shutdown()
    for _, pid in ipairs(pids) do assert.are.equal('gone', (torch._waitpid(pid, false))) end
    -- a loop left early: the workers are reaped when the iterator is collected
    local l2 = data.DataLoader(ds, {batch_size = 2, num_workers = 2})
    for i in l2:iter() do if i == 2 then break end end
    -- a persistent loader left early, then collected
    local l3 = data.DataLoader(ds, {batch_size = 2, num_workers = 2, persistent_workers = true})
    for i in l3:iter() do if i == 1 then break end end
    assert.are.same(labels(batches(data.DataLoader(ds, {batch_size = 2}))), labels(batches(l3)))
    l3 = nil
    collectgarbage(); collectgarbage()
    -- the children of this process and their states, from /proc (no external program)
    local pid = torch._getpid()
    local f = io.open(string.format('/proc/%d/task/%d/children', pid, pid))
    local kids = f and f:read('a') or ''
    if f then f:close() end
    for child in kids:gmatch('%d+') do
      local st = io.open('/proc/' .. child .. '/stat')
      local line = st and st:read('l') or ''
      if st then st:close() end
      assert.falsy(line:match('^%d+ %b() Z'), 'a zombie worker: ' .. line)
    end
  end)
end)

describe('transforms, progress and CmdLine', function()
  it('ToTensor, Normalize, flips and crops', function()
    local T = data.transforms
    local img = torch.tensor({{0, 255}, {51, 102}}, {dtype = 'uint8'})
    local t = T.ToTensor()(img)
    assert.are.same({1, 2, 2}, t:size():totable())
    assert.are.equal(1, t[1][1][2])
    local n = T.Normalize(0.5, 0.25)(t)
    assert.are.equal(2, n[1][1][2])
    assert.are.equal(1, t[1][1][2])                    -- the input is left as it was
    -- a batch, per channel: (x - mean) / std
    local batch = torch.tensor({{{{0.5, 1}}, {{0, 0.25}}}, {{{1, 0}}, {{0.75, 1}}}})   -- 2 x 2 x 1 x 2
    local nb = T.Normalize({0.5, 0.25}, {0.5, 0.25})(batch, true)
    assert.are.same({{{{0, 1}}, {{-1, 0}}}, {{{1, -1}}, {{2, 3}}}}, nb:totable())
    assert.has_error(function() T.Normalize(0.5, 0.5)(torch.tensor({1, 2})) end,
                     'Normalize: expected a floating-point tensor (ToTensor first), got int64')
    torch.manual_seed(1)
    local flipped = T.RandomHorizontalFlip(1)(t)
    assert.are.equal(0, flipped[1][1][2])
    local crop = T.RandomCrop(2, {padding = 1})(t)
    assert.are.same({1, 2, 2}, crop:size():totable())
    assert.has_error(function() T.RandomCrop(5)(t) end)
  end)

  it('CmdLine parses options with their defaults and types', function()
    local cmd = torch.CmdLine()
    cmd:text('training')
    cmd:option('--epochs', 10, 'epochs')
    cmd:option('--batch-size', 64, 'batch size')
    cmd:option('--name', 'run', 'name')
    cmd:option('--cuda', false, 'use a GPU')
    local opt = cmd:parse({'--epochs', '3', '--batch-size=32', '--cuda'})
    assert.are.equal(3, opt.epochs)
    assert.are.equal(32, opt.batch_size)
    assert.are.equal('run', opt.name)
    assert.is_true(opt.cuda)
    assert.has_error(function() cmd:parse({'--nope'}) end)
    assert.has_error(function() cmd:parse({'--epochs', 'many'}) end)
  end)

  it('the progress bar prints plain lines when output is not a terminal', function()
    local th = th_bin()
    local p = io.popen(th .. [[ -e "require 'data'; for i = 1, 20 do torch.progress(i, 20, {text = 'loss 0.5'}) end" | cat]])
    local out = p:read('a')
    p:close()
    assert.truthy(out:find(' 20/20 (100%)', 1, true), out)
    assert.truthy(out:find('loss 0.5', 1, true), out)
    assert.falsy(out:find('\r', 1, true))
    p = io.popen(th .. [[ -e "require 'data'; local l = data.DataLoader(data.TensorDataset(torch.ones(30, 2)), {batch_size = 3}); local loss = 0; for i, b in torch.progress(l, {text = function() return 'loss ' .. loss end}) do loss = i end" | cat]])
    out = p:read('a')
    p:close()
    assert.truthy(out:find(' 10/10 (100%)', 1, true), out)
    assert.truthy(out:find('loss 10', 1, true), out)
  end)

  it('the progress rate counts only the steps timed (a fake clock, 0.5 s a step)', function()
    local th = th_bin()
    -- called every 5 steps from step 5 (as the example calls it every 50), then wrapping an iterator
    local script = "require 'data'; local t = 0; torch.clock = function() return t end; " ..
                   "for i = 5, 40, 5 do t = i / 2; torch.progress(i, 40) end; " ..
                   "local k = 0; for _ in torch.progress(function() t = t + 0.5; k = k + 1; if k <= 5 then return k end end, 5) do end"
    local p = io.popen(th .. ' -e "' .. script .. '" | cat')
    local out = p:read('a')
    p:close()
    local lines = 0
    for rate, eta in out:gmatch('([%d.]+) it/s  [%d:]+ elapsed, ([%d:?]+) left') do
      lines = lines + 1
      if eta ~= '?' then assert.are.equal('2.0', rate, out) end     -- (the first call: no rate yet)
    end
    assert.are.equal(13, lines, out)
    assert.truthy(out:find(' 10/40 (25%)  2.0 it/s  0:03 elapsed, 0:15 left', 1, true), out)
  end)

  it('the code blocks of docs/data.md run, on a small synthetic loader', function()
    local f = assert(io.open('docs/data.md', 'r'))
    local text = f:read('a')
    f:close()
    local prelude = "local nn, data = require 'nn', require 'data'; torch.manual_seed(1); " ..
                    "local model, criterion = nn.Linear(2, 3), nn.CrossEntropyLoss(); " ..
                    "local loader = data.DataLoader(data.TensorDataset(torch.randn(8, 2), " ..
                    "torch.randint(1, 4, {8}, {dtype = 'int64'})), {batch_size = 2}); " ..
                    "local function train_step(b) return criterion(model(b[1]), b[2]):item() end\n"
    local blocks = 0
    for code in text:gmatch('```lua[^\n]*\n(.-)```') do
      blocks = blocks + 1
      local path = tmp .. '/doc_block' .. blocks .. '.lua'
      write(path, prelude .. code .. "\nprint('block ran')\n")
      local p = io.popen(th_bin() .. ' ' .. path .. ' 2>&1 | cat')
      local out = p:read('a')
      p:close()
      assert.truthy(out:find('block ran', 1, true), out)
    end
    assert.are.equal(3, blocks)
  end)
end)
