-- distributed.FullyShardedDataParallel(module, opts): parameter sharding across the ranks
-- of the default process group, as PyTorch's FSDP. The module's parameters are cut into
-- units (the whole module, or with opts.auto_wrap_policy each module the policy picks,
-- 'linear' picking every nn.Linear); each unit's parameters are laid end to end in one
-- flat vector (padded to a multiple of the world size), and each rank keeps only its
-- 1/world-size piece of it, the shard: an nn.Parameter the optimizer steps (fsdp:parameters()
-- lists the shards, so Adam's moments are sharded too). Between steps a rank thus holds
-- 1/world of the parameters, their gradients and the optimizer state.
--
-- A unit's forward first gathers its flat vector from every rank's shard (all_gather) and
-- runs the module on views of it; the backward of that gather is a reduce-scatter that
-- averages the gradient of the flat vector over the ranks and leaves each rank the piece
-- of its shard. The gathered vectors live while the graph needs them (until backward), as
-- PyTorch's FSDP does with reshard_after_forward=false; each rank trains on its own batch,
-- and the parameters are those one process training on all the batches would have.
--   local fsdp = distributed.FullyShardedDataParallel(model, {auto_wrap_policy = 'linear'})
--   local opt = optim.Adam(fsdp:parameters(), {lr = 1e-3})
--   ... nn.F.cross_entropy(fsdp(x), y):backward(); opt:step(); opt:zero_grad()
-- fsdp:state_dict() is the module's own state dict with whole parameters (gathered on
-- every rank: rank 0 saves it, and it loads into the plain module); fsdp:load_state_dict
-- takes one and keeps each rank's shard. Every rank must call forward and backward the
-- same number of times, with batches of the same shape (the gathers are collectives).
local torch = require 'torch'
local nn = require 'nn'
local distributed = require 'distributed'

local FSDP, parent = torch.class('distributed.FullyShardedDataParallel', 'nn.Module')

local function fail(fmt, ...) error('distributed.FullyShardedDataParallel: ' .. string.format(fmt, ...), 3) end

-- the gather of a unit's flat vector: forward all_gather, backward the averaging
-- reduce-scatter into the shard's gradient
local Gather = torch.autograd.Function:extend('distributed.FSDPGather')

function Gather.forward(ctx, shard, unit)
  ctx.unit = unit
  local full = torch.empty({unit.padded}, {dtype = shard.dtype, device = shard.device})
  distributed.all_gather_into_tensor(full, shard)
  return full
end

function Gather.backward(ctx, grad)
  local unit = ctx.unit
  local g = torch.empty({unit.shard_numel}, {dtype = grad.dtype, device = grad.device})
  distributed.reduce_scatter_tensor(g, grad:contiguous(), {op = 'avg'})
  return g, nil
end

