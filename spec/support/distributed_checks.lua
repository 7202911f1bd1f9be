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

-- part 2: gather, scatter, reduce_scatter, all_to_all, on every dtype. vals(r, k): values that
-- depend on a rank r and a slot k (exact in every dtype: small integers; bool: their parity)
local function vals(dt, r, k)
  return (torch.arange(4):view(2, 2) + r * 3 + k * 7):remainder(dt == 'bool' and 2 or 50):to(dt)
end
for _, dt in ipairs(DTYPES) do
  -- gather to the last rank: its gather_list[r + 1] is rank r's tensor; nil elsewhere
  check('gather.' .. dt, function()
    local dst = n - 1
    local got = d.gather(vals(dt, rank, 0), rank == dst and {} or nil, {dst = dst})
    local filled
    if rank == dst then
      filled = {}
      for i = 1, n do filled[i] = torch.zeros(2, 2, {dtype = dt}) end
    end
    local kept = filled and filled[n]
    d.gather(vals(dt, rank, 1):t(), filled, {dst = dst})   -- a non-contiguous input, into a filled list
    if rank ~= dst then assert(got == nil, 'gather returned a list on a rank other than dst') return end
    assert(#got == n, 'the list has ' .. #got .. ' tensors')
    for r = 0, n - 1 do expect_equal(got[r + 1], vals(dt, r, 0), 'gather_list[' .. (r + 1) .. ']') end
    assert(filled[n] == kept, 'gather replaced a tensor of a filled list')
    for r = 0, n - 1 do expect_equal(filled[r + 1], vals(dt, r, 1):t(), 'filled[' .. (r + 1) .. ']') end
  end)
  -- scatter from rank 0: rank r receives scatter_list[r + 1]
  check('scatter.' .. dt, function()
    local list
    if rank == 0 then
      list = {}
      for i = 1, n do list[i] = vals(dt, i - 1, 2) end
    end
    local t = torch.ones(2, 2, {dtype = dt})
    assert(d.scatter(t, list) == t, 'scatter does not return its tensor')
    expect_equal(t, vals(dt, rank, 2))
    local col = torch.zeros(2, n, {dtype = dt})                -- into a non-contiguous view, from src = last
    local src = n - 1
    if rank == src then
      list = {}
      for i = 1, n do list[i] = vals(dt, i - 1, 3):select(2, 1) end
    else list = nil end
    d.scatter(col:select(2, rank + 1), list, {src = src})
    local want = torch.zeros(2, n, {dtype = dt})
    want:select(2, rank + 1):copy(vals(dt, rank, 3):select(2, 1))
    expect_equal(col, want, 'scatter into a column')
  end)
  -- all_to_all: rank r sends input_list[j + 1] = vals(r, j) to rank j, so it
  -- receives output_list[j + 1] = vals(j, r); all_to_all_single on the stacked tensors
  check('all_to_all.' .. dt, function()
    local input = {}
    for j = 0, n - 1 do input[j + 1] = vals(dt, rank, j) end
    local out = d.all_to_all({}, input)
    assert(#out == n, 'the output list has ' .. #out .. ' tensors')
    for j = 0, n - 1 do expect_equal(out[j + 1], vals(dt, j, rank), 'output_list[' .. (j + 1) .. ']') end
    local filled = {}
    for i = 1, n do filled[i] = torch.zeros(2, 2, {dtype = dt}) end
    d.all_to_all(filled, input)
    for j = 0, n - 1 do expect_equal(filled[j + 1], vals(dt, j, rank), 'filled[' .. (j + 1) .. ']') end
    local single_in = torch.zeros(n * 2, 2, {dtype = dt})
    for j = 0, n - 1 do single_in:narrow(1, 2 * j + 1, 2):copy(vals(dt, rank, j)) end
    local single_out = torch.ones(n, 2, 2, {dtype = dt})
    assert(d.all_to_all_single(single_out, single_in) == single_out, 'all_to_all_single does not return its output')
    for j = 0, n - 1 do expect_equal(single_out[j + 1], vals(dt, j, rank), 'all_to_all_single block ' .. j) end
  end)
  -- reduce_scatter: rank r's output is the reduction over the ranks q of their
  -- input_list[r + 1] = (arange(4) + 1) * (q + 1) + (r + 1): sum (arange + 1) * n(n+1)/2 +
  -- n(r + 1), max (arange + 1) * n + r + 1, avg sum / n. bool: input_list[r + 1] is true on
  -- rank r only: sum (or) true, min (and) false
  local cases
  if dt == 'bool' then cases = {'sum', 'min'} else cases = {'sum', 'max'} end
  if FLOAT[dt] then cases[#cases + 1] = 'avg' end
  for _, op in ipairs(cases) do
    check('reduce_scatter.' .. op .. '.' .. dt, function()
      local base = torch.arange(1, 5, {dtype = 'float64'}):view(2, 2)
      local function input_for(q, i)
        if dt == 'bool' then return torch.full({2, 2}, q == i - 1, {dtype = 'bool'}) end
        return (base * (q + 1) + i):to(dt)
      end
      local want
      if dt == 'bool' then want = torch.full({2, 2}, op == 'sum', {dtype = 'bool'})
      else
        local sum = base * (n * (n + 1) / 2) + n * (rank + 1)
        want = (op == 'sum' and sum or op == 'max' and base * n + rank + 1 or sum / n):to(dt)
      end
      local list = {}
      for i = 1, n do list[i] = input_for(rank, i) end
      local out = torch.zeros(2, 2, {dtype = dt})
      assert(d.reduce_scatter(out, list, {op = op}) == out, 'reduce_scatter does not return its output')
      expect_equal(out, want, 'reduce_scatter')
      local stacked = torch.zeros(n, 2, 2, {dtype = dt})
      for i = 1, n do stacked[i]:copy(list[i]) end
      local out2 = torch.zeros(2, 2, {dtype = dt})
      d.reduce_scatter_tensor(out2, stacked, {op = op})
      expect_equal(out2, want, 'reduce_scatter_tensor')
    end)
  end
end

-- the object collectives: Lua values (nested tables, strings of a length that depends on
-- the rank, tensors) through torch.serialize
local function object_of(r)
  return {rank = r, name = ('r'):rep(10 * r + 1), nested = {deep = {r, r * 2, {r + 0.5}}, even = r % 2 == 0},
          t = torch.arange(3, {dtype = 'int64'}) * r, f = torch.full({2, 2}, r + 0.25, {dtype = 'float64'})}
end
local function expect_object(got, r, what)
  local want = object_of(r)
  assert(type(got) == 'table', what .. ' is a ' .. type(got))
  assert(got.rank == r and got.name == want.name, what .. ': rank or name differ')
  assert(got.nested.deep[1] == r and got.nested.deep[2] == r * 2 and got.nested.deep[3][1] == r + 0.5
         and got.nested.even == (r % 2 == 0), what .. ': the nested tables differ')
  expect_equal(got.t, want.t, what .. '.t')
  expect_equal(got.f, want.f, what .. '.f')
  assert(got.t.dtype == 'int64' and got.f.dtype == 'float64', what .. ': dtypes differ')
end

check('all_gather_object', function()
  local list = {}
  assert(d.all_gather_object(list, object_of(rank)) == list, 'all_gather_object does not return its list')
  assert(#list == n, 'the list has ' .. #list .. ' objects')
  for r = 0, n - 1 do expect_object(list[r + 1], r, 'list[' .. (r + 1) .. ']') end
  local longer = {1, 2, 3, 4, 5, 6, 7}
  d.all_gather_object(longer, rank * 10)
  assert(#longer == n, 'a longer list keeps ' .. #longer .. ' elements')
  for r = 0, n - 1 do assert(longer[r + 1] == r * 10, 'longer[' .. (r + 1) .. '] = ' .. tostring(longer[r + 1])) end
end)

check('broadcast_object_list', function()
  local src = n - 1
  local list = rank == src and {'from ' .. src, object_of(src), 42} or {'stale', 'stale', 'stale', 'stale', 'stale'}
  assert(d.broadcast_object_list(list, {src = src}) == list, 'broadcast_object_list does not return its list')
  assert(#list == 3, 'the list has ' .. #list .. ' elements')
  assert(list[1] == 'from ' .. src and list[3] == 42, 'the plain values differ')
  expect_object(list[2], src, 'list[2]')
  local empty = rank == 0 and {{x = {y = 'z'}}} or {}
  d.broadcast_object_list(empty)
  assert(#empty == 1 and empty[1].x.y == 'z', 'an empty list on the receivers')
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

check('errors.part2', function()
  local line
  local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.scatter(torch.zeros(2), nil, {src = n}) end)
  expect_error(ok, err, line, 'distributed.scatter', ('rank %d of %d'):format(rank, n), ('src=%d is no rank'):format(n))
  -- dst's list is too short, and the others pass a list they must not
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.gather(torch.zeros(2), {torch.zeros(2)}) end)
  expect_error(ok, err, line, 'distributed.gather', rank == 0 and 'gather_list holds 1 tensors; it must hold one per rank'
               or 'gather_list must be nil on a rank other than dst=0')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.reduce_scatter(torch.zeros(2), {torch.zeros(2)}) end)
  expect_error(ok, err, line, 'distributed.reduce_scatter', ('input_list holds 1 tensors; it must hold one per rank (%d)'):format(n))
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.reduce_scatter_tensor(torch.zeros(2), torch.zeros(2 * n + 1)) end)
  expect_error(ok, err, line, 'distributed.reduce_scatter_tensor', ('rank %d of %d'):format(rank, n),
               ('the input (%d, %d elements) must hold world size (%d) x the output\'s 2 elements'):format(2 * n + 1, 2 * n + 1, n))
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_to_all_single(torch.zeros(n + 1), torch.zeros(n + 1)) end)
  expect_error(ok, err, line, 'distributed.all_to_all_single', 'must have the same number of elements, a multiple of the world size')
  local list = {}
  for i = 1, n do list[i] = torch.zeros(2) end
  list[n] = torch.zeros(3)
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_to_all({}, list) end)
  expect_error(ok, err, line, 'distributed.all_to_all', ('input_list[%d] is a float32 tensor of shape 3; it must be a float32 tensor of shape 2'):format(n))
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_gather_object({}, function() end) end)
  expect_error(ok, err, line, 'distributed.all_gather_object', 'the object cannot be serialized')
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
-- an asynchronous collective disagreed on is raised by its wait(), on every rank
on_every_rank('mismatch.async', function()
  local h = d.all_reduce(torch.zeros(rank == 1 and 5 or 4), {async_op = true})
  h:wait()
end, 'distributed.all_reduce ' .. at, debug_mode and 'rank 0 passes a tensor of shape 4 (float32) but rank 1 one of shape 5 (float32)'
  or 'the ranks pass different element counts (from 4 to 5)')
on_every_rank('mismatch.all_gather', function() d.all_gather({}, torch.zeros(rank == 0 and 2 or 3)) end,
  'distributed.all_gather ' .. at, debug_mode and 'rank 0 passes a tensor of shape 2 (float32) but rank 1 one of shape 3 (float32)'
  or 'the ranks pass different element counts (from 2 to 3)')

on_every_rank('mismatch.scatter_roots', function()
  local src = rank == 1 and 1 or 0
  local list
  if rank == src then list = {} for i = 1, n do list[i] = torch.zeros(2) end end
  d.scatter(torch.zeros(2), list, {src = src})
end, 'distributed.scatter ' .. at, debug_mode and 'rank 0 passes src=0 but rank 1 src=1' or 'the ranks call with different src/dst ranks')
on_every_rank('mismatch.reduce_scatter', function()
  local k = rank == 0 and 2 or 3
  local list = {}
  for i = 1, n do list[i] = torch.zeros(k) end
  d.reduce_scatter(torch.zeros(k), list)
end, 'distributed.reduce_scatter ' .. at, debug_mode and 'rank 0 passes a tensor of shape 2 (float32) but rank 1 one of shape 3 (float32)'
  or 'the ranks pass different element counts (from 2 to 3)')
on_every_rank('mismatch.gather_all_to_all', function()
  if rank == 0 then d.gather(torch.zeros(n), {}) else d.all_to_all_single(torch.zeros(n), torch.zeros(n)) end
end, debug_mode and 'rank 0 called gather but rank 1 all_to_all at the same point' or 'the ranks call with different collectives')

-- an argument only one rank has is refused on that rank (its own error, at its line); the
-- others raise too, naming it, instead of waiting for it in the collective
local line   -- set by fn: the line of its call
local function refused_on(name, op, root, fn, piece)
  check(name, function()
    local ok, err = pcall(fn)
    if rank == root then expect_error(ok, err, line, piece)
    else
      expect_error(ok, err, line, ('distributed.%s (rank %d of %d): rank %d\'s arguments were refused on that rank')
                   :format(op, rank, n, root))
    end
    local t = torch.full({2}, rank + 1)
    d.all_reduce(t)
    expect_equal(t, torch.full({2}, n * (n + 1) / 2), 'the next all_reduce')
  end)
end
refused_on('refused.gather_list', 'gather', n - 1, function()
  line = debug.getinfo(1, 'l').currentline; d.gather(torch.zeros(2), rank == n - 1 and {torch.zeros(3)} or nil, {dst = n - 1})
end, 'gather_list holds 1 tensors')
refused_on('refused.scatter_list', 'scatter', 0, function()
  line = debug.getinfo(1, 'l').currentline; d.scatter(torch.zeros(2), rank == 0 and {torch.zeros(2)} or nil)
end, 'scatter_list holds 1 tensors')
refused_on('refused.all_gather_object', 'all_gather_object', 1, function()
  line = debug.getinfo(1, 'l').currentline; d.all_gather_object({}, rank == 1 and {f = print} or {rank})
end, 'distributed.all_gather_object (rank 1 of ' .. n .. '): the object cannot be serialized')
refused_on('refused.broadcast_object_list', 'broadcast_object_list', 0, function()
  line = debug.getinfo(1, 'l').currentline; d.broadcast_object_list(rank == 0 and {coroutine.create(print)} or {})
end, 'distributed.broadcast_object_list (rank 0 of ' .. n .. '): the object cannot be serialized')

check('all_to_all.uneven', function()
  -- rank s sends s + r + 1 rows (2 columns) to rank r, each row (s, r, i); single-tensor form
  local sizes_in, sizes_out, rows_in, rows_out = {}, {}, 0, 0
  for r = 0, n - 1 do
    sizes_in[r + 1], sizes_out[r + 1] = rank + r + 1, r + rank + 1
    rows_in, rows_out = rows_in + rank + r + 1, rows_out + r + rank + 1
  end
  local input = torch.zeros(rows_in, 2)
  local at = 0
  for r = 0, n - 1 do
    for i = 1, rank + r + 1 do input[at + i][1], input[at + i][2] = rank * 100 + r, i end
    at = at + rank + r + 1
  end
  local output = torch.full({rows_out, 2}, -1.0)
  d.all_to_all_single(output, input, {input_split_sizes = sizes_in, output_split_sizes = sizes_out})
  at = 0
  for s = 0, n - 1 do
    for i = 1, s + rank + 1 do
      assert(output[at + i][1] == s * 100 + rank and output[at + i][2] == i, ('row %d from rank %d'):format(i, s))
    end
    at = at + s + rank + 1
  end
  -- list form with tensors of several shapes
  local ins, outs = {}, {}
  for r = 0, n - 1 do
    ins[r + 1] = torch.full({rank + r + 1}, rank * 10 + r, {dtype = 'int32'})
    outs[r + 1] = torch.zeros({r + rank + 1}, {dtype = 'int32'})
  end
  d.all_to_all(outs, ins)
  for s = 0, n - 1 do expect_equal(outs[s + 1], torch.full({s + rank + 1}, s * 10 + rank, {dtype = 'int32'})) end
  -- a receiver that expects another count than its sender sends: every rank raises, naming both
  local bad = {}
  for r = 1, n do bad[r] = sizes_out[r] end
  if rank == 0 then bad[n] = bad[n] + 1 end
  local line
  local wrong = torch.zeros(rows_out + (rank == 0 and 1 or 0), 2)
  local opts = {input_split_sizes = sizes_in, output_split_sizes = bad}
  local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_to_all_single(wrong, input, opts) end)
  expect_error(ok, err, line, ('rank %d sends %d elements to rank 0, which expects %d'):format(n - 1, 2 * n,
               2 * n + 2))
  d.barrier()
end)

check('new_group', function()
  -- the first and the last rank (both ranks of 2; ranks 0 and 2 of 3)
  local g = d.new_group({n - 1, 0})
  local member = rank == 0 or rank == n - 1
  assert(tostring(g):find('ranks {0, ' .. (n - 1) .. '}', 1, true), tostring(g))
  assert(d.get_world_size(g) == 2 and d.get_rank(g) == (rank == 0 and 0 or member and 1 or -1), 'rank in the group')
  local line
  if member then
    local t = torch.full({4}, rank + 1.0)
    d.all_reduce(t, {group = g})
    expect_equal(t, torch.full({4}, 1.0 + n))
    local b = torch.full({3}, rank * 1.0)
    d.broadcast(b, {src = n - 1, group = g})                     -- src: a rank of the default group
    expect_equal(b, torch.full({3}, n - 1.0))
    local list = d.all_gather({}, torch.full({2}, rank), {group = g})
    assert(#list == 2, '#list')
    expect_equal(list[1], torch.full({2}, 0))
    expect_equal(list[2], torch.full({2}, n - 1))
    local h = d.all_reduce(torch.ones(2), {group = g, async_op = true})
    expect_equal(h:wait(), torch.full({2}, 2.0))
    if n > 2 then
      local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.broadcast(b, {src = 1, group = g}) end)
      expect_error(ok, err, line, 'src=1 is not in this group (ranks {0, ' .. (n - 1) .. '}')
    end
  else
    local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.all_reduce(torch.ones(2), {group = g}) end)
    expect_error(ok, err, line, 'rank 1 is not in this group (ranks {0, 2})')
  end
  -- the default group is the default again
  local t = torch.full({2}, rank + 1.0)
  d.all_reduce(t)
  expect_equal(t, torch.full({2}, n * (n + 1) / 2))
  assert(d.get_rank() == rank and d.get_world_size() == n, 'the default group\'s rank and size')
  local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.new_group({0, 0}) end)
  expect_error(ok, err, line, 'distributed.new_group: rank 0 is listed twice')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.new_group(rank == 0 and {0} or {0, 1}) end)
  expect_error(ok, err, line, 'the ranks pass different rank lists')
