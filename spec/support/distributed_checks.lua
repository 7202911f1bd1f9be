-- spec/support/distributed_checks.lua: what spec/distributed_spec.lua runs
-- on every rank under mpirun (not a spec itself): th distributed_checks.lua MODE
--   main      every collective against its definition, on every dtype, and the
--             errors, mismatched calls across ranks among them
--   debug     the same, run with TH_DISTRIBUTED_DEBUG=1 (the mismatch errors say more)
--   timeout   init_process_group{timeout=1}; rank 0 calls all_reduce, the others skip
--             it: rank 0 reports the timeout and ends, and mpirun stops the others
-- Each check prints "CHECK <name> <rank> ok" or "CHECK <name> <rank> FAIL <why>";
-- the spec looks for every name it expects on every rank. Expected values come
-- from each collective's definition over values that depend on the rank.
local torch = require 'torch'
local d = require 'distributed'
local mode = arg[1] or 'main'

d.init_process_group{backend = 'mpi', timeout = mode == 'timeout' and 1 or nil}
local rank, n = d.get_rank(), d.get_world_size()

if mode == 'timeout' then
  assert(d.get_timeout() == 1)
  io.write(('CHECK started %d ok\n'):format(rank))
  io.stdout:flush()
  if rank == 0 then
    d.all_reduce(torch.ones(4))
    io.write('CHECK returned 0 FAIL the all_reduce returned\n')
  else
    local t0 = os.time()
    while os.time() - t0 < 30 do end          -- busy: skips the collective (mpirun stops it)
    io.write(('CHECK returned %d FAIL nobody stopped this rank\n'):format(rank))
  end
  os.exit(0)
end

local function report(name, ok, why)
  io.write(('CHECK %s %d %s\n'):format(name, rank, ok and 'ok' or ('FAIL ' .. tostring(why):gsub('\n', ' '))))
  io.stdout:flush()
end

-- runs fn (which raises on failure) as the check name
local function check(name, fn)
  local ok, err = pcall(fn)
  report(name, ok, err)
end

local function expect_equal(got, want, what)
  if not torch.equal(got, want) then
    error(('%s: got %s, want %s'):format(what or 'value', tostring(got:double()), tostring(want:double())), 2)
  end
end

-- err must be a string that starts at this file's line and holds every piece
local function expect_error(ok, err, line, ...)
  if ok then error('no error raised', 2) end
  err = tostring(err)
  local at = ('distributed_checks.lua:%d:'):format(line)
  if not err:find(at, 1, true) then error(('the error is not at %s: %s'):format(at, err), 2) end
  for _, piece in ipairs({...}) do
    if not err:find(piece, 1, true) then error(('the error lacks "%s": %s'):format(piece, err), 2) end
  end
end

local function factorial(k) local f = 1 for i = 2, k do f = f * i end return f end

check('rank', function()
  assert(rank == tonumber(os.getenv('OMPI_COMM_WORLD_RANK')), 'get_rank is not mpirun\'s rank')
  assert(n == tonumber(os.getenv('OMPI_COMM_WORLD_SIZE')), 'get_world_size is not mpirun\'s size')
  assert(d.is_initialized() and torch.distributed == d and d.get_backend() == 'mpi')
end)

local DTYPES = {'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'}
local FLOAT = {float32 = true, float64 = true, float16 = true, bfloat16 = true}

