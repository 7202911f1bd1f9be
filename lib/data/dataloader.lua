-- data.DataLoader(dataset, {batch_size=1, shuffle=false, sampler=, batch_sampler=,
-- drop_last=false, collate_fn=, num_workers=0, prefetch_factor=2,
-- persistent_workers=false, worker_init_fn=, timeout=0, generator=}).
--   for i, batch in loader:iter() do ... end      -- #loader batches
-- Workers are forked processes: the main process sends each the indices of
-- a batch, the worker builds it (dataset items, collate) and hands it back
-- through shared memory (the tensors' bytes in a memfd mapped by the main
-- process, never serialized). Batches come back in order whatever the
-- number of workers; a worker whose dataset raises, that dies, or that
-- stays silent past timeout makes the main process raise, naming it.
local torch = require 'torch'
local data = require 'data'

local DataLoader = torch.class('data.DataLoader')

function DataLoader:__init(dataset, opts)
  opts = opts or {}
  self.dataset = dataset
  self.batch_size = opts.batch_size == nil and 1 or opts.batch_size
  self.drop_last = opts.drop_last or false
  self.collate_fn = opts.collate_fn or data.default_collate
  self.num_workers = opts.num_workers or 0
  self.prefetch_factor = opts.prefetch_factor or 2
  self.persistent_workers = opts.persistent_workers or false
  self.worker_init_fn = opts.worker_init_fn
  self.timeout = opts.timeout or 0
  self.iterable = type(dataset.iter) == 'function' and type(dataset.get) ~= 'function'
  if math.type(self.num_workers) ~= 'integer' or self.num_workers < 0 then
    error('DataLoader: num_workers must be a non-negative integer', 3)
  end
  if opts.batch_sampler then
    if opts.batch_size ~= nil and opts.batch_size ~= 1 or opts.shuffle or opts.sampler or opts.drop_last then
      error('DataLoader: batch_sampler excludes batch_size, shuffle, sampler and drop_last', 3)
    end
    self.batch_sampler = opts.batch_sampler
  elseif not self.iterable then
    if opts.sampler and opts.shuffle then error('DataLoader: sampler excludes shuffle', 3) end
    local sampler = opts.sampler
    if not sampler then
      sampler = opts.shuffle and data.RandomSampler(dataset, {generator = opts.generator})
                or data.SequentialSampler(dataset)
    end
    self.sampler = sampler
    if self.batch_size then self.batch_sampler = data.BatchSampler(sampler, self.batch_size, self.drop_last) end
  end
  self.base_seed = opts.base_seed
end

DataLoader.__len = function(self)
  if self.batch_sampler then return data.len(self.batch_sampler) end
  if self.sampler then return data.len(self.sampler) end
  error('DataLoader: an iterable dataset has no length', 2)
end

-- one batch from a Lua array of indices (or one index when batch_size is nil)
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

