-- nn.DistributedDataParallel(module, {bucket_cap_mb=25, broadcast_buffers=true,
-- find_unused_parameters=false, gradient_as_bucket_view=false}): data-parallel training over
-- the default process group of the distributed library (distributed.init_process_group
-- first). Every rank runs the same model on its own part of each batch; the gradients are
-- averaged over the ranks during backward, so that after backward every rank holds the
-- gradient of the mean loss over the whole batch and the optimizer steps keep the ranks'
-- parameters equal.
--
-- At construction the parameters and buffers of rank 0 are broadcast to every rank. The
-- parameters that require grad are cut, in the reverse of their registration order (about
-- the order backward produces their gradients), into buckets of at most bucket_cap_mb MiB
-- of one dtype; each parameter's post-accumulate-grad hook marks it ready, and a bucket
-- whose parameters are all ready starts its all-reduce at once (asynchronous: backward goes
-- on computing the next gradients while it runs), in bucket order (the same order on every
-- rank); when the last bucket has started, backward waits for them all. The average is written
-- back into each .grad (with gradient_as_bucket_view, .grad becomes a view of the bucket,
-- so later backwards accumulate into it directly).
--
-- ddp(x) runs ddp.module(x) (the buffers of rank 0 broadcast first when broadcast_buffers);
-- Torch7's ddp:forward(x) / ddp:backward(x, gradOutput) work as well, and also average the
-- gradients of Torch7-style modules whose weights are plain fields (gradWeight beside weight),
-- after backward. ddp:no_sync(fn, ...) (or `local g <close> = ddp:no_sync()`) runs backwards
-- that only accumulate locally; the next synchronised backward averages the accumulated
-- gradients. A parameter that gets no gradient in some iteration needs
-- find_unused_parameters=true (the graph of each forward's outputs is walked to mark those
-- parameters ready); without it the next forward raises an error naming them. Ranks with
-- uneven numbers of batches run their loops inside ddp:join(fn). A checkpoint
-- of ddp.module:state_dict() written by rank 0 loads into the plain model.
local torch = require 'torch'

local DDP, parent = torch.class('nn.DistributedDataParallel', 'nn.Module')

local OPTIONS = {bucket_cap_mb = 'number', broadcast_buffers = 'boolean', find_unused_parameters = 'boolean',
                 gradient_as_bucket_view = 'boolean'}

local function fail(fmt, ...) error('nn.DistributedDataParallel: ' .. string.format(fmt, ...), 3) end

local ready   -- the hooks' function, below

-- a bucket's view of parameter p (its slot), flat
local function view_of(b, s) return b.flat:narrow(1, s.offset + 1, s.numel) end

