-- spec/support/nccl_checks.lua: what spec/distributed_nccl_spec.lua runs on every rank
-- of an NCCL group on a GPU machine (not a spec itself): `RANK=0 WORLD_SIZE=1 th
-- nccl_checks.lua` on one GPU, `th --nproc N nccl_checks.lua` where there are N. Each
-- check prints "CHECK <name> <rank> ok" or "CHECK <name> <rank> FAIL <why>". Expected
-- values come from each collective's definition over values that depend on the rank.
local torch = require 'torch'
local d = require 'distributed'

d.init_process_group{backend = 'nccl', timeout = 60}
local rank, n = d.get_rank(), d.get_world_size()
local dev = d._default_device()

local function check(name, fn)
  local ok, err = pcall(fn)
  io.write(('CHECK %s %d %s\n'):format(name, rank, ok and 'ok' or ('FAIL ' .. tostring(err):gsub('\n', ' '))))
  io.stdout:flush()
end

local function on(t) return t:to(dev) end
local function expect_equal(got, want, what)
  got = got:to('cpu')
  if not torch.equal(got, want) then
    error(('%s: got %s, want %s'):format(what or 'value', tostring(got:double()), tostring(want:double())), 2)
  end
end

check('group', function()
  assert(d.get_backend() == 'nccl' and d.is_initialized(), 'backend')
  assert(dev == 'cuda:' .. torch.cuda.current_device(), 'the group\'s device is the current one: ' .. dev)
end)

local sum, prod = n * (n + 1) / 2, 1
for k = 2, n do prod = prod * k end
for _, dt in ipairs({'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int32', 'int64'}) do
  check('all_reduce.' .. dt, function()
    for _, case in ipairs({{'sum', sum}, {'product', prod}, {'min', 1}, {'max', n}}) do
      local t = on(torch.full({3, 5}, rank + 1, {dtype = dt}))
      d.all_reduce(t, {op = case[1]})
      expect_equal(t, torch.full({3, 5}, case[2], {dtype = dt}), case[1])
    end
  end)
end

check('all_reduce.bool', function()
  local t = on(torch.full({4}, rank == 0, {dtype = 'bool'}))
  d.all_reduce(t, {op = 'sum'})                                  -- or
  expect_equal(t, torch.full({4}, true, {dtype = 'bool'}), 'or')
  t = on(torch.full({4}, rank == 0, {dtype = 'bool'}))
  d.all_reduce(t, {op = 'min'})                                  -- and
  expect_equal(t, torch.full({4}, n == 1, {dtype = 'bool'}), 'and')
end)

check('all_reduce.avg_noncontiguous', function()
  local t = on(torch.full({4, 6}, rank + 1.0)):t()              -- a transposed view: copied back
  d.all_reduce(t, {op = 'avg'})
  expect_equal(t, torch.full({6, 4}, (n + 1) / 2), 'avg')
end)

check('broadcast_reduce', function()
  local src = n - 1
  local b = on(torch.full({7}, rank * 10 + 1, {dtype = 'int16'}))   -- int16 travels as bytes
  d.broadcast(b, {src = src})
  expect_equal(b, torch.full({7}, src * 10 + 1, {dtype = 'int16'}))
  local r = on(torch.full({5}, rank + 1.0))
  d.reduce(r, {dst = 0})
  expect_equal(r, torch.full({5}, rank == 0 and sum or rank + 1.0))
end)