end)

-- ---- asynchronous collectives and point to point ----
check('async.collectives', function()
  local t = torch.full({1000}, rank + 1.0)
  local h = d.all_reduce(t, {async_op = true})
  assert(getmetatable(h) == d.Work and tostring(h):find('distributed.Work(all_reduce', 1, true), tostring(h))
  local x = torch.randn(200, 200):mm(torch.randn(200, 200))      -- computation while it runs
  assert(x:numel() == 40000)
  assert(rawequal(h:wait(), t), 'wait returns the tensor')
  assert(h:is_completed(), 'completed after wait')
  expect_equal(t, torch.full({1000}, n * (n + 1) / 2))
  local a = torch.full({7}, rank + 1.0)
  local ha = d.all_reduce(a, {op = 'avg', async_op = true})
  while not ha:is_completed() do end                             -- polled to completion
  expect_equal(a, torch.full({7}, (n + 1) / 2))
  local r = torch.full({5}, rank + 1.0)
  d.reduce(r, {dst = n - 1, async_op = true}):wait()
  expect_equal(r, torch.full({5}, rank == n - 1 and n * (n + 1) / 2 or rank + 1))
  local b = torch.full({3, 4}, rank * 10.0):t()                  -- non-contiguous: copied back at completion
  d.broadcast(b, {src = 1 % n, async_op = true}):wait()
  expect_equal(b, torch.full({4, 3}, (1 % n) * 10.0))
  d.barrier({async_op = true}):wait()
  local list = d.all_gather({}, torch.full({2}, rank), {async_op = true}):wait()
  for i = 1, n do expect_equal(list[i], torch.full({2}, i - 1), 'all_gather list[' .. i .. ']') end
end)

