-- data.DataLoader(dataset, {batch_size=1, shuffle=false, sampler=, batch_sampler=,
-- drop_last=false, collate_fn=, num_workers=0, prefetch_factor=2,
-- persistent_workers=false, worker_init_fn=, timeout=0, generator=, pin_memory=}).
--   for i, batch in loader:iter() do ... end      -- #loader batches
--   for i, batch in ipairs(loader) do ... end     -- the same
--   for batch in loader do ... end
-- Workers are forked processes: the main process sends each the indices of
-- a batch, the worker builds it (dataset items, collate) and hands it back
-- through shared memory (the tensors' bytes in a memfd mapped by the main
-- process, never serialized). Batches come back in order whatever the
-- number of workers; a worker whose dataset raises, that dies, or that
-- stays silent past timeout makes the main process raise, naming it.
local torch = require 'torch'
local data = require 'data'

local DataLoader = torch.class('data.DataLoader')

-- how long a worker that was told to stop may take to exit before it is killed (s)
local STOP_GRACE = 2
-- how long to wait for a worker whose connection closed to report its exit status (s)
local DEATH_GRACE = 1

local OPTIONS = {batch_size = true, shuffle = true, sampler = true, batch_sampler = true, drop_last = true,
                 collate_fn = true, num_workers = true, prefetch_factor = true, persistent_workers = true,
                 worker_init_fn = true, timeout = true, generator = true, pin_memory = true}

-- a sampler or batch sampler given as an option: an object with iter() or a Lua array
local function check_sampler(option, s)
  if not data.is_sampler(s) then
    error(string.format('DataLoader: %s must be a sampler (with iter()) or a Lua array, got %s', option,
                        torch.type(s)), 4)
  end
end

function DataLoader:__init(dataset, opts)
  opts = opts or {}
  for k in pairs(opts) do
    if not OPTIONS[k] then error(string.format("DataLoader: unknown option '%s'", tostring(k)), 3) end
  end
  if type(dataset) ~= 'table' and type(dataset) ~= 'userdata' then
    error('DataLoader: expected a dataset, got a ' .. type(dataset), 3)
  end
  self.dataset = dataset
  self.batch_size = opts.batch_size == nil and 1 or opts.batch_size
  self.drop_last = opts.drop_last or false
  self.collate_fn = opts.collate_fn or data.default_collate
  self.num_workers = opts.num_workers or 0
  self.prefetch_factor = opts.prefetch_factor or 2
  self.persistent_workers = opts.persistent_workers or false
  self.worker_init_fn = opts.worker_init_fn
  self.timeout = opts.timeout or 0
  self.pin_memory = opts.pin_memory or false
  self.iterable = type(dataset.iter) == 'function' and type(dataset.get) ~= 'function'
  if math.type(self.num_workers) ~= 'integer' or self.num_workers < 0 then
    error('DataLoader: num_workers must be a non-negative integer, got ' .. tostring(self.num_workers), 3)
  end
  if math.type(self.prefetch_factor) ~= 'integer' or self.prefetch_factor < 1 then
    error('DataLoader: prefetch_factor must be a positive integer, got ' .. tostring(self.prefetch_factor), 3)
  end
  if type(self.timeout) ~= 'number' or self.timeout < 0 then
    error('DataLoader: timeout must be a non-negative number of seconds, got ' .. tostring(self.timeout), 3)
  end
  if self.batch_size and (math.type(self.batch_size) ~= 'integer' or self.batch_size < 1) then
    error('DataLoader: batch_size must be a positive integer or false, got ' .. tostring(self.batch_size), 3)
  end
  if self.iterable then
    if opts.shuffle or opts.sampler or opts.batch_sampler then
      error('DataLoader: an iterable dataset takes no shuffle, sampler or batch_sampler', 3)
    end
  elseif opts.batch_sampler then
    if opts.batch_size ~= nil and opts.batch_size ~= 1 or opts.shuffle or opts.sampler or opts.drop_last then
      error('DataLoader: batch_sampler excludes batch_size, shuffle, sampler and drop_last', 3)
    end
    check_sampler('batch_sampler', opts.batch_sampler)
    self.batch_sampler = opts.batch_sampler
  else
    if opts.sampler and opts.shuffle then error('DataLoader: sampler excludes shuffle', 3) end
    if opts.sampler then check_sampler('sampler', opts.sampler) end
    local sampler = opts.sampler
    if not sampler then
      sampler = opts.shuffle and data.RandomSampler(dataset, {generator = opts.generator})
                or data.SequentialSampler(dataset)
    end
    self.sampler = sampler
    if self.batch_size then self.batch_sampler = data.BatchSampler(sampler, self.batch_size, self.drop_last) end
  end
  self.epochs = 0             -- iterations started