check('all_gather', function()
  local list = d.all_gather({}, on(torch.full({2, 3}, rank, {dtype = 'int64'})))
  assert(#list == n, '#list')
  for i = 1, n do expect_equal(list[i], torch.full({2, 3}, i - 1, {dtype = 'int64'}), 'list[' .. i .. ']') end
  local out = on(torch.zeros(n * 4))
  d.all_gather_into_tensor(out, on(torch.arange(1, 5) + 100 * rank))
  local want = torch.zeros(n * 4)
  for r = 0, n - 1 do want:narrow(1, r * 4 + 1, 4):copy(torch.arange(1, 5) + 100 * r) end
  expect_equal(out, want, 'into a tensor')
end)

check('reduce_scatter', function()
  local input = on(torch.arange(1, n * 3 + 1) * (rank + 1))     -- block r: 3r+1 .. 3r+3, times (rank + 1)
  local out = on(torch.zeros(3))
  d.reduce_scatter_tensor(out, input)
  expect_equal(out, (torch.arange(rank * 3 + 1, rank * 3 + 4)) * sum)
end)

check('gather_scatter_all_to_all', function()
  local list = rank == 0 and {} or nil
  d.gather(on(torch.full({2}, rank * 1.0)), list, {dst = 0})
  if rank == 0 then for i = 1, n do expect_equal(list[i], torch.full({2}, i - 1.0), 'gather ' .. i) end end
  local got = on(torch.zeros(3))
  local parts
  if rank == 0 then parts = {} for i = 1, n do parts[i] = on(torch.full({3}, i * 2.0)) end end
  d.scatter(got, parts, {src = 0})
  expect_equal(got, torch.full({3}, (rank + 1) * 2.0), 'scatter')
  local input = on(torch.arange(0, n) + 10 * rank)             -- element j goes to rank j
  local output = on(torch.zeros(n))
  d.all_to_all_single(output, input)
  expect_equal(output, torch.arange(0, n) * 10 + rank, 'all_to_all_single')
end)

check('async_and_barrier', function()
  local t = on(torch.full({1000}, rank + 1.0))
  local h = d.all_reduce(t, {async_op = true})
  h:wait()
  expect_equal(t, torch.full({1000}, sum), 'after wait')
  torch.cuda.synchronize()
  assert(h:is_completed(), 'completed once the device is synchronised')
  d.barrier()
  d.barrier({async_op = true}):wait()
end)

check('objects', function()
  local objs = {}
  d.all_gather_object(objs, {rank = rank, name = 'r' .. rank})
  for i = 1, n do assert(objs[i].rank == i - 1 and objs[i].name == 'r' .. (i - 1), 'object ' .. i) end
  local list = rank == 0 and {'a', {b = 2}} or {}
  d.broadcast_object_list(list, {src = 0})
  assert(list[1] == 'a' and list[2].b == 2, 'broadcast_object_list')
end)

check('errors', function()
  local ok, err = pcall(d.all_reduce, torch.ones(2))
  assert(not ok and tostring(err):find('is on cpu; this rank\'s NCCL group works on ' .. dev, 1, true), tostring(err))
  ok, err = pcall(d.all_reduce, on(torch.ones(2, {dtype = 'int16'})))
  assert(not ok and tostring(err):find('NCCL cannot reduce int16 tensors', 1, true), tostring(err))
end)

if n >= 2 then
  check('send_recv', function()
    if rank == 0 then d.send(on(torch.full({6}, 3.5)), 1)
    elseif rank == 1 then
      local t = on(torch.zeros(6))
      assert(d.recv(t, 0) == 0, 'recv gives the sender')
      expect_equal(t, torch.full({6}, 3.5))
    end
  end)
end

check('ddp', function()
  local nn, optim = require 'nn', require 'optim'
  torch.manual_seed(7)
  local model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2)):double():to(dev)
  local ref = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2)):double()
  ref:load_state_dict(model:state_dict())
  local ddp = nn.DistributedDataParallel(model)
  local opt, ropt = optim.SGD(ddp:parameters(), {lr = 0.1}), optim.SGD(ref:parameters(), {lr = 0.1})
  for step = 1, 3 do
    torch.manual_seed(100 + step)
    local x, y = torch.randn(2 * n, 5, {dtype = 'float64'}), torch.randn(2 * n, 2, {dtype = 'float64'})
    opt:zero_grad(); ropt:zero_grad()
    nn.F.mse_loss(ddp(on(x:narrow(1, rank * 2 + 1, 2))), on(y:narrow(1, rank * 2 + 1, 2))):backward()
    nn.F.mse_loss(ref(x), y):backward()
    opt:step(); ropt:step()
  end
  local p, q = model:parameters(), ref:parameters()
  for i = 1, #p do
    local diff = (p[i]:to('cpu') - q[i]):abs():max():item()
    assert(diff < 1e-12, ('parameter %d differs by %g from one process on the whole batch'):format(i, diff))
  end
end)

d.destroy_process_group()
io.write(('CHECK destroyed %d ok\n'):format(rank))