-- a blocking and an asynchronous call of the same collective at the same point match; a
-- queue of asynchronous collectives runs in the order started, before the next blocking one
check('async.queue', function()
  local t = torch.full({3}, rank + 1.0)
  if rank == 0 then d.all_reduce(t, {async_op = true}):wait() else d.all_reduce(t) end
  expect_equal(t, torch.full({3}, n * (n + 1) / 2), 'blocking and asynchronous together')
  local hs, ts = {}, {}
  for i = 1, 6 do
    ts[i] = torch.full({1000 * i}, (rank + 1.0) * i)
    hs[i] = i % 3 == 0 and d.broadcast(ts[i], {src = i % n, async_op = true})
      or d.all_reduce(ts[i], {op = i % 3 == 1 and 'sum' or 'max', async_op = true})
  end
  local last = torch.full({2}, rank + 1.0)
  d.all_reduce(last, {op = 'product'})                            -- after all six
  expect_equal(last, torch.full({2}, factorial(n)), 'the blocking all_reduce after the queue')
  for i = 6, 1, -1 do                                             -- waited for in any order
    assert(rawequal(hs[i]:wait(), ts[i]), 'wait returns the tensor')
    local want = i % 3 == 0 and (i % n + 1.0) * i or i % 3 == 1 and i * n * (n + 1) / 2 or n * i
    expect_equal(ts[i], torch.full({1000 * i}, want), 'queued collective ' .. i)
  end
  -- started, never waited for, then collected: the collection waits
  local dropped = torch.full({4}, rank + 1.0)
  d.all_reduce(dropped, {async_op = true})
  collectgarbage(); collectgarbage()
  expect_equal(dropped, torch.full({4}, n * (n + 1) / 2), 'a collected handle\'s tensor')
  -- a send and a receive go on while a collective waits in the queue for a late rank
  local h = d.all_reduce(torch.ones(8), {async_op = true})
  local got = torch.zeros(2)
  local hr = d.irecv(got, (rank - 1) % n, {tag = 9})
  d.isend(torch.full({2}, rank * 1.0), (rank + 1) % n, {tag = 9}):wait()
  hr:wait()
  expect_equal(got, torch.full({2}, (rank - 1) % n * 1.0), 'the message beside the queue')
  expect_equal(h:wait(), torch.full({8}, n * 1.0), 'the queued all_reduce')
end)