-- the units: the module's parameters, each owned by the unit of its module (the nearest
-- module at or above it the policy picks; the root otherwise), in registration order, a
-- parameter shared between modules once, in the unit that meets it first
local function cut_units(module, policy)
  local units, unit_of_module, seen = {}, {}, {}
  local root = {module = module, entries = {}}
  units[1] = root
  local function walk(m, unit)
    if unit_of_module[m] then return end                     -- a module met twice is one
    if m ~= module and policy and policy(m) then
      unit = {module = m, entries = {}}
      units[#units + 1] = unit
    end
    unit_of_module[m] = unit
    local fields = rawget(m, '_fields')
    for _, name in ipairs(rawget(m, '_param_names') or {}) do
      local p = fields[name]
      if p ~= nil then
        local first = seen[p]
        if first then unit.entries[#unit.entries + 1] = {owner = m, name = name, same_as = first}
        else
          local e = {owner = m, name = name, p = p}
          seen[p] = e
          unit.entries[#unit.entries + 1] = e
        end
      end
    end
    for _, child in ipairs(m:children()) do walk(child, unit) end
  end
  walk(module, root)
  return units
end

local POLICIES = {linear = function(m) return torch.typename(m) == 'nn.Linear' end}

function FSDP:__init(module, opts)
  parent.__init(self)
  if type(module) ~= 'table' or not torch.isTypeOf(module, 'nn.Module') then
    fail('expected a module, got %s', torch.typename(module) or type(module))
  end
  if opts ~= nil and type(opts) ~= 'table' then fail('options must be a table, got %s', type(opts)) end
  opts = opts or {}
  for k in pairs(opts) do
    if k ~= 'auto_wrap_policy' then fail('unknown option %s (it takes auto_wrap_policy)', tostring(k)) end
  end
  local policy = opts.auto_wrap_policy
  if type(policy) == 'string' then
    if not POLICIES[policy] then fail("auto_wrap_policy='%s': the named policy is 'linear' (or pass a function)", policy) end
    policy = POLICIES[policy]
  elseif policy ~= nil and type(policy) ~= 'function' then
    fail('auto_wrap_policy must be a function(module) -> boolean or \'linear\', got %s', type(policy))
  end
  if not distributed.is_initialized() then
    fail("the default process group is not initialised: call distributed.init_process_group{backend='mpi'} first")
  end
  local world, rank = distributed.get_world_size(), distributed.get_rank()
  self.module = module
  local units = cut_units(module, policy)
  local st = {world = world, rank = rank, units = {}}
  rawset(self, '_fsdp', st)
  torch.no_grad(function()
    for _, u in ipairs(units) do
      local numel, dtype, device = 0, nil, nil
      for _, e in ipairs(u.entries) do
        if e.p then
          if dtype and (e.p.dtype ~= dtype or e.p.device ~= device) then
            fail('the parameters of one unit must share a dtype and a device: %s is %s on %s, an earlier one %s on %s',
                 e.name, e.p.dtype, e.p.device, dtype, device)
          end
          dtype, device = e.p.dtype, e.p.device
          e.offset, e.numel, e.shape = numel, e.p:numel(), e.p:size()
          numel = numel + e.numel
        end
      end
      if numel > 0 then
        u.numel = numel
        u.shard_numel = (numel + world - 1) // world
        u.padded = u.shard_numel * world
        -- rank 0's values everywhere, then each rank keeps its piece
        local full = torch.zeros(u.padded, {dtype = dtype, device = device})
        for _, e in ipairs(u.entries) do
          if e.p then full:narrow(1, e.offset + 1, e.numel):copy(e.p:reshape(-1)) end
        end
        distributed.broadcast(full, {src = 0})
        u.shard = nn.Parameter(full:narrow(1, rank * u.shard_numel + 1, u.shard_numel):clone())
        for _, e in ipairs(u.entries) do
          rawget(e.owner, '_fields')[e.name] = nil          -- the whole parameter is given up
        end
        st.units[#st.units + 1] = u
        self:register_parameter('flat_param_' .. #st.units, u.shard)
      end
    end
    for _, buf in ipairs(module:buffers()) do distributed.broadcast(buf, {src = 0}) end
  end)
  -- a unit below the root gathers when its module is called, and lets go after
  for _, u in ipairs(st.units) do
    if u.module ~= module then
      u.module:register_forward_pre_hook(function() FSDP._install(u, Gather.apply(u.shard, u)) end)
      u.module:register_forward_hook(function() FSDP._release(u) end)
    end
  end
end

-- the unit's parameters become views of the gathered flat vector
function FSDP._install(u, full)
  for _, e in ipairs(u.entries) do
    local src = e.same_as or e
    rawget(e.owner, '_fields')[e.name] = full:narrow(1, src.offset + 1, src.numel):view(src.shape)
  end
end

function FSDP._release(u)
  for _, e in ipairs(u.entries) do rawget(e.owner, '_fields')[e.name] = nil end
end

function FSDP:updateOutput(...)
  local st = rawget(self, '_fsdp')
  local root = st.units[1]
  if root and root.module ~= self.module then root = nil end     -- every parameter is in a unit below
  if root then FSDP._install(root, Gather.apply(root.shard, root)) end
  local outs = table.pack(pcall(self.module, ...))
  for _, u in ipairs(st.units) do FSDP._release(u) end           -- after an error inside a unit too
  if not outs[1] then error(outs[2], 0) end
  return table.unpack(outs, 2, outs.n)
end

-- the gathered flat vectors, outside autograd: the whole parameters by unit
local function gathered(st)
  local fulls = {}
  torch.no_grad(function()
    for i, u in ipairs(st.units) do
      fulls[i] = torch.empty({u.padded}, {dtype = u.shard.dtype, device = u.shard.device})
      distributed.all_gather_into_tensor(fulls[i], u.shard)
    end
  end)
  return fulls
end

-- fsdp:state_dict(): the module's state dict with whole parameters, on every rank (a
-- collective: every rank calls it)
function FSDP:state_dict()
  local st = rawget(self, '_fsdp')
  local fulls = gathered(st)
  for i, u in ipairs(st.units) do
    for _, e in ipairs(u.entries) do
      local src = e.same_as or e
      rawget(e.owner, '_fields')[e.name] = fulls[i]:narrow(1, src.offset + 1, src.numel):view(src.shape):clone()
    end
  end
  local ok, sd = pcall(self.module.state_dict, self.module)
  for _, u in ipairs(st.units) do FSDP._release(u) end
  if not ok then error(sd, 2) end
  return sd
end

-- fsdp:load_state_dict(sd): sd as the module's own state_dict (whole parameters); each rank
-- keeps its shard of them
function FSDP:load_state_dict(sd, opts)
  local st = rawget(self, '_fsdp')
  local fulls = {}
  for i, u in ipairs(st.units) do
    fulls[i] = torch.zeros(u.padded, {dtype = u.shard.dtype, device = u.shard.device})
    for _, e in ipairs(u.entries) do
      if not e.same_as then
        rawget(e.owner, '_fields')[e.name] = nn.Parameter(fulls[i]:narrow(1, e.offset + 1, e.numel):view(e.shape))
      end
    end
    for _, e in ipairs(u.entries) do
      if e.same_as then rawget(e.owner, '_fields')[e.name] = rawget(e.same_as.owner, '_fields')[e.same_as.name] end
    end
  end
  local ok, err = pcall(self.module.load_state_dict, self.module, sd, opts)
  for _, u in ipairs(st.units) do FSDP._release(u) end
  if not ok then error(err, 2) end
  torch.no_grad(function()
    for i, u in ipairs(st.units) do u.shard:copy(fulls[i]:narrow(1, st.rank * u.shard_numel + 1, u.shard_numel)) end
  end)
  return self
end

function FSDP:__tostring__()
  local st = rawget(self, '_fsdp')
  return ('distributed.FullyShardedDataParallel(%d unit(s), rank %d of %d)\n  (module): %s'):format(#st.units,
    st.rank, st.world, tostring(self.module):gsub('\n', '\n  '))
end

return FSDP
