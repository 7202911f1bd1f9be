-- The builder of the list containers (Sequential, ModuleList, Concat,
-- ConcatTable, ParallelTable). Children are named '1', '2', ... (1-based, where
-- PyTorch says '0', '1', ...); seq[i], #seq and seq[i] = m work; Torch7's
-- add/insert/remove/get/size too, and Torch7's `seq.modules` (the children; the
-- method seq:modules() lists every descendant, as PyTorch's).
local torch = require 'torch'
local nn = require 'nn'

local Module = nn.Module

local function check_module(m, who)
  if not nn.is_module(m) then error(who .. ': expected a module, got ' .. torch.type(m), 3) end
end

local read, assign = Module.__index, Module.__newindex

-- Torch7's seq.modules: a read-only view of the children (seq.modules[1],
-- #seq.modules, ipairs, pairs); called as a method, seq:modules() is still
-- PyTorch's list of every descendant. (The children list itself stays a plain
-- table, as files save it.)
local views = setmetatable({}, {__mode = 'k'})      -- children list -> its view (made once)
local function children_view(items)
  local view = views[items]
  if view == nil then
    view = setmetatable({}, {__index = items, __len = function() return #items end,
                             __pairs = function() return next, items, nil end,
                             __newindex = function() error('nn: seq.modules is read-only: use add, insert or remove', 2) end,
                             __call = function(_, self, ...) return Module.modules(self, ...) end})
    views[items] = view
  end
  return view
end

local function position(self, k, who)
  local n = #rawget(self, '_items')
  if k < 0 then k = n + k + 1 end
  if k < 1 or k > n then error(string.format('%s: index %d out of range 1..%d', who, k, n), 3) end
  return k
end

-- Torch7's context on a child's error: "In i module of nn.Sequential:" on a line of
-- its own in front, one line per container on the way up (outermost first)
local function in_module(self, i, err)
  if type(err) ~= 'string' then return err end
  if err:sub(1, 1) ~= '\n' then err = '\n' .. err end
  return '\nIn ' .. i .. ' module of ' .. torch.type(self) .. ':' .. err
end

-- the i-th child called on the arguments: in the Torch7 dialect its error goes up with
-- Torch7's context in front (the containers' updateOutput calls their children so)
local function child_done(self, i, ok, ...)
  if ok then return ... end
  error(in_module(self, i, (...)), 0)
end
local dialect = torch.dialect
local function run_child(self, i, ...)
  local m = rawget(self, '_items')[i]
  if dialect() ~= 'torch7' then return m(...) end
  return child_done(self, i, pcall(m, ...))
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
    if k == 'modules' then return children_view(rawget(self, '_items')) end
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
  -- self:_run_child(i, ...): the i-th child called on the arguments, its error given
  -- Torch7's context in the Torch7 dialect.
  cls._run_child = run_child
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
  function cls:insert(m, index) return (self:add(m, index or #rawget(self, '_items') + 1)) end
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

return list_class