check('p2p.ring', function()
  -- every rank sends to the next and receives from the previous at once, a message large
  -- enough to wait for its receiver, and waits for its send first
  local m = 1 << 21
  local out, inb = torch.full({m}, rank + 1.0), torch.zeros(m)
  local prev, nxt = (rank - 1) % n, (rank + 1) % n
  local hs = d.isend(out, nxt, {tag = 5})
  local hr = d.irecv(inb, prev, {tag = 5})
  hs:wait()
  assert(hr:wait() == prev, 'irecv gives the sender')
  expect_equal(inb, torch.full({m}, prev + 1.0))
end)

check('p2p.blocking', function()
  -- rank 0 sends each other rank its own message; they receive from any rank
  if rank == 0 then
    for r = 1, n - 1 do d.send(torch.full({3}, r * 1.5, {dtype = 'float64'}), r, {tag = r}) end
  else
    local t = torch.zeros(3, {dtype = 'float64'})
    assert(d.recv(t, nil, {tag = rank}) == 0, 'recv gives the sender')
    expect_equal(t, torch.full({3}, rank * 1.5, {dtype = 'float64'}))
  end
  -- a message of another size or dtype than the receiving tensor is refused on the receiver
  local line
  if rank == 0 then
    d.send(torch.ones(4), 1 % n)
  elseif rank == 1 then
    local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.recv(torch.zeros(3), 0) end)
    expect_error(ok, err, line, 'distributed.recv (rank 1 of ' .. n .. '): rank 0 sent 4 elements of float32, but '
                 .. 'the tensor receiving them holds 3 of float32')
  end
  local ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.send(torch.ones(2), rank) end)
  expect_error(ok, err, line, 'is this rank: a rank cannot send to itself')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.send(torch.ones(2)) end)
  expect_error(ok, err, line, 'distributed.send: dst= is required')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.isend(torch.ones(2), n) end)
  expect_error(ok, err, line, 'dst=' .. n .. ' is no rank')
  ok, err = pcall(function() line = debug.getinfo(1, 'l').currentline; d.irecv(torch.ones(2), 0, {tag = -1}) end)
  expect_error(ok, err, line, 'tag=-1 must be between 0 and 16383')
  d.barrier()