-- ---- plain text for the structure around tensors (tensors travel apart) ----
local function encode(v, tensors)
  local t = type(v)
  if torch.is_tensor(v) then
    tensors[#tensors + 1] = v
    return 'T' .. #tensors
  elseif t == 'number' then
    return math.type(v) == 'integer' and string.format('%d', v) or string.format('%.17g', v)
  elseif t == 'string' then return string.format('%q', v)
  elseif t == 'boolean' or t == 'nil' then return tostring(v)
  elseif t == 'table' then
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = '[' .. encode(k, tensors) .. ']=' .. encode(x, tensors) end
    return '{' .. table.concat(parts, ',') .. '}'
  end
  error('DataLoader: a batch cannot hold a ' .. t, 0)
end

local function decode(text, tensors)
  local env = {}
  for i, t in ipairs(tensors) do env['T' .. i] = t end
  local chunk = assert(load('return ' .. text, '=batch', 't', env))
  return chunk()
end

-- ---- workers ----
local function worker_loop(self, id, fd, seed)
  torch.setnumthreads(1)                 -- one thread per worker, as PyTorch's workers
  torch.manual_seed(seed)
  rawset(self, '_worker_info', {id = id, num_workers = self.num_workers, seed = seed})
  data._worker_info = rawget(self, '_worker_info')
  local ok, err = pcall(function() if self.worker_init_fn then self.worker_init_fn(id) end end)
  if not ok then
    torch._send_msg(fd, 'E' .. string.format('%q', 'worker_init_fn: ' .. tostring(err)), {})
    torch._exit(1)
  end
  while true do
    local text = torch._recv_msg(fd)
    if text == nil or text == 'STOP' then torch._exit(0) end
    local seq, rest = text:match('^(%d+):(.*)$')
    local indices = load('return ' .. rest, '=task', 't', {})()
    local tensors = {}
    local good, msg = pcall(function() return encode(fetch(self, indices), tensors) end)
    local sent
    if good then sent = torch._send_msg(fd, seq .. ':' .. msg, tensors)
    else sent = torch._send_msg(fd, 'E' .. string.format('%q', tostring(msg)), {}) end
    if not sent then torch._exit(0) end
  end
end

local function start_workers(self)
  local base = self.base_seed or (torch.initial_seed() + math.floor(torch.rand(1)[1] * 2 ^ 31))
  local workers = {}
  for id = 1, self.num_workers do
    local a, b = torch._socketpair()
    local pid = torch._fork()
    if pid == 0 then
      -- the worker never returns into the caller's code, whatever happens
      local ok, err = pcall(function()
        torch._close(a)
        for _, w in ipairs(workers) do torch._close(w.fd) end
        worker_loop(self, id, b, base + id)
      end)
      if not ok then io.stderr:write('DataLoader worker ', id, ': ', tostring(err), '\n') end
      torch._exit(ok and 0 or 1)
    end
    torch._close(b)
    workers[id] = {pid = pid, fd = a, id = id}
  end
  return workers
end

local function stop_workers(workers)
  for _, w in ipairs(workers) do
    if not w.stopped then
      torch._send_msg(w.fd, 'STOP', {})
      torch._close(w.fd)
      w.stopped = true
    end
  end
  for _, w in ipairs(workers) do
    if torch._waitpid(w.pid, false) == 'running' then
      -- give it a moment, then insist
      local deadline = torch.clock() + 2
      while torch._waitpid(w.pid, false) == 'running' and torch.clock() < deadline do end
      if torch._waitpid(w.pid, false) == 'running' then
        torch._kill(w.pid, 9)
        torch._waitpid(w.pid, true)
      end
    end
  end
end

-- a Lua iterator over the batch index lists (or single indices)
local function index_stream(self)
  if self.batch_sampler then return self.batch_sampler:iter() end
  return self.sampler:iter()
end

local function serialize_indices(indices)
  if type(indices) ~= 'table' then return tostring(indices) end
  local parts = {}
  for k, v in ipairs(indices) do parts[k] = string.format('%d', v) end
  return '{' .. table.concat(parts, ',') .. '}'
end

local function describe_death(w)
  local state, code = torch._waitpid(w.pid, false)
  if state == 'signaled' then return string.format('was killed by signal %d', code) end
  if state == 'exited' then return string.format('exited with status %d', code) end
  return 'closed its connection'
end

local function worker_iter(self)
  local workers = rawget(self, '_workers')
  if not workers then
    workers = start_workers(self)
    if self.persistent_workers then rawset(self, '_workers', workers) end
  end
  local nw = #workers
  local stream = index_stream(self)
  local next_send, next_recv, exhausted = 1, 1, false
  local pending = {}            -- seq -> worker
  local ready = {}              -- seq -> batch
  local finished = false
  local guard = setmetatable({}, {__gc = function()
    if not finished and not self.persistent_workers then pcall(stop_workers, workers) end
  end})
  local function send_more()
    while not exhausted and next_send - next_recv < nw * self.prefetch_factor do
      local idx = stream()
      if idx == nil then exhausted = true break end
      local w = workers[(next_send - 1) % nw + 1]
      local ok, err = torch._send_msg(w.fd, string.format('%d:', next_send) .. serialize_indices(idx), {})
      if not ok then
        error(string.format('DataLoader worker %d (pid %d) %s', w.id, w.pid, describe_death(w)), 0)
      end
      pending[next_send] = w
      next_send = next_send + 1
    end
  end
  local function finish()
    finished = true
    if not self.persistent_workers then stop_workers(workers) end
  end
  local count = 0
  return function()
    local _ = guard
    if finished then return nil end
    local ok, res = pcall(function()
      send_more()
      if next_recv >= next_send then return nil end
      local seq = next_recv
      local w = pending[seq]
      while ready[seq] == nil do
        local text, tensors = torch._recv_msg(w.fd, self.timeout > 0 and self.timeout or nil)
        if text == nil then
          if tensors == 'timeout' then
            error(string.format('DataLoader worker %d (pid %d) timed out after %g s', w.id, w.pid, self.timeout), 0)
          end
          error(string.format('DataLoader worker %d (pid %d) %s', w.id, w.pid, describe_death(w)), 0)
        end
        if text:sub(1, 1) == 'E' then
          local msg = load('return ' .. text:sub(2), '=err', 't', {})()
          error(string.format('DataLoader worker %d (pid %d): %s', w.id, w.pid, msg), 0)
        end
        local s, rest = text:match('^(%d+):(.*)$')
        ready[tonumber(s)] = decode(rest, tensors)
      end
      local batch = ready[seq]
      ready[seq], pending[seq] = nil, nil
      next_recv = next_recv + 1
      return batch
    end)
    if not ok then
      finished = true
      for _, wk in ipairs(workers) do pcall(torch._kill, wk.pid, 9) end
      for _, wk in ipairs(workers) do pcall(torch._waitpid, wk.pid, true); pcall(torch._close, wk.fd); wk.stopped = true end
      rawset(self, '_workers', nil)
      error(res, 2)
    end
    if res == nil then finish() return nil end
    count = count + 1
    return count, res
  end
end

-- loader:iter(): a Lua iterator: for i, batch in loader:iter() do ... end
function DataLoader:iter()
  if self.iterable then
    local it = self.dataset:iter()
    local count = 0
    return function()
      if not self.batch_size then
        local s = it()
        if s == nil then return nil end
        count = count + 1
        return count, s
      end
      local items = {}
      for s in it do
        items[#items + 1] = s
        if #items == self.batch_size then break end
      end
      if #items == 0 or (self.drop_last and #items < self.batch_size) then return nil end
      count = count + 1
      return count, self.collate_fn(items)
    end
  end
  if self.num_workers > 0 then return worker_iter(self) end
  local stream = index_stream(self)
  local count = 0
  return function()
    local idx = stream()
    if idx == nil then return nil end
    count = count + 1
    return count, fetch(self, idx)
  end
end

-- loader:shutdown(): stops persistent workers.
function DataLoader:shutdown()
  local workers = rawget(self, '_workers')
  if workers then stop_workers(workers); rawset(self, '_workers', nil) end
end

DataLoader.__gc = function(self) pcall(DataLoader.shutdown, self) end

-- data.get_worker_info(): {id=, num_workers=, seed=} inside a worker, nil in the main process.
function data.get_worker_info() return data._worker_info end

return data