end

-- #loader: the number of batches (of samples when batch_size=false)
DataLoader.__len = function(self)
  if self.batch_sampler then return data.len(self.batch_sampler) end
  if self.sampler then return data.len(self.sampler) end
  error('DataLoader: an iterable dataset has no length', 2)
end

-- one batch from a Lua array of indices (or one item for a single index)
local function fetch(self, indices)
  local ds = self.dataset
  if type(indices) ~= 'table' then return data.item(ds, indices) end
  if self.collate_fn == data.default_collate and type(ds.get_batch) == 'function' then
    local b = ds:get_batch(torch.tensor(indices, {dtype = 'int64'}))
    if b ~= nil then return b end
  end
  local items = {}
  for k, i in ipairs(indices) do items[k] = data.item(ds, i) end
  return self.collate_fn(items)
end

-- the batches of an iterable dataset: a function giving the next one, nil at the end
local function iterable_batches(self)
  local it = self.dataset:iter()
  local done = false
  return function()
    if done then return nil end
    if not self.batch_size then
      local s = it()
      done = s == nil
      return s
    end
    local items = {}
    while #items < self.batch_size do
      local s = it()
      if s == nil then done = true break end
      items[#items + 1] = s
    end
    if #items == 0 or (self.drop_last and #items < self.batch_size) then return nil end
    return self.collate_fn(items)
  end
end

-- ---- a batch's structure as text (its tensors travel apart, in shared memory) ----
local function encode(v, tensors)
  local t = type(v)
  if torch.is_tensor(v) then
    tensors[#tensors + 1] = v
    return 'T' .. #tensors
  elseif t == 'number' then
    return math.type(v) == 'integer' and string.format('%d', v) or string.format('%.17g', v)
  elseif t == 'string' then return string.format('%q', v)
  elseif t == 'boolean' then return tostring(v)
  elseif t == 'table' then
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = '[' .. encode(k, tensors) .. ']=' .. encode(x, tensors) end
    return '{' .. table.concat(parts, ',') .. '}'
  end
  error('DataLoader: a batch cannot hold a ' .. t .. ' (only tensors, numbers, strings, booleans, tables)', 0)
end

local function decode(text, tensors)
  local env = {}
  for i, t in ipairs(tensors) do env['T' .. i] = t end
  return assert(load('return ' .. text, '=batch', 't', env))()
end

-- a task for a worker: 'L1,2,3' (a batch of indices), 'N5' (one index), 'next' (iterable)
local function encode_task(indices)
  if indices == nil then return 'next' end
  if type(indices) ~= 'table' then return string.format('N%d', indices) end
  local parts = {}
  for k, v in ipairs(indices) do parts[k] = string.format('%d', v) end
  return 'L' .. table.concat(parts, ',')
end

local function decode_task(task)
  if task:sub(1, 1) == 'N' then return math.tointeger(tonumber(task:sub(2))) end
  local out = {}
  for n in task:gmatch('%d+') do out[#out + 1] = math.tointeger(tonumber(n)) end
  return out
end

-- ---- workers ----
-- the main-process ends of every live worker's socket: a new worker closes
-- them all, so no worker keeps another's connection open
local main_ends = {}

-- splitmix64: a well-spread 64-bit value from x
local function mix(x)
  x = x + 0x9E3779B97F4A7C15
  x = (x ~ (x >> 30)) * 0xBF58476D1CE4E5B9
  x = (x ~ (x >> 27)) * 0x94D049BB133111EB
  return x ~ (x >> 31)
end

-- the seed of worker id: derived from the main process's generator state (which
-- torch.manual_seed sets) and the loader's epoch, plus id -- without drawing from that
-- generator, so num_workers changes nothing in the main process; fresh workers in a
-- later epoch get fresh seeds, and the same torch.manual_seed gives the same ones.
local function worker_seed(self, id)
  local h = mix(self.epochs)
  for _, byte in ipairs(torch.get_rng_state():totable()) do h = mix(h ~ byte) end
  return (h + id) & 0x7fffffffffffffff
end

local function worker_loop(self, id, fd, seed)
  torch.setnumthreads(1)                 -- one thread per worker, as PyTorch's workers
  torch.manual_seed(seed)
  data._worker_info = {id = id, num_workers = self.num_workers, seed = seed, dataset = self.dataset}
  if self.worker_init_fn then
    local ok, err = pcall(self.worker_init_fn, id)
    if not ok then
      torch._send_msg(fd, 'E0.0:' .. string.format('%q', 'worker_init_fn: ' .. tostring(err)), {})
      torch._exit(1)
    end
  end
  local stream                            -- an iterable dataset's batches in this worker
  while true do
    local text, why = torch._recv_msg(fd)
    if text == 'STOP' or (text == nil and why ~= 'interrupted') then torch._exit(0) end
    if text == 'EPOCH' then
      stream = nil
    elseif text then                      -- (nil: a signal interrupted the wait)
      local tag, task = text:match('^(%d+%.%d+):(.*)$')
      local tensors = {}
      local ok, reply = pcall(function()
        local batch
        if task == 'next' then
          stream = stream or iterable_batches(self)
          batch = stream()
          if batch == nil then return 'D' .. tag end
        else
          batch = fetch(self, decode_task(task))
        end
        return tag .. ':' .. encode(batch, tensors)
      end)
      if not ok then reply, tensors = 'E' .. tag .. ':' .. string.format('%q', tostring(reply)), {} end
      if not torch._send_msg(fd, reply, tensors) then torch._exit(0) end
    end
  end
end

local function start_workers(self)
  local workers = {}
  for id = 1, self.num_workers do
    local seed = worker_seed(self, id)
    local a, b = torch._socketpair()
    local pid = torch._fork()
    if pid == 0 then
      -- the worker never returns into the caller's code, whatever happens
      local ok, err = pcall(function()
        torch._close(a)
        for fd in pairs(main_ends) do torch._close(fd) end
        main_ends = {}
        worker_loop(self, id, b, seed)
      end)
      if not ok then io.stderr:write('DataLoader worker ', id, ': ', tostring(err), '\n') end
      torch._exit(ok and 0 or 1)
    end
    torch._close(b)
    main_ends[a] = true
    workers[id] = {pid = pid, fd = a, id = id}
  end
  return workers
end

-- waits up to grace seconds for a worker to exit; its state as torch._waitpid gives it
local function wait_exit(w, grace)
  local deadline = torch.clock() + grace
  local state, code = torch._waitpid(w.pid, false)
  while state == 'running' and torch.clock() < deadline do
    torch._sleep(0.002)
    state, code = torch._waitpid(w.pid, false)
  end
  return state, code
end

-- stops workers: a polite STOP and grace seconds to leave, then SIGKILL; all reaped
local function stop_workers(workers, grace)
  for _, w in ipairs(workers) do
    if not w.closed then
      if grace > 0 then torch._send_msg(w.fd, 'STOP', {}) end
      torch._close(w.fd)
      main_ends[w.fd] = nil
      w.closed = true
    end
  end
  for _, w in ipairs(workers) do
    if not w.reaped then
      if wait_exit(w, grace) == 'running' then
        torch._kill(w.pid, 9)
        torch._waitpid(w.pid, true)
      end
      w.reaped = true
    end
  end
end

-- why a worker's connection failed: the error it sent before leaving, else how it ended
local function describe_death(w)
  local text = torch._recv_msg(w.fd, 0)
  local msg = text and text:match('^E%d+%.%d+:(.*)$')
  if msg then return ': ' .. load('return ' .. msg, '=err', 't', {})() end
  local state, code = wait_exit(w, DEATH_GRACE)
  w.reaped = state ~= 'running'
  if state == 'signaled' then return string.format(' was killed by signal %d', code) end
  if state == 'exited' then return string.format(' exited with status %d', code) end
  return ' closed its connection'
end

local function worker_name(w) return string.format('DataLoader worker %d (pid %d)', w.id, w.pid) end

-- a Lua iterator over the batch index lists (or single indices)
local function index_stream(self)
  return data.sampler_iter(self.batch_sampler or self.sampler)
end

local DONE = {}            -- a reply: this worker's share of an iterable dataset is over

-- the batches of it as regions of the profile while one records, named as PyTorch's
local function profiled(it, name)
  local region = 'enumerate(DataLoader)#' .. name .. '.__next__'
  return function()
    if not torch._profiling() then return it() end
    return torch.profiler._region(region, it)
  end
end

local function worker_iter(self)
  local workers = rawget(self, '_workers')
  if workers and self.iterable then
    for _, w in ipairs(workers) do torch._send_msg(w.fd, 'EPOCH', {}) end
  end
  self.epochs = self.epochs + 1
  if not workers then
    workers = start_workers(self)
    if self.persistent_workers then rawset(self, '_workers', workers) end
  end
  local epoch, nw = self.epochs, #workers
  local stream = not self.iterable and index_stream(self)
  local next_send, next_recv, exhausted = 1, 1, false
  local pending, ready = {}, {}        -- seq -> worker asked; seq -> batch (or DONE)
  local turn, finished = 0, false
  for _, w in ipairs(workers) do w.exhausted = false end
  local guard = setmetatable({}, {__gc = function()
    if not finished and not self.persistent_workers then pcall(stop_workers, workers, 0) end
  end})

  -- the worker the next task goes to: round robin (over those not yet exhausted)
  local function next_worker()
    for _ = 1, nw do
      turn = turn % nw + 1
      if not workers[turn].exhausted then return workers[turn] end
    end
  end

  local function send_more()
    while not exhausted and next_send - next_recv < nw * self.prefetch_factor do
      local task
      if self.iterable then task = 'next'
      else
        local idx = stream()
        if idx == nil then exhausted = true break end
        task = encode_task(idx)
      end
      local w = next_worker()
      if not w then exhausted = true break end
      if not torch._send_msg(w.fd, string.format('%d.%d:%s', epoch, next_send, task), {}) then
        error(worker_name(w) .. describe_death(w), 0)
      end
      pending[next_send] = w
      next_send = next_send + 1
    end
  end

  -- reads w's replies until the one for seq has come (replies of an abandoned epoch are dropped)
  local function take(w, text, tensors)
    local kind, e, s, rest = text:match('^([ED]?)(%d+)%.(%d+):?(.*)$')
    if not kind then error(worker_name(w) .. ' sent a malformed reply', 0) end
    e, s = tonumber(e), tonumber(s)
    if kind == 'E' and (e == epoch or e == 0) then
      error(worker_name(w) .. ': ' .. load('return ' .. rest, '=err', 't', {})(), 0)
    elseif e == epoch then
      if kind == 'D' then
        w.exhausted = true
        ready[s] = DONE
      else
        ready[s] = decode(rest, tensors)
      end
    end
  end

  local function receive(w, seq)
    local deadline = self.timeout > 0 and torch.clock() + self.timeout
    while ready[seq] == nil do
      local text, tensors = torch._recv_msg(w.fd, deadline and math.max(0, deadline - torch.clock()) or nil)
      if text then take(w, text, tensors)
      elseif tensors == 'timeout' then
        error(string.format('%s timed out after %g s', worker_name(w), self.timeout), 0)
      elseif tensors ~= 'interrupted' then    -- a signal: th's Ctrl-C hook raises now, else wait on
        error(worker_name(w) .. describe_death(w), 0)
      end
    end
  end

  local function next_batch()
    while true do
      send_more()
      if next_recv >= next_send then return nil end
      local seq = next_recv
      receive(pending[seq], seq)
      local batch = ready[seq]
      ready[seq], pending[seq] = nil, nil
      next_recv = next_recv + 1
      if batch ~= DONE then return batch end
    end
  end

  local count = 0
  return function()
    local _ = guard
    if finished then return nil end
    local ok, batch = pcall(next_batch)
    if not ok then
      finished = true
      for _, w in ipairs(workers) do if not w.reaped then pcall(torch._kill, w.pid, 9) end end
      pcall(stop_workers, workers, 0)
      rawset(self, '_workers', nil)
      error(batch, 2)
    end
    if batch == nil then
      finished = true
      if not self.persistent_workers then stop_workers(workers, STOP_GRACE) end
      return nil
    end
    count = count + 1
    return count, batch
  end
end

-- loader:iter(): a Lua iterator of (batch number, batch):
--   for i, batch in loader:iter() do ... end
function DataLoader:iter()
  if self.num_workers > 0 then return profiled(worker_iter(self), '_MultiProcessingDataLoaderIter') end
  self.epochs = self.epochs + 1
  local next_batch
  if self.iterable then next_batch = iterable_batches(self)
  else
    local stream = index_stream(self)
    next_batch = function()
      local idx = stream()
      if idx ~= nil then return fetch(self, idx) end
    end
  end
  local count = 0
  return profiled(function()
    local batch = next_batch()
    if batch == nil then return nil end
    count = count + 1
    return count, batch
  end, '_SingleProcessDataLoaderIter')
end

-- ipairs(loader), `for batch in loader do` and pairs(loader) make one pass over
-- the loader as loader:iter() does (lib/data/iteration.lua): loader[k] is the
-- next batch of the pass that ipairs reads, and loader[1] starts a new one.
data._iterable(DataLoader, {
  start = function(self)
    local it = self:iter()
    return function()
      local _, batch = it()
      return batch
    end
  end,
  pairs = function(self) return self:iter() end,
  noun = 'loader', var = 'loader', item = 'batch', items = 'batches', ipairs_form = 'for i, batch in ipairs(loader) do',
  iter_form = 'for i, batch in loader:iter() do',
  call_form = 'for batch in loader do',
})

-- print(loader): its dataset, batch size and number of batches (printing draws no batch)
DataLoader.__tostring = function(self)
  local ok, n = pcall(data.len, self)
  return string.format('data.DataLoader(%s, batch_size=%s%s%s): %s batches', tostring(self.dataset),
                       tostring(self.batch_size), rawget(self, 'sampler') and torch.typename(self.sampler) ==
                       'data.RandomSampler' and ', shuffle=true' or '',
                       self.num_workers > 0 and ', num_workers=' .. self.num_workers or '',
                       ok and tostring(n) or 'an unknown number of')
end

-- loader:shutdown(): stops persistent workers (they also stop when the loader is collected).
function DataLoader:shutdown()
  local workers = rawget(self, '_workers')
  if workers then
    rawset(self, '_workers', nil)
    stop_workers(workers, STOP_GRACE)
  end
end

DataLoader.__gc = function(self)
  local workers = rawget(self, '_workers')
  if workers then pcall(stop_workers, workers, STOP_GRACE) end
end

-- data.get_worker_info(): {id=, num_workers=, seed=, dataset=} inside a worker (ids
-- 1..num_workers), nil in the main process.
function data.get_worker_info() return data._worker_info end

return data