end)

-- ---- nn.DistributedDataParallel ----
-- Each rank trains on its share of a batch; the reference is one process (this one, with
-- rank 0's starting weights) training the same model on the whole batch. float64: equal
-- to 1e-12.
local nn = require 'nn'
local B = 3                                              -- rows per rank
local function make_model(seed)
  torch.manual_seed(seed)
  return nn.Sequential(nn.Linear(5, 6), nn.Tanh(), nn.Linear(6, 3)):double()
end
local function batch(step)                               -- the whole batch of a step, the same on every rank
  torch.manual_seed(1000 + step)
  return torch.randn(B * n, 5, {dtype = 'float64'}), torch.randn(B * n, 3, {dtype = 'float64'})
end
local function mine(t) return t:narrow(1, rank * B + 1, B) end
local function sgd(model, lr)
  torch.no_grad(function()
    for _, p in ipairs(model:parameters()) do
      if p.grad ~= nil then p:add_(p.grad, -lr) end
      p.grad = nil
    end
  end)
end
local function expect_close(a, b, what)
  local diff = (a - b):abs():max():item()
  if not (diff <= 1e-12) then error(('%s: differs by %g'):format(what, diff), 2) end
end
local function expect_same_params(m, ref, what)
  local ps, rs = m:parameters(), ref:parameters()
  assert(#ps == #rs, what .. ': parameter counts differ')
  for i = 1, #ps do expect_close(ps[i]:detach(), rs[i]:detach(), what .. ' parameter ' .. i) end
end

check('ddp.construction', function()
  -- different weights and buffers on every rank; DDP starts every rank from rank 0's
  torch.manual_seed(rank)
  local model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)):double()
  model.modules[2].running_mean:fill(rank + 1)
  local ddp = nn.DistributedDataParallel(model)
  torch.manual_seed(0)
  local ref = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3)):double()
  expect_same_params(model, ref, 'after construction')
  expect_equal(model.modules[2].running_mean, torch.ones(3, {dtype = 'float64'}), 'running_mean')
  assert(ddp.module == model, 'ddp.module')
  assert(tostring(ddp):find('DistributedDataParallel(\n  (module): Sequential(', 1, true), tostring(ddp))