for _, dt in ipairs(DTYPES) do
  if dt == 'bool' then
    -- sum and max: or; product and min: and (as PyTorch's NCCL backend)
    -- (in a fixed order: pairs' order differs from one process to the next)
    for _, case in ipairs({{'sum', true}, {'max', true}, {'product', false}, {'min', false}}) do
      local op, want = case[1], case[2]
      check('all_reduce.' .. op .. '.bool', function()
        local t = torch.full({2, 3}, rank == 0, {dtype = 'bool'})
        d.all_reduce(t, {op = op})
        expect_equal(t, torch.full({2, 3}, want, {dtype = 'bool'}))
      end)
    end
  else
    -- t = rank + 1 everywhere: sum n(n+1)/2, product n!, min 1, max n, avg (n+1)/2
    local cases = {{'sum', n * (n + 1) / 2}, {'product', factorial(n)}, {'min', 1}, {'max', n}}
    if FLOAT[dt] then cases[#cases + 1] = {'avg', (n + 1) / 2} end
    for _, case in ipairs(cases) do
      local op, v = case[1], case[2]
      check('all_reduce.' .. op .. '.' .. dt, function()
        local t = torch.full({2, 3}, rank + 1, {dtype = dt})
        local r = d.all_reduce(t, {op = op})
        assert(r == t, 'all_reduce does not return its tensor')
        expect_equal(t, torch.full({2, 3}, v, {dtype = dt}))
      end)
    end
  end
  -- broadcast from the last rank: every rank ends with its values
  check('broadcast.' .. dt, function()
    local src = n - 1
    local function values(r) return (torch.arange(5) + r * 10):remainder(2 + r):to(dt) end
    local t = values(rank)
    d.broadcast(t, {src = src})
    expect_equal(t, values(src))
  end)
  -- all_gather into a list, into a filled list and into one tensor
  check('all_gather.' .. dt, function()
    local function values(r) return (torch.arange(4):view(2, 2) + r):remainder(2):to(dt) end
    local list = d.all_gather({}, values(rank))
    assert(#list == n, 'the list has ' .. #list .. ' tensors')
    for r = 0, n - 1 do expect_equal(list[r + 1], values(r), 'list[' .. (r + 1) .. ']') end
    local filled = {}
    for i = 1, n do filled[i] = torch.zeros(2, 2, {dtype = dt}) end
    local kept = filled[1]
    d.all_gather(filled, values(rank))
    assert(filled[1] == kept, 'all_gather replaced a tensor of a filled list')
    for r = 0, n - 1 do expect_equal(filled[r + 1], values(r), 'filled[' .. (r + 1) .. ']') end
    local out = torch.zeros(n * 2, 2, {dtype = dt})
    d.all_gather_into_tensor(out, values(rank))
    for r = 0, n - 1 do expect_equal(out:narrow(1, 2 * r + 1, 2), values(r), 'out rows of rank ' .. r) end
    -- the input inside the output: its own slot (in place), and another place (copied first)
    local inplace = torch.zeros(n * 2, 2, {dtype = dt})
    inplace:narrow(1, 2 * rank + 1, 2):copy(values(rank))
    d.all_gather_into_tensor(inplace, inplace:narrow(1, 2 * rank + 1, 2))
    expect_equal(inplace, out, 'all_gather_into_tensor in place')
    local shifted = torch.zeros(n * 2, 2, {dtype = dt})
    local at = (rank + 1) % n
    shifted:narrow(1, 2 * at + 1, 2):copy(values(rank))
    d.all_gather_into_tensor(shifted, shifted:narrow(1, 2 * at + 1, 2))
    expect_equal(shifted, out, 'all_gather_into_tensor from another slot of the output')
  end)
end

-- reduce to the last rank: it holds the sum, the others keep their values
for _, dt in ipairs({'float32', 'float64', 'int32', 'int64', 'uint8', 'float16'}) do
  check('reduce.' .. dt, function()
    local dst = n - 1
    local t = (torch.arange(6) * (rank + 1)):to(dt)
    d.reduce(t, {dst = dst, op = 'sum'})
    if rank == dst then expect_equal(t, (torch.arange(6) * (n * (n + 1) / 2)):to(dt))
    else expect_equal(t, (torch.arange(6) * (rank + 1)):to(dt), 'a rank other than dst') end
    local m = torch.full({3}, rank + 1, {dtype = dt})
    d.reduce(m, {dst = 0, op = 'max'})
    expect_equal(m, torch.full({3}, rank == 0 and n or rank + 1, {dtype = dt}))
  end)
end

-- values that differ by position and rank: sum of (i + 1) * (rank + 1) * 0.5
check('all_reduce.positions', function()
  local t = torch.arange(1, 1001, {dtype = 'float64'}) * (rank + 1) * 0.5
  d.all_reduce(t)
  expect_equal(t, torch.arange(1, 1001, {dtype = 'float64'}) * 0.5 * (n * (n + 1) / 2))
end)

-- a non-contiguous tensor (a transposed view, and a column of a matrix):
-- written through, its other elements untouched
check('all_reduce.noncontiguous', function()
  local base = torch.full({3, 4}, -1.0)
  local t = base:t()
  t:copy(torch.arange(12):view(4, 3):float() + rank)
  d.all_reduce(t)
  expect_equal(base:t(), (torch.arange(12):view(4, 3) * n + n * (n - 1) / 2):float())
  local m = torch.full({4, 3}, -1, {dtype = 'int64'})
  local col = m:select(2, 2)
  col:fill(rank + 1)
  d.all_reduce(col)
  local want = torch.full({4, 3}, -1, {dtype = 'int64'})
  want:select(2, 2):fill(n * (n + 1) / 2)
  expect_equal(m, want)
  local bt = torch.zeros(3, 2):t()
  d.broadcast(bt:fill(rank + 5), {src = 0})
  expect_equal(bt, torch.full({2, 3}, 5.0))
end)

check('all_reduce.empty_and_scalar', function()
  local e = torch.zeros(0)
  d.all_reduce(e)
  assert(e:numel() == 0)
  local s = torch.tensor(rank + 1.0)
  d.all_reduce(s, {op = 'max'})
  assert(s:dim() == 0 and s:item() == n, 'a 0-dim tensor: ' .. tostring(s))
  d.all_reduce(s, d.ReduceOp.SUM)
  assert(s:item() == n * n)
end)

check('barrier', function()
  for _ = 1, 3 do d.barrier() end
end)

-- data.DistributedSampler takes the group's world size and 0-based rank: the shards of
-- 11 indices (shuffled by a seed every rank shares) are equal in size, and together
-- cover every index, repeating only the padding (ceil(11 / n) * n - 11 of them)
check('sampler.shards', function()
  local data = require 'data'
  local s = data.DistributedSampler(11, {seed = 3})
  local function same(got, want, what) assert(got == want, ('%s: got %s, want %s'):format(what, got, want)) end
  same(s.num_replicas, n, 'num_replicas')
  same(s.rank, rank, 'rank')
  local mine = torch.tensor(s:indices(), {dtype = 'int64'})
  local per = (11 + n - 1) // n
  same(mine:numel(), per, 'shard size')
  local all = torch.zeros(n * per, {dtype = 'int64'})
  d.all_gather_into_tensor(all, mine)
  local count = {}
  for _, i in ipairs(all:totable()) do count[i] = (count[i] or 0) + 1 end
  local distinct, repeated = 0, 0
  for i = 1, 11 do
    assert(count[i], 'index ' .. i .. ' is in no shard')
    distinct = distinct + 1
    repeated = repeated + count[i] - 1
  end
  same(distinct, 11, 'distinct indices')
  same(repeated, per * n - 11, 'indices repeated (the padding)')
end)

-- errors: at the caller's line, naming the collective, the rank and what is wrong
check('errors.src_out_of_range', function()
  local t, line = torch.zeros(2)
  local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.broadcast(t, {src = n}) end)
  expect_error(ok, err, line, 'distributed.broadcast', ('rank %d of %d'):format(rank, n),
               ('src=%d is no rank: ranks run from 0 to %d'):format(n, n - 1))
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.reduce(t, {dst = -1}) end)
  expect_error(ok, err, line, 'distributed.reduce', 'dst=-1 is no rank')
end)

check('errors.options', function()
  local line
  local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_reduce(torch.ones(2):long(), {op = 'avg'}) end)
  expect_error(ok, err, line, 'distributed.all_reduce', "op='avg' needs a floating-point tensor, got int64")
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_reduce(torch.ones(2), {op = 'mean'}) end)
  expect_error(ok, err, line, "op='mean' is no reduction")
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_reduce(torch.ones(2), {async_op = true}) end)
  expect_error(ok, err, line, 'async_op is not supported yet')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_reduce({1, 2}) end)
  expect_error(ok, err, line, 'distributed.all_reduce: expected the tensor to be a tensor, got table')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_reduce(torch.ones(2), {opp = 'sum'}) end)
  expect_error(ok, err, line, 'unknown option opp')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.init_process_group{backend = 'mpi'} end)
  expect_error(ok, err, line, 'already initialised')
  -- an expanded view cannot be written in place
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_reduce(torch.ones(1):expand(3)) end)
  expect_error(ok, err, line, 'distributed.all_reduce', 'expanded')
