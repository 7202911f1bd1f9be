-- The ways a user iterates data's objects, made to work alike on loaders,
-- datasets and samplers (Lua 5.4 offers three, and each must either work or
-- say what does):
--   for i, x in ipairs(obj) do   -- obj[1], obj[2], ... until nil (ipairs reads through __index)
--   for x in obj do              -- obj called as an iterator (__call), x never nil
--   for i, x in pairs(obj) do    -- __pairs
-- A stream (a loader, a sampler, an iterable dataset) draws its order when an
-- iteration starts (a shuffle, worker processes), so it cannot be read at
-- random: obj[k] reads the stream's next item when k follows the last one read,
-- and obj[1] starts a new pass (every ipairs loop starts at 1). `for x in obj`
-- finds its own pass again from the item it was last given, so nested loops
-- of that form each make one whole pass; `pairs(obj)` returns a fresh pass.
local data = require 'data'

-- per object: the pass ipairs reads ({next=, i=, done=}) and the passes of
-- `for x in obj` loops by the item each last gave. Kept outside the object, so
-- it saves and prints as before and is collected with it.
local state = setmetatable({}, {__mode = 'k'})

local function state_of(self)
  local s = state[self]
  if not s then
    s = {places = setmetatable({}, {__mode = 'k'})}
    state[self] = s
  end
  return s
end