end)

-- 5 SGD steps with options opts: the same parameters as one process on the whole batch
local function same_as_one_process(name, opts)
  check(name, function()
    local model, ref = make_model(rank), make_model(0)
    local ddp = nn.DistributedDataParallel(model, opts)
    for step = 1, 5 do
      local X, Y = batch(step)
      ;((ddp(mine(X)) - mine(Y)) ^ 2):mean():backward()
      ;((ref(X) - Y) ^ 2):mean():backward()
      for i, p in ipairs(model:parameters()) do expect_close(p.grad, ref:parameters()[i].grad, 'step ' .. step .. ' grad') end
      sgd(model, 0.1)
      sgd(ref, 0.1)
    end
    expect_same_params(model, ref, 'after 5 steps')
  end)
end
same_as_one_process('ddp.one_bucket', nil)
same_as_one_process('ddp.bucket_per_parameter', {bucket_cap_mb = 1e-6})
same_as_one_process('ddp.gradient_as_bucket_view', {bucket_cap_mb = 1e-4, gradient_as_bucket_view = true})

check('ddp.no_sync', function()
  -- two micro-batches: the first's backward only accumulates, the second's averages both
  local model, ref = make_model(rank), make_model(0)
  local ddp = nn.DistributedDataParallel(model, {bucket_cap_mb = 1e-4})
  for step = 1, 3 do
    local X1, Y1 = batch(10 * step)
    local X2, Y2 = batch(10 * step + 1)
    ddp:no_sync(function() ((ddp(mine(X1)) - mine(Y1)) ^ 2):mean():backward() end)
    do
      local g <close> = ddp:no_sync()
      assert(rawget(ddp, '_ddp').sync == false, 'the guard turns averaging off')
    end
    ;((ddp(mine(X2)) - mine(Y2)) ^ 2):mean():backward()
    ;((ref(X1) - Y1) ^ 2):mean():backward()
    ;((ref(X2) - Y2) ^ 2):mean():backward()
    sgd(model, 0.05)
    sgd(ref, 0.05)
  end
  expect_same_params(model, ref, 'after 3 accumulated steps')
end)

-- a model whose second branch takes part only when asked
local Branchy = torch.class('nn.SpecBranchy', 'nn.Module')
function Branchy:__init()
  nn.Module.__init(self)
  self.a = nn.Linear(5, 3)
  self.b = nn.Linear(5, 3)
end
function Branchy:forward(x, both) return both and self.a(x) + self.b(x) or self.a(x) end

