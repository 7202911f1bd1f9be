-- nn containers: Sequential, ModuleList, ModuleDict, Concat, ConcatTable,
-- ParallelTable, Identity. Children are named '1', '2', ... (1-based, where
-- PyTorch says '0', '1', ...); seq[i], #seq and seq[i] = m work; Torch7's
-- add/insert/remove/get/size too. (Torch7's `seq.modules` field is
-- `seq:children()` here: `modules()` is PyTorch's method listing every descendant.)
local torch = require 'torch'
local nn = require 'nn'

local Module = nn.Module

local function check_module(m, who)
  if not nn.is_module(m) then error(who .. ': expected a module, got ' .. torch.type(m), 3) end
end

local read, assign = Module.__index, Module.__newindex

local function position(self, k, who)
  local n = #rawget(self, '_items')
  if k < 0 then k = n + k + 1 end
  if k < 1 or k > n then error(string.format('%s: index %d out of range 1..%d', who, k, n), 3) end
  return k
end

-- An ordered list of children (kept in _items) registered as '1', '2', ...: integer
-- keys read them (negative from the end) and seq[i] = m replaces one.
local function list_class(name)
  local cls = torch.class('nn.' .. name, 'nn.Module')
  cls.__index = function(self, k)
    if math.type(k) == 'integer' then
      local mods = rawget(self, '_items')
      if k < 0 then k = #mods + k + 1 end
      return mods[k]
    end
    return read(self, k)
  end
  cls.__newindex = function(self, k, v)
    if math.type(k) ~= 'integer' then return assign(self, k, v) end
    local who = 'nn.' .. name .. '[' .. k .. ']'
    check_module(v, who)
    local mods = rawget(self, '_items')
    mods[position(self, k, who)] = v
    self:_set_children(mods)
  end
  cls.__len = function(self) return #rawget(self, '_items') end
  function cls:__init(...)
    Module.__init(self)
    rawset(self, '_items', {})
  end
  -- add(m) (Torch7) / append(m): adds a child at the end; returns self.
  function cls:add(m, index)
    check_module(m, 'nn.' .. name .. ':add')
    local mods = rawget(self, '_items')
    if index then table.insert(mods, index, m) else mods[#mods + 1] = m end
    self:_set_children(mods)
    return self
  end
  cls.append = cls.add
  -- insert(m, index): adds a child at index.
  function cls:insert(m, index) return self:add(m, index or #rawget(self, '_items') + 1) end
  -- remove(index=last): takes out a child; returns it.
  function cls:remove(index)
    local mods = rawget(self, '_items')
    local m = table.remove(mods, index or #mods)
    self:_set_children(mods)
    return m
  end
  -- get(i): the i-th child. size(): how many.
  function cls:get(i) return rawget(self, '_items')[i] end
  function cls:size() return #rawget(self, '_items') end
  -- extend(list): appends every module of a Lua array; returns self.
  function cls:extend(list)
    for _, m in ipairs(list) do self:add(m) end
    return self
  end
  return cls
end

-- nn.Sequential(m1, m2, ...): applies its children in order.
local Sequential = list_class('Sequential')
local seq_init = Sequential.__init
function Sequential:__init(...)
  seq_init(self)
  for i = 1, select('#', ...) do self:add((select(i, ...))) end
end
function Sequential:updateOutput(x, ...)
  local mods = rawget(self, '_items')
  if #mods == 0 then return x end
  x = mods[1](x, ...)
  for i = 2, #mods do x = mods[i](x) end
  return x
end

-- nn.ModuleList({m1, m2, ...}): a list of registered modules (no forward of its own).
local ModuleList = list_class('ModuleList')
local list_init = ModuleList.__init
function ModuleList:__init(list)
  list_init(self)
  for _, m in ipairs(list or {}) do self:add(m) end
end
function ModuleList:updateOutput()
  error('nn.ModuleList has no forward: index it and call its modules', 2)
end

-- nn.ModuleDict({name = m, ...}): modules registered by name (d.name, d['name']).
local ModuleDict = torch.class('nn.ModuleDict', 'nn.Module')
function ModuleDict:__init(tbl)
  Module.__init(self)
  local keys = {}
  for k in pairs(tbl or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do self:add_module(k, tbl[k]) end
end
-- d:keys(), d:values(), d:items() ({{name, module}, ...}), in insertion order.
function ModuleDict:keys()
  local out = {}
  for i, p in ipairs(self:named_children()) do out[i] = p[1] end
  return out
end
function ModuleDict:values() return self:children() end
function ModuleDict:items() return self:named_children() end
function ModuleDict:updateOutput()
  error('nn.ModuleDict has no forward: index it and call its modules', 2)
end
ModuleDict.__len = function(self) return #self:named_children() end

-- nn.ConcatTable(): applies each child to the same input; returns the table of outputs.
local ConcatTable = list_class('ConcatTable')
function ConcatTable:updateOutput(x)
  local out = {}
  for i, m in ipairs(rawget(self, '_items')) do out[i] = m(x) end
  return out
end

-- nn.ParallelTable(): applies the i-th child to the i-th element of the input table.
local ParallelTable = list_class('ParallelTable')
function ParallelTable:updateOutput(x)
  if type(x) ~= 'table' or torch.is_tensor(x) then error('nn.ParallelTable: expected a table of inputs', 3) end
  local mods = rawget(self, '_items')
  if #x ~= #mods then
    error(string.format('nn.ParallelTable: %d inputs for %d modules', #x, #mods), 3)
  end
  local out = {}
  for i, m in ipairs(mods) do out[i] = m(x[i]) end
  return out
end

-- nn.Concat(dim): applies each child to the same input and concatenates the outputs along dim.
local Concat = list_class('Concat')
local concat_init = Concat.__init
function Concat:__init(dim)
  concat_init(self)
  self.dimension = dim or 1
end
function Concat:updateOutput(x)
  local outs = {}
  for i, m in ipairs(rawget(self, '_items')) do outs[i] = m(x) end
  return torch.cat(outs, self.dimension)
end
function Concat:extra_repr() return 'dim=' .. self.dimension end

-- nn.Identity(): returns its input.
local Identity = torch.class('nn.Identity', 'nn.Module')
function Identity:updateOutput(x) return x end

return nn