end)

check('errors.all_gather_shapes', function()
  local line
  local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_gather_into_tensor(torch.zeros(5), torch.zeros(2)) end)
  expect_error(ok, err, line, 'distributed.all_gather_into_tensor', ('rank %d of %d'):format(rank, n),
               ('the output (5, 5 elements) must hold world size (%d) x the input\'s 2 elements'):format(n))
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_gather_into_tensor(torch.zeros(2 * n):long(), torch.zeros(2)) end)
  expect_error(ok, err, line, 'the output is int64 but the input float32')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_gather({torch.zeros(2)}, torch.zeros(2)) end)
  if n == 1 then ok, err = false, ('distributed_checks.lua:%d: one per rank'):format(line) end
  expect_error(ok, err, line, 'the list holds 1 tensors; it must hold one per rank')
  local list = {}
  for i = 1, n do list[i] = torch.zeros(3) end
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_gather(list, torch.zeros(2)) end)
  expect_error(ok, err, line, 'list[1] is a float32 tensor of shape 3; it must be a float32 tensor of shape 2')
end)

-- mismatched calls across ranks: every rank raises an error, before any data
-- moves (OpenMPI itself may overwrite memory on mismatched counts), and the
-- group still works after it. Debug mode says which rank passes what.
local function on_every_rank(name, fn, ...)
  local pieces = {...}
  check(name, function()
    local ok, err = pcall(fn)
    if ok then error('no error raised') end
    for _, piece in ipairs(pieces) do
      if not tostring(err):find(piece, 1, true) then error(('the error lacks "%s": %s'):format(piece, err)) end
    end
    local t = torch.full({2}, rank + 1)
    d.all_reduce(t)
    expect_equal(t, torch.full({2}, n * (n + 1) / 2), 'the next all_reduce')
  end)