check('ddp.find_unused_parameters', function()
  torch.manual_seed(rank)
  local model = Branchy():double()
  local ddp = nn.DistributedDataParallel(model, {find_unused_parameters = true, bucket_cap_mb = 1e-4})
  torch.manual_seed(0)
  local ref = Branchy():double()
  -- a parameter's AccumulateGrad node lives only as long as some graph holds it: the one the
  -- construction saw is freed here, and other leaves' nodes take its memory, so that the
  -- forwards below reach new nodes (at other addresses) for the same parameters
  local hold = {}
  for _ = 1, 2 do
    collectgarbage()
    for i = 1, 16 do
      local leaf = torch.zeros(3, 1 + i % 5, {dtype = 'float64', requires_grad = true})
      hold[#hold + 1] = leaf:view(leaf:size()).grad_fn.next_functions[1][1]
    end
  end
  for step = 1, 4 do
    local X, Y = batch(step)
    local both = step % 2 == 0
    collectgarbage()
    ;((ddp(mine(X), both) - mine(Y:narrow(2, 1, 3))) ^ 2):mean():backward()
    ;((ref(X, both) - Y:narrow(2, 1, 3)) ^ 2):mean():backward()
    sgd(model, 0.1)
    sgd(ref, 0.1)
  end
  expect_same_params(model, ref, 'after 4 steps')
  -- without the option, the forward after a backward that left a parameter out says which
  torch.manual_seed(rank)
  local strict = nn.DistributedDataParallel(Branchy():double())
  local X, Y = batch(1)
  ;((strict(mine(X)) - mine(Y:narrow(2, 1, 3))) ^ 2):mean():backward()
  local ok, err = pcall(strict, mine(X))
  assert(not ok, 'no error')
  for _, piece in ipairs({'did not produce gradients for 2 parameter(s) (b.bias, b.weight)',
                          'find_unused_parameters=true'}) do
    assert(tostring(err):find(piece, 1, true), tostring(err))
  end
end)

check('ddp.join', function()
  -- rank r runs 2 + r iterations inside join; each step's gradient is the sum of the active
  -- ranks' gradients over the world size, as one process computes it below
  local model, ref = make_model(rank), make_model(0)
  local ddp = nn.DistributedDataParallel(model, {bucket_cap_mb = 1e-4})
  local done = ddp:join(function()
    for step = 1, 2 + rank do
      local X, Y = batch(60 + step)
      ;((ddp(mine(X)) - mine(Y)) ^ 2):mean():backward()
      sgd(model, 0.1)
    end
    return 'done'
  end)
  assert(done == 'done', 'join returns fn\'s results')
  for step = 1, 2 + (n - 1) do
    local X, Y = batch(60 + step)
    local loss = 0
    for r = 0, n - 1 do
      if step <= 2 + r then
        local rows = {r * B + 1, B}
        loss = loss + ((ref(X:narrow(1, rows[1], rows[2])) - Y:narrow(1, rows[1], rows[2])) ^ 2):mean()
      end
    end
    ;(loss / n):backward()
    sgd(ref, 0.1)
  end
  expect_same_params(model, ref, 'after the uneven loops')
end)

check('ddp.torch7', function()
  -- Torch7's forward / criterion / backward / updateParameters on the wrapped model
  local model, ref = make_model(rank), make_model(0)
  local ddp = nn.DistributedDataParallel(model)
  local crit, rcrit = nn.MSECriterion(), nn.MSECriterion()
  for step = 1, 3 do
    local X, Y = batch(20 + step)
    ddp:zeroGradParameters()
    local out = ddp:forward(mine(X))
    crit:forward(out, mine(Y))
    ddp:backward(mine(X), crit:backward(out, mine(Y)))
    ddp:updateParameters(0.1)
    ref:zeroGradParameters()
    local rout = ref:forward(X)
    rcrit:forward(rout, Y)
    ref:backward(X, rcrit:backward(rout, Y))
    ref:updateParameters(0.1)
  end
  expect_same_params(model, ref, 'after 3 Torch7 steps')
end)

check('ddp.checkpoint', function()
  -- rank 0 writes ddp.module's state; every rank loads it into a plain model
  local model = make_model(rank)
  local ddp = nn.DistributedDataParallel(model)
  local X, Y = batch(30)
  ;((ddp(mine(X)) - mine(Y)) ^ 2):mean():backward()
  sgd(model, 0.1)
  local path = {rank == 0 and os.tmpname() or nil}
  d.broadcast_object_list(path)
  if rank == 0 then torch.save(path[1], ddp.module:state_dict()) end
  d.barrier()
  local plain = make_model(99)
  plain:load_state_dict(torch.load(path[1]))
  d.barrier()
  if rank == 0 then os.remove(path[1]) end
  expect_same_params(plain, model, 'loaded')
  local keys = ddp:state_dict_keys()
  assert(keys[1] == 'module.0.weight' or keys[1]:find('^module%.'), 'ddp:state_dict keys: ' .. tostring(keys[1]))
end)

check('zero.same_as_one_process', function()
  -- ZeRO stage 1 over DDP's averaged gradients: Adam's state sharded, the parameters one
  -- process's Adam on the whole batch reaches; its consolidated state is that Adam's
  local optim = require 'optim'
  local model, ref = make_model(rank), make_model(0)
  local ddp = nn.DistributedDataParallel(model)
  local zero = d.ZeroRedundancyOptimizer(model:parameters(), optim.Adam, {lr = 0.01})
  local adam = optim.Adam(ref:parameters(), {lr = 0.01})
  local owned = 0
  for i = 1, #model:parameters() do if zero.owner[i] == rank then owned = owned + 1 end end
  assert(owned == (zero.local_optimizer and #zero.local_optimizer.param_groups[1].params or 0), 'the shard')
  -- one step of opt on the data-parallel model (this rank's rows) and of adam on the reference
  local function step_both(opt, X, Y)
    opt:zero_grad()
    adam:zero_grad()
    ;((ddp(mine(X)) - mine(Y)) ^ 2):mean():backward()
    ;((ref(X) - Y) ^ 2):mean():backward()
    opt:step()
    adam:step()
  end
  for step = 1, 5 do
    step_both(zero, batch(40 + step))
    if step == 3 then zero.param_groups[1].lr = 0.005; adam.param_groups[1].lr = 0.005 end   -- a schedule
  end
  expect_same_params(model, ref, 'after 5 Adam steps')
  zero:consolidate_state_dict(0)
  if rank == 0 then
    local got, want = zero:state_dict(), adam:state_dict()
    for i = 1, #model:parameters() do
      expect_close(got.state[i].exp_avg, want.state[i].exp_avg, 'exp_avg ' .. i)
      expect_close(got.state[i].exp_avg_sq, want.state[i].exp_avg_sq, 'exp_avg_sq ' .. i)
    end
    assert(got.param_groups[1].lr == 0.005, 'the consolidated lr')
  else
    local ok, err = pcall(zero.state_dict, zero)
    assert(not ok and tostring(err):find('call opt:consolidate_state_dict(to) on every rank first', 1, true), err)
  end
  -- the whole state, loaded on every rank, continues as that Adam does
  local sd = {rank == 0 and zero:state_dict() or nil}
  d.broadcast_object_list(sd)
  local again = d.ZeroRedundancyOptimizer(model:parameters(), optim.Adam, {lr = 0.01})
  again:load_state_dict(sd[1])
  step_both(again, batch(50))
  expect_same_params(model, ref, 'after a step from the loaded state')
end)

-- ---- distributed.FullyShardedDataParallel ----
-- Each rank holds its shard of every unit's parameters and trains on its rows; the
-- parameters are those of one process training on the whole batch (float64, 1e-12).
local function fsdp_against_one_process(policy, opt_class, opts)
  local optim = require 'optim'
  local model, ref = make_model(rank), make_model(0)               -- rank 0's weights win
  local fsdp = d.FullyShardedDataParallel(model, {auto_wrap_policy = policy})
  local opt, ropt = optim[opt_class](fsdp:parameters(), opts), optim[opt_class](ref:parameters(), opts)
  for step = 1, 5 do
    local X, Y = batch(step)
    opt:zero_grad(); ropt:zero_grad()
    ;((fsdp(mine(X)) - mine(Y)) ^ 2):mean():backward()
    ;((ref(X) - Y) ^ 2):mean():backward()
    opt:step(); ropt:step()
  end
  local sd, rsd = fsdp:state_dict(), ref:state_dict()
  for _, k in ipairs({'1.weight', '1.bias', '3.weight', '3.bias'}) do
    assert(sd[k] and sd[k]:size() == rsd[k]:size(), 'state_dict ' .. k)
    expect_close(sd[k], rsd[k], k .. ' after 5 steps')
  end
  return fsdp, model, ref
end

check('fsdp.one_unit_sgd', function()
  local fsdp, model = fsdp_against_one_process(nil, 'SGD', {lr = 0.1, momentum = 0.9})
  local shards = fsdp:parameters()
  -- 5*6 + 6 + 6*3 + 3 = 57 elements, each rank holding ceil(57 / n)
  assert(#shards == 1 and shards[1]:numel() == (57 + n - 1) // n, 'one shard of ceil(57 / n): ' .. shards[1]:numel())
  assert(model:get(1).weight == nil and #model:parameters() == 0, 'the whole parameters are given up between steps')
end)

check('fsdp.linear_units_adam', function()
  local fsdp = fsdp_against_one_process('linear', 'Adam', {lr = 0.01})
  local shards = fsdp:parameters()
  assert(#shards == 2 and shards[1]:numel() == (36 + n - 1) // n and shards[2]:numel() == (21 + n - 1) // n,
         'a shard per nn.Linear')
end)

check('fsdp.state_dict', function()
  local fsdp, _, ref = fsdp_against_one_process('linear', 'SGD', {lr = 0.05})
  -- the whole state dict loads into the plain module, and computes what the sharded one does
  local plain = make_model(9)
  plain:load_state_dict(fsdp:state_dict())
  local X = batch(77)
  expect_close(plain(X), ref(X), 'the plain model from fsdp:state_dict()')
  expect_close(fsdp(X):detach(), ref(X), 'the sharded model\'s forward')
  -- and loads back into another sharded one (each rank keeping its shard)
  local other = d.FullyShardedDataParallel(make_model(5), {auto_wrap_policy = 'linear'})
  other:load_state_dict(ref:state_dict())
  expect_close(other(X):detach(), ref(X), 'a sharded model loaded from a state dict')
end)

check('fsdp.shared_module', function()
  -- one nn.Linear used twice: its parameters are one unit, met once
  torch.manual_seed(4)
  local lin = nn.Linear(4, 4):double()
  local model = nn.Sequential(lin, nn.Tanh(), lin)
  torch.manual_seed(4)
  local rlin = nn.Linear(4, 4):double()
  local ref = nn.Sequential(rlin, nn.Tanh(), rlin)
  local fsdp = d.FullyShardedDataParallel(model, {auto_wrap_policy = 'linear'})
  assert(#fsdp:parameters() == 1, 'one unit')
  local optim = require 'optim'
  local opt, ropt = optim.SGD(fsdp:parameters(), {lr = 0.1}), optim.SGD(ref:parameters(), {lr = 0.1})
  for step = 1, 3 do
    torch.manual_seed(500 + step)
    local X, Y = torch.randn(B * n, 4, {dtype = 'float64'}), torch.randn(B * n, 4, {dtype = 'float64'})
    opt:zero_grad(); ropt:zero_grad()
    ;((fsdp(mine(X)) - mine(Y)) ^ 2):mean():backward()
    ;((ref(X) - Y) ^ 2):mean():backward()
    opt:step(); ropt:step()
  end
  local sd = fsdp:state_dict()
  expect_close(sd['1.weight'], rlin.weight:detach(), 'the shared weight')
  expect_close(sd['3.weight'], rlin.weight:detach(), 'the shared weight, second place')
end)

check('fsdp.errors', function()
  local ok, err = pcall(d.FullyShardedDataParallel, make_model(0), {auto_wrap_policy = 'conv'})
  assert(not ok and tostring(err):find("auto_wrap_policy='conv': the named policy is 'linear'", 1, true), tostring(err))
  ok, err = pcall(d.FullyShardedDataParallel, make_model(0), {cpu_offload = true})
  assert(not ok and tostring(err):find('unknown option cpu_offload', 1, true), tostring(err))
  ok, err = pcall(d.FullyShardedDataParallel, 'model')
  assert(not ok and tostring(err):find('expected a module, got string', 1, true), tostring(err))
end)

check('ddp.errors', function()
  local ok, err = pcall(nn.DistributedDataParallel, make_model(0), {bucket_cap_mb = 0})
  assert(not ok and tostring(err):find('bucket_cap_mb must be > 0, got 0', 1, true), tostring(err))
  ok, err = pcall(nn.DistributedDataParallel, make_model(0), {bucket_size = 1})
  assert(not ok and tostring(err):find('unknown option bucket_size', 1, true), tostring(err))
  ok, err = pcall(nn.DistributedDataParallel, 42)
  assert(not ok and tostring(err):find('expected a module, got number', 1, true), tostring(err))
end)

d.destroy_process_group()
check('destroyed', function()
  assert(not d.is_initialized())
  local ok, err = pcall(d.get_rank)
  assert(not ok and err:find('not initialised'), err)
end)
