-- distributed.ZeroRedundancyOptimizer(params, optimizer_class, opts): ZeRO stage 1, the
-- optimizer state sharded across the ranks of the default process group. Each parameter
-- belongs to one rank (in order, each to the rank holding the fewest elements so far, the
-- same on every rank); each rank runs optimizer_class(its parameters, opts) alone, so that
-- Adam's two moments, say, live on one rank instead of all of them, and after its step
-- every rank broadcasts the parameters it owns to the others (one broadcast per owner and
-- dtype, through a flat buffer). The gradients must already be the same on every rank
-- (nn.DistributedDataParallel averages them): then every rank holds the parameters one
-- process stepping optimizer_class over all of them would.
--   local ddp = nn.DistributedDataParallel(model)
--   local opt = distributed.ZeroRedundancyOptimizer(model:parameters(), optim.Adam, {lr = 1e-3})
--   ... loss:backward(); opt:step(); opt:zero_grad()
-- Changes to opt.param_groups[1]'s options (a learning-rate scheduler's) reach the local
-- optimizer at the next step. opt:consolidate_state_dict(to=0) gathers the shards' state
-- on rank to, whose opt:state_dict() is then the whole optimizer's, as one process's
-- optimizer_class would have it (parameters numbered in params' order); load_state_dict
-- takes such a dict on every rank and keeps its own shard.
local torch = require 'torch'
local optim = require 'optim'
local distributed = require 'distributed'

local Zero = optim.Optimizer:extend('distributed.ZeroRedundancyOptimizer')

local function fail(fmt, ...) error('distributed.ZeroRedundancyOptimizer: ' .. string.format(fmt, ...), 3) end

function Zero:__init(params, optimizer_class, opts)
  if not distributed.is_initialized() then
    fail("the default process group is not initialised: call distributed.init_process_group{backend='mpi'} first")
  end
  if type(params) ~= 'table' or torch.is_tensor(params) or not torch.is_tensor(params[1]) then
    fail('params must be a Lua array of tensors (model:parameters()), got %s', torch.typename(params) or type(params))
  end
  if type(optimizer_class) ~= 'table' or getmetatable(optimizer_class) == nil then
    fail('optimizer_class must be an optimizer class (optim.Adam, optim.SGD, ...), got %s', type(optimizer_class))
  end
  opts = opts or {}
  optim.Optimizer.__init(self, params, opts)
  -- the options the class fills in beyond opts (Adam's betas, eps, ...): this group holds
  -- them all, as one process's optimizer_class would
  for k, v in pairs(optimizer_class({torch.zeros(1)}, opts).param_groups[1]) do
    if k ~= 'params' and self.param_groups[1][k] == nil then self.param_groups[1][k] = v end
  end
  self.optimizer_class = optimizer_class
  local world, rank = distributed.get_world_size(), distributed.get_rank()
  self.world, self.rank = world, rank
  -- each parameter to the rank holding the fewest elements so far (lowest rank on ties)
  local all = self.param_groups[1].params
  local load, owner, mine, local_index = {}, {}, {}, {}
  for r = 0, world - 1 do load[r] = 0 end
  for i, p in ipairs(all) do
    local best = 0
    for r = 1, world - 1 do if load[r] < load[best] then best = r end end
    owner[i] = best
    load[best] = load[best] + p:numel()
    if best == rank then
      mine[#mine + 1] = p
      local_index[i] = #mine
    end
  end
  self.owner, self.local_index = owner, local_index
  self.local_optimizer = #mine > 0 and optimizer_class(mine, opts) or nil
  -- the parameters each rank broadcasts, by owner and dtype (fixed order: every rank alike)
  local buckets = {}
  for r = 0, world - 1 do
    local by_dtype, order = {}, {}
    for i, p in ipairs(all) do
      if owner[i] == r then
        local b = by_dtype[p.dtype]
        if not b then
          b = {src = r, params = {}, numel = 0}
          by_dtype[p.dtype] = b
          order[#order + 1] = b
        end
        b.params[#b.params + 1] = p
        b.numel = b.numel + p:numel()
      end
    end
    for _, b in ipairs(order) do
      b.flat = torch.zeros(b.numel, {dtype = b.params[1].dtype, device = b.params[1].device})
      buckets[#buckets + 1] = b
    end
  end
  self.buckets = buckets
end

-- the options of param_groups[1] (a scheduler may have changed them) into the local optimizer
local function sync_options(self)
  if not self.local_optimizer then return end
  for _, group in ipairs(self.local_optimizer.param_groups) do
    for k, v in pairs(self.param_groups[1]) do
      if k ~= 'params' then group[k] = v end
    end
  end
end

-- opt:step(closure): the local optimizer's step on this rank's parameters, then every
-- parameter broadcast from its owner; returns the closure's loss
function Zero:step(closure)
  sync_options(self)
  local loss
  if self.local_optimizer then loss = self.local_optimizer:step(closure)
  elseif closure then loss = closure() end
  torch.no_grad(function()
    for _, b in ipairs(self.buckets) do
      local at = 0
      if b.src == self.rank then
        for _, p in ipairs(b.params) do
          b.flat:narrow(1, at + 1, p:numel()):copy(p:reshape(-1))
          at = at + p:numel()
        end
      end
      distributed.broadcast(b.flat, {src = b.src})
      if b.src ~= self.rank then
        at = 0
        for _, p in ipairs(b.params) do
          p:copy(b.flat:narrow(1, at + 1, p:numel()):view(p:size()))
          at = at + p:numel()
        end
      end
    end
  end)
  return loss
end

-- opt:consolidate_state_dict(to=0): gathers every rank's shard of the state on rank to
-- (every rank must call it)
function Zero:consolidate_state_dict(to)
  to = to or 0
  local shard = self.local_optimizer and self.local_optimizer:state_dict() or {state = {}}
  -- local positions back to positions in params
  local global = {}
  for i, j in pairs(self.local_index) do
    if shard.state[j] ~= nil then global[i] = shard.state[j] end
  end
  local shards = {}
  distributed.all_gather_object(shards, global)
  if self.rank == to then
    local state = {}
    for _, s in ipairs(shards) do for i, v in pairs(s) do state[i] = v end end
    self._consolidated = state
  else
    self._consolidated = nil
  end
end

-- opt:state_dict(): the whole optimizer's state on the rank consolidate_state_dict
-- gathered it on
function Zero:state_dict()
  if not self._consolidated then
    fail('state_dict on rank %d: call opt:consolidate_state_dict(to) on every rank first; the state is then '
         .. 'on rank to', self.rank)
  end
  local group = {}
  for k, v in pairs(self.param_groups[1]) do if k ~= 'params' then group[k] = v end end
  group.params = {}
  for i = 1, #self.param_groups[1].params do group.params[i] = i end
  return {state = self._consolidated, param_groups = {group}}
end

-- opt:load_state_dict(sd): a whole optimizer's state dict (state_dict's, or one process's
-- optimizer_class's over the same parameters); each rank keeps its shard
function Zero:load_state_dict(sd)
  if type(sd) ~= 'table' or type(sd.state) ~= 'table' or type(sd.param_groups) ~= 'table' then
    fail('load_state_dict: expected a state dict {state=, param_groups=}, got %s', type(sd))
  end
  local hyper = {}
  for k, v in pairs(sd.param_groups[1] or {}) do if k ~= 'params' then hyper[k] = v end end
  for k, v in pairs(hyper) do self.param_groups[1][k] = v end
  if not self.local_optimizer then return end
  local state = {}
  for i, j in pairs(self.local_index) do state[j] = sd.state[i] end
  local group = {}
  for k, v in pairs(hyper) do group[k] = v end
  group.params = {}
  for j = 1, #self.local_optimizer.param_groups[1].params do group.params[j] = j end
  self.local_optimizer:load_state_dict({state = state, param_groups = {group}})
end

distributed.ZeroRedundancyOptimizer = Zero
return Zero