end
local debug_mode = mode == 'debug'
local at = ('(rank %d of %d): '):format(rank, n)
on_every_rank('mismatch.shapes', function() d.all_reduce(torch.zeros(rank == 1 and 100000 or 3)) end,
  'distributed.all_reduce ' .. at, debug_mode and 'rank 0 passes a tensor of shape 3 (float32) but rank 1 one of shape 100000 (float32)'
  or 'the ranks pass different element counts (from 3 to 100000)')
on_every_rank('mismatch.dtypes', function() d.broadcast(torch.zeros(4, {dtype = rank == n - 1 and 'int32' or 'float32'})) end,
  'distributed.broadcast ' .. at, debug_mode and ('rank 0 passes a tensor of shape 4 (float32) but rank %d one of shape 4 (int32)'):format(n - 1)
  or 'the ranks call with different dtypes')
on_every_rank('mismatch.collectives', function()
  if rank == 0 then d.broadcast(torch.zeros(2)) else d.all_reduce(torch.zeros(2)) end
end, debug_mode and 'rank 0 called broadcast but rank 1 all_reduce at the same point' or 'the ranks call with different collectives')
on_every_rank('mismatch.ops', function() d.all_reduce(torch.zeros(2), {op = rank == 0 and 'sum' or 'max'}) end,
  debug_mode and "rank 0 reduces with op='sum' but rank 1 with op='max'" or 'the ranks call with different reduction ops')
on_every_rank('mismatch.roots', function() d.broadcast(torch.zeros(2), {src = rank == 1 and 1 or 0}) end,
  debug_mode and 'rank 0 passes src=0 but rank 1 src=1' or 'the ranks call with different src/dst ranks')
on_every_rank('mismatch.barrier', function() if rank == 0 then d.barrier() else d.all_reduce(torch.zeros(1)) end end,
  debug_mode and 'rank 0 called barrier but rank 1 all_reduce at the same point' or 'the ranks call with different collectives')
on_every_rank('mismatch.all_gather', function() d.all_gather({}, torch.zeros(rank == 0 and 2 or 3)) end,
  'distributed.all_gather ' .. at, debug_mode and 'rank 0 passes a tensor of shape 2 (float32) but rank 1 one of shape 3 (float32)'
  or 'the ranks pass different element counts (from 2 to 3)')

d.destroy_process_group()
check('destroyed', function()
  assert(not d.is_initialized())
  local ok, err = pcall(d.get_rank)
  assert(not ok and err:find('not initialised'), err)
end)