function DDP:__init(module, opts)
  parent.__init(self)
  local dist = require 'distributed'
  if type(module) ~= 'table' or not torch.isTypeOf(module, 'nn.Module') then
    fail('expected a module, got %s', torch.typename(module) or type(module))
  end
  opts = torch._check_options('nn.DistributedDataParallel', opts, OPTIONS, 2)
  local cap_mb = opts.bucket_cap_mb or 25
  if not (cap_mb > 0) then fail('bucket_cap_mb must be > 0, got %s', tostring(cap_mb)) end
  if not dist.is_initialized() then
    fail("the default process group is not initialised: call distributed.init_process_group{backend='mpi'} first")
  end
  self.module = module
  -- the reducer's state, a plain table (not a module's field the state_dict would walk)
  local st = {
    dist = dist, world = dist.get_world_size(), sync = true, buckets = {}, slots = {}, params = {},
    broadcast_buffers = opts.broadcast_buffers ~= false, find_unused = opts.find_unused_parameters == true,
    as_view = opts.gradient_as_bucket_view == true, cap = cap_mb * 1024 * 1024,
  }
  rawset(self, '_ddp', st)
  for _, np in ipairs(module:named_parameters()) do
    if np[2].requires_grad then st.params[#st.params + 1] = {name = np[1], p = np[2]} end
  end
  -- Torch7-style modules' plain weight fields (no autograd hook reaches them)
  st.plain = {}
  for _, m in ipairs(module:modules()) do
    for _, name in ipairs(m:_plain_parameters()) do
      st.plain[#st.plain + 1] = {m = m, name = name, grad = 'grad' .. name:sub(1, 1):upper() .. name:sub(2)}
    end
  end
  -- buckets in the reverse of registration order, at most cap bytes of one dtype each
  local open = {}
  for i = #st.params, 1, -1 do
    local e = st.params[i]
    local p = e.p
    local bytes = p:numel() * p:element_size()
    local b = open[p.dtype]
    if not b or (b.bytes + bytes > st.cap and #b.slots > 0) then
      b = {dtype = p.dtype, device = p.device, slots = {}, bytes = 0, numel = 0}
      st.buckets[#st.buckets + 1] = b
      open[p.dtype] = b
    end
    local s = {p = p, name = e.name, offset = b.numel, numel = p:numel(), bucket = b}
    b.slots[#b.slots + 1] = s
    b.numel = b.numel + s.numel
    b.bytes = b.bytes + bytes
    st.slots[p] = s
  end
  for _, b in ipairs(st.buckets) do b.flat = torch.zeros(b.numel, {dtype = b.dtype, device = b.device}) end
  -- every rank starts from rank 0's parameters and buffers, a bucket at a time
  torch.no_grad(function()
    for _, b in ipairs(st.buckets) do
      for _, s in ipairs(b.slots) do view_of(b, s):copy(s.p:reshape(-1)) end
      dist.broadcast(b.flat, {src = 0})
      for _, s in ipairs(b.slots) do s.p:copy(view_of(b, s):view(s.p:size())) end
    end
    for _, e in ipairs(st.plain) do dist.broadcast(e.m[e.name], {src = 0}) end
    for _, buf in ipairs(module:buffers()) do dist.broadcast(buf, {src = 0}) end
  end)
  -- each parameter's key in a forward's graph, to find the unused ones: its accumulator
  -- node's leaf (not the node's id: a parameter gets a new node once no graph holds the old)
  if st.find_unused then
    for _, e in ipairs(st.params) do
      st.slots[e.p].leaf_id = e.p:view(e.p:size()).grad_fn.next_functions[1][1]._leaf_id
    end
  end
  for _, e in ipairs(st.params) do
    local s = st.slots[e.p]
    e.p:register_post_accumulate_grad_hook(function() ready(st, s) end)
  end
  st.pending_iteration = false
end

-- starts an iteration's reduction: every bucket waits for all of its parameters
local function prepare(st)
  for _, b in ipairs(st.buckets) do
    b.pending = #b.slots
  end
  for _, s in pairs(st.slots) do s.ready = false end
  st.next = 1
  st.started = false
  st.pending_iteration = #st.buckets > 0
end

-- the names of the parameters that got no gradient in the unfinished iteration
local function unfinished(st)
  local names = {}
  for _, b in ipairs(st.buckets) do
    for _, s in ipairs(b.slots) do if not s.ready then names[#names + 1] = s.name end end
  end
  return names
end

-- the sum of bucket b's buffer over the ranks: blocking for the last bucket (see start), else
-- started asynchronously (b.work, waited for in finish)
local function reduce_bucket(st, b, last)
  if last then st.dist.all_reduce(b.flat, {op = 'sum'})
  else b.work = st.dist.all_reduce(b.flat, {op = 'sum', async_op = true}) end
end

-- starts averaging bucket b over the ranks: the gradients into its buffer, then an
-- asynchronous all-reduce of it (backward goes on meanwhile). The last bucket's is a
-- blocking one: nothing is left to overlap it with, and the blocking call saves the
-- hand-over to distributed's communication thread.
local function start(st, b, last)
  torch.no_grad(function()
    for _, s in ipairs(b.slots) do
      local g = s.p.grad
      local v = view_of(b, s)
      if g == nil then v:zero()
      elseif not (st.as_view and g:reshape(-1):isSetTo(v)) then v:copy(g:reshape(-1)) end
    end
  end)
  reduce_bucket(st, b, last)
end

-- waits for bucket b's all-reduce and writes the average into each .grad
local function finish(st, b)
  if b.work then
    b.work:wait()
    b.work = nil
  end
  torch.no_grad(function()
    if st.as_view then b.flat:div_(st.world) end
    for _, s in ipairs(b.slots) do
      local v = view_of(b, s):view(s.p:size())
      local g = s.p.grad
      if st.as_view then
        if g == nil or not g:isSetTo(v) then s.p.grad = v end
      elseif g == nil then
        s.p.grad = v / st.world
      else
        torch.div(v, st.world, {out = g})               -- the average, in one pass
      end
    end
  end)
end

-- starts the ready buckets in order, as far as the first one that is not; once every
-- bucket has started, waits for them all (the gradients are then averaged)
local function launch_ready(st)
  while st.next <= #st.buckets and st.buckets[st.next].pending == 0 do
    start(st, st.buckets[st.next], st.next == #st.buckets)
    st.next = st.next + 1
  end
  if st.next > #st.buckets then
    for _, b in ipairs(st.buckets) do finish(st, b) end
    st.pending_iteration = false
  end
end

-- slot s's parameter has its gradient: mark it ready in its bucket
ready = function(st, s)
  if not st.sync or not st.pending_iteration or s.ready then return end
  st.started = true
  s.ready = true
  s.bucket.pending = s.bucket.pending - 1
  if s.bucket.pending == 0 then launch_ready(st) end
end

-- marks ready the parameters outside the graph of outs (find_unused_parameters)
local function mark_unused(st, outs)
  local reached, seen, stack = {}, {}, {}
  local function push(v)
    if torch.is_tensor(v) then
      if v.grad_fn then stack[#stack + 1] = v.grad_fn end
    elseif type(v) == 'table' and getmetatable(v) == nil then
      for _, x in pairs(v) do push(x) end
    end
  end
  for i = 1, outs.n do push(outs[i]) end
  while #stack > 0 do
    local node = table.remove(stack)
    local id = node.id
    if not seen[id] then
      seen[id] = true
      local leaf = node._leaf_id
      if leaf then reached[leaf] = true end
      for _, e in ipairs(node.next_functions) do if e[1] then stack[#stack + 1] = e[1] end end
    end
  end
  local any = false
  for _, b in ipairs(st.buckets) do
    for _, s in ipairs(b.slots) do
      if not reached[s.leaf_id] then
        s.ready = true
        b.pending = b.pending - 1
        any = true
      end
    end
  end
  if any then launch_ready(st) end
end

function DDP:updateOutput(...)
  local st = rawget(self, '_ddp')
  if st.joining then
    -- inside join: tell the ranks that have joined that this iteration runs, and whether its
    -- backward averages the gradients (so that they shadow its all-reduces)
    local flags = torch.tensor({1, st.sync and torch.is_grad_enabled() and 1 or 0},
                               {dtype = 'float64', device = st.dist._default_device()})
    st.dist.all_reduce(flags, {op = 'max'})
    st.join_forwards = st.join_forwards + 1
  end
  if st.sync and st.pending_iteration and st.started then
    local names = unfinished(st)
    error(('nn.DistributedDataParallel: the previous backward did not produce gradients for %d parameter(s) '
           .. '(%s): their buckets were never reduced. Pass {find_unused_parameters=true} when some parameters '
           .. 'take no part in a forward, and make every forward with gradients end in a backward')
          :format(#names, table.concat(names, ', ', 1, math.min(#names, 8))), 0)
  end
  if st.broadcast_buffers then
    local bufs = self.module:buffers()   -- each time: a module may replace a buffer
    if #bufs > 0 then
      torch.no_grad(function() for _, buf in ipairs(bufs) do st.dist.broadcast(buf, {src = 0}) end end)
    end
  end
  local outs = table.pack(self.module(...))
  if torch.is_grad_enabled() and st.sync then
    prepare(st)
    if st.find_unused then mark_unused(st, outs) end
  end
  return table.unpack(outs, 1, outs.n)
end

-- Torch7's backward: the module's, then the plain weight fields' gradients averaged (and
-- any bucket a parameter without a gradient left open, with find_unused_parameters)
function DDP:backward(input, gradOutput, scale)
  local gradInput = parent.backward(self, input, gradOutput, scale)
  local st = rawget(self, '_ddp')
  if st.sync and #st.plain > 0 then
    torch.no_grad(function()
      for _, e in ipairs(st.plain) do
        local g = e.m[e.grad]
        st.dist.all_reduce(g, {op = 'sum'})
        g:div_(st.world)
      end
    end)
  end
  return gradInput
end

-- ddp:no_sync(fn, ...): runs fn(...) with the gradients' averaging off (backwards accumulate
-- locally) and returns its results; with no function, turns it off until the returned
-- guard is closed (`local g <close> = ddp:no_sync()`).
function DDP:no_sync(fn, ...)
  local st = rawget(self, '_ddp')
  local prev = st.sync
  st.sync = false
  if fn == nil then
    return setmetatable({}, {__close = function() st.sync = prev end, __index = {close = function() st.sync = prev end},
                             __name = 'nn.DistributedDataParallel.no_sync guard'})
  end
  local res = table.pack(pcall(fn, ...))
  st.sync = prev
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- ddp:join(fn, ...): runs fn(...) (this rank's training loop) when the ranks have uneven
-- numbers of batches: a rank whose fn has returned shadows the others' iterations -- for each
-- forward they run it takes part in the buffers' broadcast and in every bucket's all-reduce
-- with zero gradients -- until every rank's fn has returned; then the last rank to finish
-- broadcasts its parameters and buffers, so that every rank ends with the model every step
-- reached. The averages keep dividing by the world size (PyTorch's
-- divide_by_initial_world_size=True). Returns fn's results.
function DDP:join(fn, ...)
  local st = rawget(self, '_ddp')
  if type(fn) ~= 'function' then error('nn.DistributedDataParallel:join: expected a function, got ' .. type(fn), 2) end
  if st.joining then error('nn.DistributedDataParallel:join: already inside join', 2) end
  st.joining, st.join_forwards = true, 0
  local res = table.pack(pcall(fn, ...))
  st.joining = false
  if not res[1] then error(res[2], 0) end
  local bufs = self.module:buffers()
  while true do
    local flags = torch.tensor({0, 0}, {dtype = 'float64', device = st.dist._default_device()})
    st.dist.all_reduce(flags, {op = 'max'})
    if flags[1] == 0 then break end                   -- every rank has joined
    torch.no_grad(function()
      if st.broadcast_buffers then for _, buf in ipairs(bufs) do st.dist.broadcast(buf, {src = 0}) end end
      if flags[2] > 0 then
        for i, b in ipairs(st.buckets) do          -- the same calls as the other ranks' buckets
          b.flat:zero()
          reduce_bucket(st, b, i == #st.buckets)
          if b.work then b.work:wait(); b.work = nil end
        end
      end
    end)
  end
  -- the last rank to join (the most forwards; the highest rank on ties) holds the model
  -- every step reached: its parameters and buffers go to every rank
  local last = torch.tensor({st.join_forwards * st.world + st.dist.get_rank()},
                            {dtype = 'float64', device = st.dist._default_device()})
  st.dist.all_reduce(last, {op = 'max'})
  local src = math.tointeger(last[1] % st.world)
  torch.no_grad(function()
    for _, b in ipairs(st.buckets) do
      for _, sl in ipairs(b.slots) do view_of(b, sl):copy(sl.p:reshape(-1)) end
      st.dist.broadcast(b.flat, {src = src})
      for _, sl in ipairs(b.slots) do sl.p:copy(view_of(b, sl):view(sl.p:size())) end
    end
    for _, buf in ipairs(bufs) do st.dist.broadcast(buf, {src = src}) end
  end)
  return table.unpack(res, 2, res.n)
end

return DDP