-- the error level of the user's code calling into the function that calls
-- this: the first Lua function up the stack outside lib/data (ipairs, a C
-- function, and a tail call all stand between in one form or another)
local DATA_DIR = debug.getinfo(1, 'S').source:match('^(.*[/\\])') or '\0'
local function user_level()
  for level = 3, 20 do
    local info = debug.getinfo(level, 'S')
    if not info then break end
    if info.what ~= 'C' and info.source:sub(1, #DATA_DIR) ~= DATA_DIR then return level - 1 end
  end
  return 2
end

-- the class's name, as a user's error should show it ('data.DataLoader')
local function name_of(self)
  local mt = getmetatable(self)
  return mt and rawget(mt, '__typename') or 'data object'
end

-- obj[k] for a stream: the next item of the pass in progress when k is one past
-- the last item it gave, the first item of a new pass when k is 1, nil at the
-- end; any other k raises, naming the forms that work.
local function stream_read(self, k, spec)
  local s = state_of(self)
  local pass = s.pass
  if k == 1 then
    pass = {next = spec.start(self), i = 0}
    s.pass = pass
  elseif not pass or pass.i + 1 ~= k or pass.done then
    local why
    if not pass then why = string.format('no pass is in progress (%s[1] starts one)', spec.var)
    elseif pass.done then why = string.format('the pass in progress ended after %s %d', spec.item, pass.i)
    else why = string.format('the pass in progress stands at %s %d', spec.item, pass.i) end
    error(string.format('%s: %s[%d]: %s are read in order only (ipairs), and %s. A loop inside another ' ..
                        'over the same %s? Give each loop its own pass: `%s`', name_of(self), spec.var, k,
                        spec.items, why, spec.noun, spec.iter_form), user_level())
  end
  local item = pass.next()
  if item == nil then
    pass.done, pass.next = true, nil           -- (the iterator goes: a loader's workers with it)
    return nil
  end
  pass.i = k
  return item
end

-- `for x in obj do`: Lua calls obj(nil, previous x); nil starts a new pass, else
-- the pass that gave previous x goes on. places[x] is the set of passes whose
-- last item is x: one for a table or tensor unless two passes gave the very
-- same object; for equal numbers more than one live pass is ambiguous, and
-- raises rather than guess (a pass left by `break` stays a candidate).
local function walk(self, spec, first, prev, ...)
  local s = state_of(self)
  local w
  if prev == nil then
    if first ~= nil or select('#', ...) > 0 then
      error(string.format('%s: %s(...) is not a function call; iterate with `%s`', name_of(self), spec.var,
                          spec.call_form), user_level())
    end
    w = {next = spec.start(self)}
  else
    local set = s.places[prev]
    local live = 0
    for p in pairs(set or {}) do
      if p.next then live, w = live + 1, p end
    end
    if live > 1 then
      error(string.format('%s: two `%s` loops over one %s stand at equal %s, so which goes on is not ' ..
                          'known. Give each loop its own pass: `%s`', name_of(self), spec.call_form, spec.noun,
                          spec.items, spec.iter_form), user_level())
    end
    if not w then
      error(string.format('%s: %s called with a value it did not give; iterate with `%s`', name_of(self),
                          spec.var, spec.call_form), user_level())
    end
    set[w] = nil
    if next(set) == nil then s.places[prev] = nil end
  end
  local item = w.next()
  if item == nil then
    w.next = nil                               -- (the iterator goes: a loader's workers with it)
    return nil
  end
  if item == item then                         -- (a NaN cannot be a key: its loop raises at the next step)
    local set = s.places[item]
    if not set then
      set = {}
      s.places[item] = set
    end
    set[w] = true
  end
  return item, spec.hint
end

-- the second value `for x in obj` gives: none is meant, so a loop written
-- `for i, x in obj` (ipairs's shape) or `for x, y in loader` (Python's
-- unpacking) gets this, which raises on any use, saying what to write
local function hint_value(spec, name)
  local parts = spec.item == 'index' and '' or
                string.format(', and `local x, y = %s[1], %s[2]` for its parts', spec.item, spec.item)
  local msg = string.format('%s: `%s` gives one value, the %s: write `%s` for its number too%s', name,
                            spec.call_form, spec.item, spec.ipairs_form, parts)
  local function fail() error(msg, 2) end
  local mt = {__tostring = function() return msg end, __name = 'data.hint'}
  for _, e in ipairs({'__index', '__newindex', '__call', '__len', '__concat', '__unm', '__add', '__sub', '__mul',
                      '__div', '__mod', '__pow', '__idiv', '__lt', '__le'}) do
    mt[e] = fail
  end
  return setmetatable({}, mt)
end

-- data._iterable(cls, spec): gives the class (and its subclasses, through
-- __subclass) the three forms. spec: start(self) (a function giving the next
-- item, nil at the end, for a new pass), pairs(self) (the iterator for
-- pairs), read(self, k) for a class read at random (map-style datasets; else
-- stream_read), and for the errors: noun ('loader', 'dataset'), var ('loader', 'ds'), item and items ('batch',
-- 'batches'), iter_form, ipairs_form and call_form (how the user writes them).
function data._iterable(cls, spec)
  local function index(self, k)
    local i = type(k) == 'number' and math.tointeger(k)
    if i then
      if spec.read then return spec.read(self, i) end
      return stream_read(self, i, spec)
    end
    return getmetatable(self)[k]
  end
  local function install(c)
    c.__index = index
    c.__call = function(self, first, prev, ...) return walk(self, spec, first, prev, ...) end
    c.__pairs = spec.pairs
  end
  spec.hint = hint_value(spec, rawget(cls, '__typename'))
  install(cls)
  local previous = rawget(cls, '__subclass')
  cls.__subclass = function(c)
    if previous then previous(c) end
    install(c)
  end
end

-- data._extend(base, name): a new class below base without registering a name
-- (as optim.Optimizer:extend and torch.autograd.Function:extend): the
-- metamethods copied down, base's __subclass applied, Class(...) builds an
-- instance and calls __init when there is one.
function data._extend(base, name)
  local base_name = rawget(base, '__typename') or 'data class'
  if name ~= nil and type(name) ~= 'string' then
    error(string.format('%s:extend: expects a class name (a string) or nothing, got %s', base_name, type(name)),
          user_level())
  end
  name = name or (base_name .. ' subclass')
  local cls = {__typename = name}
  cls.__index = cls
  for k, v in pairs(base) do
    if type(k) == 'string' and k:sub(1, 2) == '__' and k ~= '__index' and k ~= '__typename' then cls[k] = v end
  end
  setmetatable(cls, {
    __index = base,
    __call = function(c, ...)
      local obj = setmetatable({}, c)
      if c.__init then c.__init(obj, ...) end
      return obj
    end,
    __tostring = function() return name end,
  })
  if base.__subclass then base.__subclass(cls) end
  return cls
end

return data
