-- distributed: process groups and collectives over MPI (OpenMPI) for CPU
-- tensors and NCCL for CUDA tensors, for training across processes and
-- machines. `local distributed = require 'distributed'` (also
-- torch.distributed). Run a script under mpirun (or th --nproc):
--   mpirun -np 2 th train.lua
-- Ranks count from 0, as mpirun, RANK/WORLD_SIZE and every log line do (the
-- one exception to 1-based numbering). The collectives work in place on CPU
-- tensors of every dtype, calling MPI on the tensor's memory (a
-- non-contiguous tensor goes through a contiguous copy, copied back).
-- docs/distributed.md says what exists and what does not yet.
local torch = require 'torch'

local distributed = {}
package.loaded.distributed = distributed

-- the reduction ops, as PyTorch's torch.distributed.ReduceOp (strings here)
distributed.ReduceOp = {SUM = 'sum', AVG = 'avg', PRODUCT = 'product', MIN = 'min', MAX = 'max'}

local backend            -- the functions of build/distributed/mpi.so or nccl.so, once loaded
local default_group      -- the default group: {backend=, rank=, world=, timeout=}, nil before init
local group              -- the group the current collective runs in: default_group, or a new_group's
                         -- (check_group resets it, options picks the one opts.group names)

local BUILT = {
  mpi = 'install OpenMPI (libopenmpi-dev openmpi-bin, as scripts/deps.sh does) and run make again (without MPI=0)',
  nccl = 'it is built with the CUDA backend where the CUDA toolkit has NCCL: run make (without CUDA=0 or NCCL=0) '
         .. 'on a machine with the toolkit',
}

-- the functions of build/distributed/<name>.so
local function load_backend(name, level)
  local path = package.searchpath('distributed.' .. name, package.cpath)
  if not path then
    error(('distributed.init_process_group: the %s backend (distributed/%s.so) is not built: %s'):format(
          name:upper(), name, BUILT[name]), level + 1)
  end
  local open, err = package.loadlib(path, 'luaopen_distributed_' .. name)
  if not open then
    error(('distributed.init_process_group: the %s backend could not be loaded: %s'):format(name:upper(),
          tostring(err)), level + 1)
  end
  return open()(getmetatable(torch.empty(0)))
end

-- "distributed.op (rank r of n): " for the Lua side's messages
local function where(op)
  return ('distributed.%s (rank %d of %d): '):format(op, group.rank, group.world)
end

local function check_group(op, level)
  group = default_group
  if backend and group then backend.use(nil) end
  if not group then
    error(('distributed.%s: the default process group is not initialised: call '
           .. "distributed.init_process_group{backend='mpi'} first"):format(op), level + 1)
  end
end

-- a group of distributed.new_group: its ranks (of the default group, sorted), whether this
-- process is one, this process's rank in it (-1 when not) and its size; the backend's
-- communicator in c
local ProcessGroup = {}
ProcessGroup.__index = ProcessGroup
ProcessGroup.__name = 'distributed.ProcessGroup'
function ProcessGroup.__tostring(g)
  return ('distributed.ProcessGroup(ranks {%s}%s)'):format(table.concat(g.ranks, ', '),
         g.member and (', this rank %d in it'):format(g.rank) or ', this rank not in it')
end

-- the options table at a call, checked against the names it may hold
local function options(op, opts, allowed, level)
  if opts == nil then return {} end
  if type(opts) ~= 'table' then
    error(('distributed.%s: expected the options as a table, got %s'):format(op, type(opts)), level + 1)
  end
  for k in pairs(opts) do
    if not allowed[k] and k ~= 'async_op' and k ~= 'group' then
      local names = {}
      for name in pairs(allowed) do names[#names + 1] = name end
      table.sort(names)
      error(('distributed.%s: unknown option %s (it takes %s)'):format(op, tostring(k),
            #names > 0 and table.concat(names, ', ') or 'none'), level + 1)
    end
  end
  local g = opts.group
  if g ~= nil and g ~= distributed.group.WORLD then
    if getmetatable(g) ~= ProcessGroup then
      error(('distributed.%s: group= takes distributed.group.WORLD or a group of distributed.new_group, got %s')
            :format(op, torch.typename(g) or type(g)), level + 1)
    end
    if not g.member then
      error(('distributed.%s: rank %d is not in this group (ranks {%s}): only its members call its collectives')
            :format(op, default_group.rank, table.concat(g.ranks, ', ')), level + 1)
    end
    local err = backend.use(g.c)
    if err then error(err, level + 1) end
    group = g
  end
  return opts
end

-- ---- asynchronous operations (async_op=true, isend, irecv) ----
-- A handle: h:wait() returns once the operation is done (raising, at the caller's line,
-- what went wrong) and gives its result; h:is_completed() says whether it is done
-- without blocking. all_reduce, reduce, broadcast, barrier, isend and irecv run as MPI's
-- nonblocking calls, so that computation goes on while the data moves; the other
-- collectives complete before they return a handle (already completed).
local Work = {}
Work.__index = Work
Work.__name = 'distributed.Work'
function Work.__tostring(h) return ('distributed.Work(%s%s)'):format(h.op, h.done and ', completed' or '') end

local function finish_work(h, err, level)
  if h.done then return end
  h.done = true
  if err then error(err, level + 1) end
  if h.after then h.after() end
end

-- h:wait(): blocks until the operation is done; returns its result (the tensor, the
-- sender's rank for irecv)
function Work:wait()
  if getmetatable(self) ~= Work then error('distributed.Work:wait: called with \'.\' (use a colon: h:wait())', 2) end
  if not self.done then finish_work(self, self.c and self.c:wait(), 2) end
  return self.value
end

-- h:is_completed(): whether the operation is done (never blocks)
function Work:is_completed()
  if getmetatable(self) ~= Work then
    error('distributed.Work:is_completed: called with \'.\' (use a colon: h:is_completed())', 2)
  end
  if self.done then return true end
  local ok, err = self.c:is_completed()
  if ok then finish_work(self, err, 2) end
  return ok
end

-- h:result(): the result once done (waits), as PyTorch's Work.result()
function Work:result() return self:wait() end

-- a handle over the backend's work c (nil: already completed), with value its result
-- and after() what completes it on this side (avg's division)
local function new_work(op, c, value, after)
  local h = setmetatable({op = op, c = c, value = value, after = after, done = c == nil}, Work)
  if c == nil and after then after() end
  return h
end
distributed.Work = Work

-- a collective's return: its result, or with async_op=true a handle (completed: the
-- collectives without a nonblocking form have run by now)
local function result(opts, value)
  if opts and opts.async_op then return new_work('collective', nil, value) end
  return value
end

-- the backend's answer to an asynchronous call: its work, or a message to raise
local function started(op, r, value, after, level)
  if type(r) == 'string' then error(r, level + 1) end
  return new_work(op, r, value, after)
end

local function check_tensor(op, t, what, level)
  if not torch.isTensor(t) then
    error(('distributed.%s: expected %s to be a tensor, got %s'):format(op, what, torch.typename(t) or type(t)),
          level + 1)
  end
  if default_group.backend == 'mpi' and t.device ~= 'cpu' then
    error(('distributed.%s: %s is on %s; the MPI backend takes CPU tensors (init_process_group{backend=\'nccl\'} '
           .. 'takes CUDA tensors)'):format(op, what, tostring(t.device)), level + 1)
  elseif default_group.backend == 'nccl' and t.device ~= default_group.device then
    error(('distributed.%s: %s is on %s; this rank\'s NCCL group works on %s (move it with :to(\'%s\'))')
          :format(op, what, tostring(t.device), default_group.device, default_group.device), level + 1)
  end
end

-- a rank argument (src=, dst=): an integer in 0 .. world size - 1
local function check_rank(op, name, r, level)
  if math.type(r) ~= 'integer' and not (type(r) == 'number' and r == math.floor(r)) then
    error(('%s%s= must be a rank (an integer), got %s'):format(where(op), name, tostring(r)), level + 1)
  end
  r = math.tointeger(r)
  if group.ranks then                 -- a new_group's: src=/dst= name ranks of the default group
    for i, q in ipairs(group.ranks) do if q == r then return i - 1 end end
    error(('%s%s=%s is not in this group (ranks {%s}; src= and dst= name ranks of the default group)')
          :format(where(op), name, tostring(r), table.concat(group.ranks, ', ')), level + 1)
  end
  if not r or r < 0 or r >= group.world then
    error(('%s%s=%s is no rank: ranks run from 0 to %d (world size %d; ranks count from 0)'):format(where(op),
          name, tostring(r), group.world - 1, group.world), level + 1)
  end
  return r
end

local REDUCE_OPS = {sum = true, avg = true, product = true, min = true, max = true}
local function check_op(op, t, name, level)
  name = name == nil and 'sum' or name
  if not REDUCE_OPS[name] then
    error(("%sop='%s' is no reduction (it takes 'sum', 'avg', 'product', 'min' or 'max')"):format(where(op),
          tostring(name)), level + 1)
  end
  if name == 'avg' and not t:is_floating_point() then
    error(("%sop='avg' needs a floating-point tensor, got %s (as in PyTorch: use 'sum' and divide)")
          :format(where(op), t.dtype), level + 1)
  end
  return name
end

-- the default group, as PyTorch's torch.distributed.group.WORLD
distributed.group = {WORLD = setmetatable({}, {__tostring = function() return 'distributed.group.WORLD' end})}

-- an integer from the first of the environment variables names that is set
local function env_integer(names, what, level)
  for _, name in ipairs(names) do
    local v = os.getenv(name)
    if v ~= nil and v ~= '' then
      local n = math.tointeger(tonumber(v))
      if not n or n < 0 then
        error(('distributed.init_process_group: %s=%s is not %s (an integer >= 0)'):format(name, v, what), level + 1)
      end
      return n
    end
  end
end

-- the NCCL backend's process group: rank and world size from rank=/world_size=, RANK and
-- WORLD_SIZE, or mpirun's; the device from LOCAL_RANK (or mpirun's local rank); rank 0's
-- NCCL id handed to the others at MASTER_ADDR:MASTER_PORT (build/distributed/store.so)
local function init_nccl(opts, debug_on, timeout, level)
  local rank = opts.rank
  if rank == nil then rank = env_integer({'RANK', 'OMPI_COMM_WORLD_RANK', 'PMI_RANK'}, 'a rank', level + 1) end
  local world = opts.world_size
  if world == nil then
    world = env_integer({'WORLD_SIZE', 'OMPI_COMM_WORLD_SIZE', 'PMI_SIZE'}, 'a world size', level + 1)
  end
  if rank == nil or world == nil then
    error("distributed.init_process_group: backend='nccl' needs this process's rank and the world size: pass "
          .. 'rank= and world_size=, set RANK and WORLD_SIZE, or start the script with th --nproc N or mpirun',
          level + 1)
  end
  if math.type(rank) ~= 'integer' or math.type(world) ~= 'integer' or world < 1 or rank < 0 or rank >= world then
    error(('distributed.init_process_group: rank %s of world size %s: ranks count from 0 to world size - 1')
          :format(tostring(rank), tostring(world)), level + 1)
  end
  local addr, port = os.getenv('MASTER_ADDR'), os.getenv('MASTER_PORT')
  if world > 1 and (not addr or addr == '' or not port or port == '') then
    error('distributed.init_process_group: backend=\'nccl\' hands rank 0\'s NCCL id to the others over TCP: set '
          .. 'MASTER_ADDR (rank 0\'s host) and MASTER_PORT (a free port on it) on every rank (th --nproc sets them)',
          level + 1)
  end
  local nport = math.tointeger(tonumber(port or '0'))
  if world > 1 and (not nport or nport < 1 or nport > 65535) then
    error(('distributed.init_process_group: MASTER_PORT=%s is not a port (1 to 65535)'):format(port), level + 1)
  end
  if not torch.cuda.is_available() then
    error("distributed.init_process_group: backend='nccl' takes CUDA tensors, and there is no CUDA device: "
          .. torch.cuda.unavailable_reason() .. " (backend='mpi' runs on CPU tensors)", level + 1)
  end
  local local_rank = env_integer({'LOCAL_RANK', 'OMPI_COMM_WORLD_LOCAL_RANK', 'MPI_LOCALRANKID'}, 'a local rank',
                                 level + 1) or rank
  local dev = local_rank % torch.cuda.device_count()
  torch.cuda.set_device(dev)
  local C = load_backend('nccl', level + 1)
  local id = rank == 0 and C.unique_id() or nil
  if world > 1 then
    local store = package.loadlib(assert(package.searchpath('distributed.store', package.cpath),
                                         'distributed/store.so is not built'), 'luaopen_distributed_store')()
    local err
    id, err = store.exchange(addr, nport, rank, world, id, timeout)
    if not id then error(err, level + 1) end
  end
  local r, w = C.init(debug_on, timeout, rank, world, dev, id)
  if not r then error(('distributed.init_process_group (rank %d of %d): %s'):format(rank, world, w), level + 1) end
  return C, rank, world, 'cuda:' .. dev
end

-- distributed.init_process_group{backend='mpi', timeout=1800}: joins the
-- default process group. backend='mpi' (CPU tensors): rank and world size
-- come from MPI (start the script with mpirun or th --nproc); rank= and
-- world_size=, when given, must agree with them. backend='nccl' (CUDA
-- tensors): rank and world size from rank=/world_size=, RANK/WORLD_SIZE or
-- mpirun, the device from LOCAL_RANK, and rank 0 reached at
-- MASTER_ADDR:MASTER_PORT (docs/distributed.md). A collective that waits
-- longer than timeout (seconds, default 1800, as PyTorch) for the other
-- ranks prints what timed out and ends the process. Set
-- TH_DISTRIBUTED_DEBUG=1 to check, before each collective, that every rank
-- passes the same shape and dtype.
function distributed.init_process_group(opts)
  if type(opts) == 'string' then opts = {backend = opts} end
  opts = options('init_process_group', opts, {backend = true, timeout = true, rank = true, world_size = true,
                 init_method = true}, 2)
  if group then error('distributed.init_process_group: the default process group is already initialised', 2) end
  local name = opts.backend or 'mpi'
  if name ~= 'mpi' and name ~= 'nccl' then
    error(("distributed.init_process_group: unknown backend '%s' (backend='mpi' for CPU tensors, 'nccl' for "
           .. "CUDA tensors)"):format(tostring(name)), 2)
  end
  local timeout = opts.timeout or 1800
  if type(timeout) ~= 'number' or not (timeout > 0) then
    error(('distributed.init_process_group: timeout= must be a number of seconds > 0, got %s'):format(
          tostring(opts.timeout)), 2)
  end
  if opts.init_method ~= nil and opts.init_method ~= 'env://' and opts.init_method ~= 'mpi://' then
    error(('distributed.init_process_group: init_method=%s: the ranks find each other through mpirun or the '
           .. 'environment (env://)'):format(tostring(opts.init_method)), 2)
  end
  local debug_env = os.getenv('TH_DISTRIBUTED_DEBUG')
  local debug_on = debug_env ~= nil and debug_env ~= '' and debug_env ~= '0'
  local C, rank, world, device
  if name == 'nccl' then
    C, rank, world, device = init_nccl(opts, debug_on, timeout, 2)
  else
    C = load_backend('mpi', 2)
    rank, world = C.init(debug_on, timeout)
    if not rank then error('distributed.init_process_group: ' .. world, 2) end
    for key, value in pairs({rank = rank, world_size = world}) do
      if opts[key] ~= nil and opts[key] ~= value then
        C.destroy()
        error(('distributed.init_process_group: %s=%s, but mpirun started this process as rank %d of %d '
               .. '(ranks count from 0)'):format(key, tostring(opts[key]), rank, world), 2)
      end
    end
    device = 'cpu'
  end
  backend = C
  default_group = {backend = name, rank = rank, world = world, timeout = timeout, device = device}
  group = default_group
end

-- distributed.is_initialized(): whether the default process group is initialised
function distributed.is_initialized() return group ~= nil end

-- distributed.is_mpi_available(): whether the MPI backend is built (distributed/mpi.so)
function distributed.is_mpi_available() return package.searchpath('distributed.mpi', package.cpath) ~= nil end

-- distributed.is_nccl_available(): whether the NCCL backend is built (distributed/nccl.so)
function distributed.is_nccl_available() return package.searchpath('distributed.nccl', package.cpath) ~= nil end

-- distributed.is_available(): whether a backend is built (MPI or NCCL)
function distributed.is_available() return distributed.is_mpi_available() or distributed.is_nccl_available() end

-- distributed.get_rank(): this process's rank, 0 .. get_world_size() - 1 (ranks count from 0)
function distributed.get_rank(g)
  check_group('get_rank', 2)
  if g ~= nil and g ~= distributed.group.WORLD then
    if getmetatable(g) ~= ProcessGroup then
      error('distributed.get_rank: expected a group of distributed.new_group, got ' .. (torch.typename(g) or type(g)), 2)
    end
    return g.rank
  end
  return group.rank
end

-- distributed.get_world_size(): the number of processes in the default group
function distributed.get_world_size(g)
  check_group('get_world_size', 2)
  if g ~= nil and g ~= distributed.group.WORLD then
    if getmetatable(g) ~= ProcessGroup then
      error('distributed.get_world_size: expected a group of distributed.new_group, got '
            .. (torch.typename(g) or type(g)), 2)
    end
    return g.world
  end
  return group.world
end

-- distributed.new_group(ranks): a group of some of the default group's ranks (a Lua list of
-- distinct ranks, counted from 0; nil: all), for collectives with {group = g}. Every rank
-- of the default group calls it with the same list (checked); the members' collectives on
-- it run among them alone, with ranks in it numbered by their order (get_rank(g)), while
-- src= and dst= keep naming ranks of the default group, as PyTorch's. A rank outside it
-- gets a group it may not call collectives on (get_rank(g) is -1).
function distributed.new_group(ranks, opts)
  check_group('new_group', 2)
  if type(ranks) == 'table' and ranks.ranks ~= nil and opts == nil then ranks, opts = ranks.ranks, ranks end
  options('new_group', opts, {ranks = true, timeout = true, backend = true}, 2)
  local list = {}
  if ranks == nil then
    for r = 0, default_group.world - 1 do list[#list + 1] = r end
  elseif type(ranks) ~= 'table' or torch.isTensor(ranks) then
    error(('distributed.new_group: ranks must be a Lua list of ranks, got %s'):format(torch.typename(ranks) or
          type(ranks)), 2)
  else
    local seen = {}
    for i, r in ipairs(ranks) do
      if math.type(r) ~= 'integer' or r < 0 or r >= default_group.world then
        error(('distributed.new_group: ranks[%d] = %s is no rank: ranks run from 0 to %d'):format(i, tostring(r),
              default_group.world - 1), 2)
      end
      if seen[r] then error(('distributed.new_group: rank %d is listed twice'):format(r), 2) end
      seen[r] = true
      list[#list + 1] = r
    end
    if #list == 0 then error('distributed.new_group: ranks is empty', 2) end
    table.sort(list)
  end
  local c = backend.new_group(list)
  if type(c) == 'string' then error(c, 2) end
  local me = -1
  for i, r in ipairs(list) do if r == default_group.rank then me = i - 1 end end
  return setmetatable({ranks = list, c = c or nil, member = c ~= false, rank = me, world = #list,
                       backend = default_group.backend, timeout = default_group.timeout}, ProcessGroup)
end

-- the device the default group's collectives take tensors on ('cpu' for MPI, 'cuda:N' for NCCL)
function distributed._default_device()
  check_group('_default_device', 2)
  return default_group.device
end

-- distributed.get_backend(): 'mpi' or 'nccl'
function distributed.get_backend()
  check_group('get_backend', 2)
  return group.backend
end

-- distributed.get_timeout(): the timeout init_process_group was given, in seconds
function distributed.get_timeout()
  check_group('get_timeout', 2)
  return group.timeout
end

-- distributed.destroy_process_group(): leaves the default group and
-- finalises MPI. Call it on every rank at the end of the script: a rank that
-- ends without it (an error) makes mpirun stop the others. MPI starts once
-- per process: init_process_group cannot follow it.
function distributed.destroy_process_group()
  check_group('destroy_process_group', 2)
  local err = backend.destroy()
  group, default_group = nil, nil
  if err then error(err, 2) end
end

-- distributed.barrier(): returns once every rank has called it
function distributed.barrier(opts)
  check_group('barrier', 2)
  opts = options('barrier', opts, {}, 2)
  if opts.async_op then return started('barrier', backend.barrier(true), nil, nil, 2) end
  local err = backend.barrier()
  if err then error(err, 2) end
end

-- distributed.all_reduce(t, {op='sum'}): t becomes, on every rank, the
-- reduction of all ranks' t; op is 'sum', 'avg' (floating dtypes only),
-- 'product', 'min' or 'max' (or distributed.ReduceOp.SUM, ...). bool: sum
-- and max are a logical or, product and min a logical and. float16 and
-- bfloat16 are reduced in float32. Returns t.
function distributed.all_reduce(t, opts)
  check_group('all_reduce', 2)
  check_tensor('all_reduce', t, 'the tensor', 2)
  if type(opts) == 'string' then opts = {op = opts} end
  opts = options('all_reduce', opts, {op = true}, 2)
  local op = check_op('all_reduce', t, opts.op, 2)
  local world = group.world
  if opts.async_op then
    return started('all_reduce', backend.all_reduce(t, op == 'avg' and 'sum' or op, true), t,
                   op == 'avg' and function() t:div_(world) end or nil, 2)
  end
  local err = backend.all_reduce(t, op == 'avg' and 'sum' or op)
  if err then error(err, 2) end
  if op == 'avg' then t:div_(world) end
  return t
end

-- distributed.reduce(t, {dst=0, op='sum'}): rank dst's t becomes the
-- reduction of all ranks' t (ops as all_reduce's); the others' t are left
-- as they were. Returns t.
function distributed.reduce(t, opts)
  check_group('reduce', 2)
  check_tensor('reduce', t, 'the tensor', 2)
  opts = options('reduce', opts, {op = true, dst = true}, 2)
  local dst = check_rank('reduce', 'dst', opts.dst == nil and 0 or opts.dst, 2)
  local op = check_op('reduce', t, opts.op, 2)
  local world, on_dst = group.world, group.rank == dst
  if opts.async_op then
    return started('reduce', backend.reduce(t, op == 'avg' and 'sum' or op, dst, true), t,
                   op == 'avg' and on_dst and function() t:div_(world) end or nil, 2)
  end
  local err = backend.reduce(t, op == 'avg' and 'sum' or op, dst)
  if err then error(err, 2) end
  if op == 'avg' and on_dst then t:div_(world) end
  return t
end

-- distributed.broadcast(t, {src=0}): every rank's t becomes rank src's.
-- Returns t.
function distributed.broadcast(t, opts)
  check_group('broadcast', 2)
  check_tensor('broadcast', t, 'the tensor', 2)
  if type(opts) == 'number' then opts = {src = opts} end
  opts = options('broadcast', opts, {src = true}, 2)
  local src = check_rank('broadcast', 'src', opts.src == nil and 0 or opts.src, 2)
  if opts.async_op then return started('broadcast', backend.broadcast(t, src, 'broadcast', true), t, nil, 2) end
  local err = backend.broadcast(t, src)
  if err then error(err, 2) end
  return t
end

-- a collective from one input tensor into one output tensor, without options:
-- the checks, then run(out, input, name), the backend's call; returns out
local function tensor_to_tensor(name, out, input, opts, run)
  check_tensor(name, out, 'the output', 3)
  check_tensor(name, input, 'the input', 3)
  opts = options(name, opts, {}, 3)
  local err = run(out, input, name)
  if err then error(err, 3) end
  return result(opts, out)
end

-- distributed.all_gather_into_tensor(out, t): out (world size x t's
-- elements, t's dtype: shape {world, ...} or {world * n, ...}) receives every
-- rank's t in rank order; t may be a view of out (its own rank's block, in
-- place). Returns out.
function distributed.all_gather_into_tensor(out, t, opts)
  check_group('all_gather_into_tensor', 2)
  local r = tensor_to_tensor('all_gather_into_tensor', out, t, opts, backend.all_gather)
  return r
end

-- distributed.all_gather(list, t): list[r + 1] receives rank r's t (Lua
-- lists count from 1, ranks from 0). An empty list is filled with new
-- tensors; otherwise it must hold world size tensors of t's shape and dtype,
-- written in place. With a tensor instead of a list, as
-- all_gather_into_tensor. Returns list.
function distributed.all_gather(list, t, opts)
  check_group('all_gather', 2)
  if torch.isTensor(list) then
    local r = tensor_to_tensor('all_gather', list, t, opts, backend.all_gather)
    return r
  end
  if type(list) ~= 'table' then
    error(('distributed.all_gather: expected a list of tensors (or a tensor) to gather into, got %s'):format(
          type(list)), 2)
  end
  check_tensor('all_gather', t, 'the input', 2)
  opts = options('all_gather', opts, {}, 2)
  local n = #list
  if n ~= 0 and n ~= group.world then
    error(('%sthe list holds %d tensors; it must hold one per rank (%d) or be empty'):format(where('all_gather'),
          n, group.world), 2)
  end
  for i = 1, n do
    local o = list[i]
    if not torch.isTensor(o) or o.dtype ~= t.dtype or o:size() ~= t:size() then
      error(('%slist[%d] is %s; it must be a %s tensor of shape %s, as the input'):format(where('all_gather'), i,
            torch.isTensor(o) and ('a %s tensor of shape %s'):format(o.dtype, tostring(o:size())) or type(o),
            t.dtype, tostring(t:size())), 2)
    end
  end
  local shape = {group.world}
  for d = 1, t:dim() do shape[d + 1] = t:size(d) end
  local buf = torch.empty(shape, {dtype = t.dtype, device = t.device})
  local err = backend.all_gather(buf, t, 'all_gather')
  if err then error(err, 2) end
  for i = 1, group.world do
    if n == 0 then list[i] = buf:select(1, i) else list[i]:copy(buf:select(1, i)) end
  end
  return result(opts, list)
end

-- a list argument: a Lua list of world-size tensors, each of shape and
-- dtype like (a tensor); an empty list is accepted when may_be_empty
local function check_list(op, list, what, like, may_be_empty, level)
  if type(list) ~= 'table' or torch.isTensor(list) then
    error(('%sexpected %s to be a list of tensors, got %s'):format(where(op), what,
          torch.typename(list) or type(list)), level + 1)
  end
  local n = #list
  if not (n == group.world or (may_be_empty and n == 0)) then
    error(('%s%s holds %d tensors; it must hold one per rank (%d)%s'):format(where(op), what, n, group.world,
          may_be_empty and ' or be empty' or ''), level + 1)
  end
  for i = 1, n do
    local o = list[i]
    if not torch.isTensor(o) or o.dtype ~= like.dtype or o:size() ~= like:size() then
      error(('%s%s[%d] is %s; it must be a %s tensor of shape %s'):format(where(op), what, i,
            torch.isTensor(o) and ('a %s tensor of shape %s'):format(o.dtype, tostring(o:size())) or type(o),
            like.dtype, tostring(like:size())), level + 1)
    end
    if o.device ~= 'cpu' then check_tensor(op, o, what .. '[' .. i .. ']', level + 1) end
  end
  return n
end

-- Checks of arguments that only some ranks have (a root's list, an object to
-- serialize): fn raises at level 5 (the caller of the collective, through
-- pcall and together). On failure this rank takes part in the agreement check
-- the others run in the collective, flagged, so that they raise too instead
-- of waiting for it until the timeout; then it raises its own message.
local AT_CALLER = 5
local function together(op, fn)
  local ok, err = pcall(fn)
  if ok then return err end
  error(backend.refuse(op) or err, 0)
end

-- a new contiguous tensor of shape {world, like's shape...}
local function stacked(like)
  local shape = {group.world}
  for k = 1, like:dim() do shape[k + 1] = like:size(k) end
  return torch.empty(shape, {dtype = like.dtype, device = like.device})
end

-- the list's tensors, one after the other in one new tensor
local function stack_list(list, like)
  local buf = stacked(like)
  for i = 1, group.world do buf:select(1, i):copy(list[i]) end
  return buf
end

-- buf's blocks into the list: new tensors into an empty list, copies into a full one
local function unstack_into(list, buf)
  local fill = #list == 0
  for i = 1, group.world do
    if fill then list[i] = buf:select(1, i) else list[i]:copy(buf:select(1, i)) end
  end
  return list
end

-- distributed.gather(t, gather_list, {dst=0}): rank dst's gather_list[r + 1]
-- receives rank r's t (ranks count from 0, Lua lists from 1). On dst,
-- gather_list holds world size tensors of t's shape and dtype, written in
-- place (or is empty, and is filled with new tensors); on the other ranks it
-- is nil. Returns gather_list.
function distributed.gather(t, gather_list, opts)
  check_group('gather', 2)
  check_tensor('gather', t, 'the tensor', 2)
  opts = options('gather', opts, {dst = true}, 2)
  local dst = check_rank('gather', 'dst', opts.dst == nil and 0 or opts.dst, 2)
  local buf
  together('gather', function()
    if group.rank == dst then
      check_list('gather', gather_list, 'gather_list', t, true, AT_CALLER)
      buf = stacked(t)
    elseif gather_list ~= nil then
      error(('%sgather_list must be nil on a rank other than dst=%d (it receives nothing)'):format(where('gather'),
            dst), AT_CALLER)
    end
  end)
  local err = backend.gather(t, buf, dst)
  if err then error(err, 2) end
  if buf then unstack_into(gather_list, buf) end
  return result(opts, gather_list)
end

-- distributed.scatter(t, scatter_list, {src=0}): every rank's t becomes
-- rank src's scatter_list[rank + 1]. On src, scatter_list holds world size
-- tensors of t's shape and dtype; on the other ranks it is nil. Returns t.
function distributed.scatter(t, scatter_list, opts)
  check_group('scatter', 2)
  check_tensor('scatter', t, 'the tensor', 2)
  opts = options('scatter', opts, {src = true}, 2)
  local src = check_rank('scatter', 'src', opts.src == nil and 0 or opts.src, 2)
  local buf
  together('scatter', function()
    if group.rank == src then
      check_list('scatter', scatter_list, 'scatter_list', t, false, AT_CALLER)
      buf = stack_list(scatter_list, t)
    elseif scatter_list ~= nil then
      error(('%sscatter_list must be nil on a rank other than src=%d (it sends nothing)'):format(where('scatter'),
            src), AT_CALLER)
    end
  end)
  local err = backend.scatter(t, buf, src)
  if err then error(err, 2) end
  return result(opts, t)
end

-- distributed.reduce_scatter_tensor(output, input, {op='sum'}): input
-- holds world size blocks of output's element count (shape {world, ...} or
-- {world * n, ...}); output becomes, on rank r, the reduction over the ranks
-- of their input's block r (ops as all_reduce's). Returns output.
function distributed.reduce_scatter_tensor(output, input, opts)
  check_group('reduce_scatter_tensor', 2)
  check_tensor('reduce_scatter_tensor', output, 'the output', 2)
  check_tensor('reduce_scatter_tensor', input, 'the input', 2)
  opts = options('reduce_scatter_tensor', opts, {op = true}, 2)
  local op = check_op('reduce_scatter_tensor', output, opts.op, 2)
  local err = backend.reduce_scatter(output, input, op == 'avg' and 'sum' or op, 'reduce_scatter_tensor')
  if err then error(err, 2) end
  if op == 'avg' then output:div_(group.world) end
  return result(opts, output)
end

-- distributed.reduce_scatter(output, input_list, {op='sum'}): output
-- becomes, on rank r, the reduction over the ranks of their
-- input_list[r + 1] (world size tensors of output's shape and dtype; ops as
-- all_reduce's). Returns output.
function distributed.reduce_scatter(output, input_list, opts)
  check_group('reduce_scatter', 2)
  check_tensor('reduce_scatter', output, 'the output', 2)
  opts = options('reduce_scatter', opts, {op = true}, 2)
  check_list('reduce_scatter', input_list, 'input_list', output, false, 2)
  local op = check_op('reduce_scatter', output, opts.op, 2)
  local err = backend.reduce_scatter(output, stack_list(input_list, output), op == 'avg' and 'sum' or op,
                                     'reduce_scatter')
  if err then error(err, 2) end
  if op == 'avg' then output:div_(group.world) end
  return result(opts, output)
end

-- the element counts of t's dim-1 splits (sizes, a Lua list of world row counts, or nil:
-- even splits) for an uneven all_to_all
local function split_counts(op, t, sizes, what, level)
  local rows = t:dim() > 0 and t:size(1) or 1
  local per_row = rows > 0 and t:numel() // rows or 0
  local counts = {}
  if sizes == nil then
    if rows % group.world ~= 0 then
      error(('%s%s is nil, so the %d rows of dim 1 split evenly, but not into %d ranks'):format(where(op), what,
            rows, group.world), level + 1)
    end
    for r = 1, group.world do counts[r] = rows // group.world * per_row end
    return counts
  end
  if type(sizes) ~= 'table' or #sizes ~= group.world then
    error(('%s%s must list %d row counts (one per rank), got %s'):format(where(op), what, group.world,
          type(sizes) == 'table' and #sizes .. ' values' or type(sizes)), level + 1)
  end
  local total = 0
  for r = 1, group.world do
    local k = sizes[r]
    if math.type(k) ~= 'integer' or k < 0 then
      error(('%s%s[%d] must be a row count >= 0, got %s'):format(where(op), what, r, tostring(k)), level + 1)
    end
    total = total + k
    counts[r] = k * per_row
  end
  if total ~= rows then
    error(('%s%s add up to %d rows, but dim 1 has %d'):format(where(op), what, total, rows), level + 1)
  end
  return counts
end

-- distributed.all_to_all_single(output, input, {output_split_sizes=, input_split_sizes=}):
-- input's rows (dim 1) split into world blocks, block r going to rank r; output's blocks
-- come from the ranks in rank order. Without split sizes, even splits: input's element
-- count is a multiple of the world size, its r-th block of numel / world elements goes to
-- rank r. With input_split_sizes (rows sent to each rank) and output_split_sizes (rows
-- received from each), uneven ones: rank s's input_split_sizes[r + 1] must equal rank r's
-- output_split_sizes[s + 1] (checked across the ranks). Returns output.
function distributed.all_to_all_single(output, input, opts)
  check_group('all_to_all_single', 2)
  if type(opts) == 'table' and (opts.input_split_sizes ~= nil or opts.output_split_sizes ~= nil) then
    check_tensor('all_to_all_single', output, 'the output', 2)
    check_tensor('all_to_all_single', input, 'the input', 2)
    opts = options('all_to_all_single', opts, {input_split_sizes = true, output_split_sizes = true}, 2)
    local sc = split_counts('all_to_all_single', input, opts.input_split_sizes, 'input_split_sizes', 2)
    local rc = split_counts('all_to_all_single', output, opts.output_split_sizes, 'output_split_sizes', 2)
    local err = backend.all_to_allv(output, input, sc, rc, 'all_to_all_single')
    if err then error(err, 2) end
    return result(opts, output)
  end
  local r = tensor_to_tensor('all_to_all_single', output, input, opts, backend.all_to_all)
  return r
end

-- distributed.all_to_all(output_list, input_list): input_list[r + 1] goes
-- to rank r, and output_list[r + 1] receives rank r's input_list[rank + 1].
-- input_list holds world size tensors of one shape and dtype (the same on
-- every rank); output_list as many of that shape and dtype, written in place,
-- or is empty and is filled with new tensors. Tensors of several shapes (uneven
-- splits) work too: then output_list holds the world size tensors to receive into, each
-- of the element count its sender sends (checked across the ranks). Returns output_list.
function distributed.all_to_all(output_list, input_list, opts)
  check_group('all_to_all', 2)
  opts = options('all_to_all', opts, {}, 2)
  if type(input_list) ~= 'table' or torch.isTensor(input_list) or not torch.isTensor(input_list[1]) then
    error(('%sexpected input_list to be a list of tensors, got %s'):format(where('all_to_all'),
          torch.typename(input_list) or type(input_list)), 2)
  end
  local like = input_list[1]
  check_tensor('all_to_all', like, 'input_list[1]', 2)
  -- tensors of several shapes (with an output_list to receive into): uneven splits
  local uneven = false
  for i = 1, type(output_list) == 'table' and #output_list > 0 and #input_list or 0 do
    uneven = uneven or not torch.isTensor(input_list[i]) or input_list[i]:size() ~= like:size()
  end
  for i = 1, type(output_list) == 'table' and #output_list or 0 do
    uneven = uneven or not torch.isTensor(output_list[i]) or output_list[i]:size() ~= like:size()
  end
  if uneven then
    -- one uneven exchange of their elements, flattened in order
    if #output_list ~= group.world or #input_list ~= group.world then
      error(('%sinput_list and output_list must each hold %d tensors'):format(where('all_to_all'), group.world), 2)
    end
    local sc, rc, flat_in = {}, {}, {}
    for i = 1, group.world do
      for _, pair in ipairs({{input_list[i], 'input_list'}, {output_list[i], 'output_list'}}) do
        local t = pair[1]
        if not torch.isTensor(t) or t.dtype ~= like.dtype then
          error(('%s%s[%d] must be a %s tensor, got %s'):format(where('all_to_all'), pair[2], i, like.dtype,
                torch.isTensor(t) and t.dtype or type(t)), 2)
        end
      end
      sc[i], rc[i] = input_list[i]:numel(), output_list[i]:numel()
      flat_in[i] = input_list[i]:reshape(-1)
    end
    local total = 0
    for i = 1, group.world do total = total + rc[i] end
    local out = torch.empty({total}, {dtype = like.dtype, device = like.device})
    local err = backend.all_to_allv(out, torch.cat(flat_in), sc, rc, 'all_to_all')
    if err then error(err, 2) end
    local at = 0
    for i = 1, group.world do
      output_list[i]:copy(out:narrow(1, at + 1, rc[i]):view(output_list[i]:size()))
      at = at + rc[i]
    end
    return result(opts, output_list)
  end
  check_list('all_to_all', input_list, 'input_list', like, false, 2)
  check_list('all_to_all', output_list, 'output_list', like, true, 2)
  local out = stacked(like)
  local err = backend.all_to_all(out, stack_list(input_list, like), 'all_to_all')
  if err then error(err, 2) end
  return result(opts, unstack_into(output_list, out))
end

-- ---- point to point ----

-- the peer and tag of send/recv's call: a rank number or {dst= / src=, tag=0}
local function p2p(op, t, peer, opts, key, level)
  check_group(op, level + 1)
  check_tensor(op, t, 'the tensor', level + 1)
  if type(peer) == 'table' then peer, opts = nil, peer end
  opts = options(op, opts, {[key] = true, tag = true}, level + 1)
  if peer == nil then peer = opts[key] end
  if peer == nil and key == 'dst' then error(('distributed.%s: dst= is required'):format(op), level + 1) end
  if peer ~= nil then peer = check_rank(op, key, peer, level + 1) end
  local tag = opts.tag or 0
  if math.type(tag) ~= 'integer' then
    error(('distributed.%s: tag= must be an integer, got %s'):format(op, tostring(opts.tag)), level + 1)
  end
  return peer, tag
end

-- distributed.send(t, dst) or send(t, {dst=, tag=0}): sends t to rank dst, whose recv
-- (or irecv) with the same tag takes it; returns once t may be changed again.
function distributed.send(t, dst, opts)
  local peer, tag = p2p('send', t, dst, opts, 'dst', 2)
  local err = backend.send(t, peer, tag)
  if err then error(err, 2) end
end

-- distributed.recv(t, src) or recv(t, {src=, tag=0}): t receives what rank src (any
-- rank when src is nil) sent with that tag, which must have t's element count and dtype;
-- returns the sender's rank.
function distributed.recv(t, src, opts)
  local peer, tag = p2p('recv', t, src, opts, 'src', 2)
  local r = backend.recv(t, peer, tag)
  if type(r) == 'string' then error(r, 2) end
  return r
end

-- distributed.isend(t, dst[, {tag=}]): send without waiting: a handle whose wait()
-- returns once t may be changed again.
function distributed.isend(t, dst, opts)
  local peer, tag = p2p('isend', t, dst, opts, 'dst', 2)
  return started('isend', backend.send(t, peer, tag, true), nil, nil, 2)
end

-- distributed.irecv(t, src[, {tag=}]): receive without waiting: a handle whose wait()
-- returns the sender's rank once t holds the message (src nil: from any rank).
function distributed.irecv(t, src, opts)
  local peer, tag = p2p('irecv', t, src, opts, 'src', 2)
  local h = started('irecv', backend.recv(t, peer, tag, true), nil, nil, 2)
  h.after = function() h.value = h.c:source() end
  return h
end

-- a Lua value as a uint8 tensor of torch.serialize's bytes
local function to_bytes(op, obj, level)
  local ok, s = pcall(torch.serialize, obj)
  if not ok then error(('%sthe object cannot be serialized: %s'):format(where(op), tostring(s)), level + 1) end
  return torch._tensor_from_bytes(s, 'uint8', {#s}, op)
end

local function from_bytes(op, bytes, level)
  local ok, v = pcall(torch.deserialize, torch._tensor_bytes(bytes:contiguous()))
  if not ok then error(('%sa rank sent bytes that do not deserialize: %s'):format(where(op), tostring(v)), level + 1) end
  return v
end

-- distributed.all_gather_object(object_list, obj): object_list[r + 1]
-- becomes rank r's obj (any Lua value torch.serialize takes: numbers,
-- strings, tables, tensors). Sizes travel first, then the bytes. Returns
-- object_list.
function distributed.all_gather_object(object_list, obj, opts)
  check_group('all_gather_object', 2)
  if type(object_list) ~= 'table' then
    error(('distributed.all_gather_object: expected a list to gather into, got %s'):format(type(object_list)), 2)
  end
  options('all_gather_object', opts, {}, 2)
  local bytes = together('all_gather_object', function()
    local b = to_bytes('all_gather_object', obj, AT_CALLER)
    return b                                     -- (not a tail call: it would change the levels)
  end)
  local dev = default_group.device
  local sizes = torch.empty({group.world}, {dtype = 'int64', device = dev})
  local err = backend.all_gather(sizes, torch.tensor({bytes:numel()}, {dtype = 'int64', device = dev}),
                                 'all_gather_object')
  if err then error(err, 2) end
  local max = sizes:max():item()
  local padded = torch.zeros({max}, {dtype = 'uint8', device = dev})
  if bytes:numel() > 0 then padded:narrow(1, 1, bytes:numel()):copy(bytes) end
  local all = torch.empty({group.world, max}, {dtype = 'uint8', device = dev})
  err = backend.all_gather(all, padded, 'all_gather_object')
  if err then error(err, 2) end
  all, sizes = all:to('cpu'), sizes:to('cpu')
  for i = 1, group.world do
    object_list[i] = from_bytes('all_gather_object', all:select(1, i):narrow(1, 1, sizes[i]), 2)
  end
  for i = #object_list, group.world + 1, -1 do object_list[i] = nil end
  return object_list
end

-- distributed.broadcast_object_list(object_list, {src=0}): every rank's
-- object_list becomes a copy of rank src's (a list of Lua values
-- torch.serialize takes; on the other ranks its old elements are replaced,
-- and it may start empty). The size travels first, then the bytes. Returns
-- object_list.
function distributed.broadcast_object_list(object_list, opts)
  check_group('broadcast_object_list', 2)
  if type(object_list) ~= 'table' then
    error(('distributed.broadcast_object_list: expected a list of objects, got %s'):format(type(object_list)), 2)
  end
  if type(opts) == 'number' then opts = {src = opts} end
  opts = options('broadcast_object_list', opts, {src = true}, 2)
  local src = check_rank('broadcast_object_list', 'src', opts.src == nil and 0 or opts.src, 2)
  local bytes
  if group.rank == src then
    local n = #object_list
    bytes = together('broadcast_object_list', function()
      local b = to_bytes('broadcast_object_list', {n = n, table.unpack(object_list, 1, n)}, AT_CALLER)
      return b                                   -- (not a tail call: it would change the levels)
    end)
  end
  local dev = default_group.device
  local size = torch.tensor({bytes and bytes:numel() or 0}, {dtype = 'int64', device = dev})
  local err = backend.broadcast(size, src, 'broadcast_object_list')
  if err then error(err, 2) end
  bytes = bytes and bytes:to(dev) or torch.empty({size:to('cpu')[1]}, {dtype = 'uint8', device = dev})
  err = backend.broadcast(bytes, src, 'broadcast_object_list')
  if err then error(err, 2) end
  bytes = bytes:to('cpu')
  if group.rank ~= src then
    local got = from_bytes('broadcast_object_list', bytes, 2)
    for i = #object_list, got.n + 1, -1 do object_list[i] = nil end
    for i = 1, got.n do object_list[i] = got[i] end
  end
  return object_list
end

-- distributed.ZeroRedundancyOptimizer (lib/distributed/zero.lua) and
-- distributed.FullyShardedDataParallel (lib/distributed/fsdp.lua) load when first named
setmetatable(distributed, {__index = function(_, k)
  if k == 'ZeroRedundancyOptimizer' then return require('distributed.zero') end
  if k == 'FullyShardedDataParallel' then return require('distributed.fsdp') end
end})

torch.distributed = distributed
return distributed
