-- Torch7's storages: torch.FloatStorage(...) and its kin, the methods a
-- storage has beyond those in C (src/vm/lt_storage.c), and the tensor
-- methods that read or set a tensor's storage.
local torch = require 'torch.core'
local methods = torch._methods
local smethods = torch._storage_methods

local stems = {float32 = 'Float', float64 = 'Double', float16 = 'Half', bfloat16 = 'BFloat16',
               int8 = 'Char', uint8 = 'Byte', int16 = 'Short', int32 = 'Int', int64 = 'Long', bool = 'Bool'}
local dtype_of_stem = {}
for dtype, stem in pairs(stems) do dtype_of_stem[stem] = dtype end

local function storage_type(s)
  if not torch.isStorage(s) then error('storage type: expected a storage, got ' .. type(s), 2) end
  return 'torch.' .. stems[s:_dtype()] .. 'Storage'
end
torch._storage_type = storage_type

-- torch.FloatStorage(n), (table), (storage, offset, size): callable tables
-- whose fields are the storage methods, as the tensor constructors are.
for dtype, stem in pairs(stems) do
  torch[stem .. 'Storage'] = setmetatable({__typename = 'torch.' .. stem .. 'Storage'}, {
    __index = smethods,
    __call = function(_, ...) return torch._storage_new(dtype, ...) end,
  })
end
-- torch.Storage: the default tensor type's storage
torch.Storage = setmetatable({}, {
  __index = smethods,
  __call = function(_, ...) return torch._storage_new(torch.get_default_dtype(), ...) end,
})

-- s:type() with no argument: 'torch.FloatStorage'; s:type(name) converts
function smethods.type(s, name)
  if name == nil then return storage_type(s) end
  local stem = type(name) == 'string' and name:match('^torch%.(%a+)Storage$')
  local dtype = stem and dtype_of_stem[stem]
  if not dtype then error('type: unknown storage type ' .. tostring(name), 2) end
  if dtype == s:_dtype() then return s end
  local r = torch._storage_new(dtype, s:size())
  r:_tensor():copy_(s:_tensor())
  return r
end
for dtype, stem in pairs(stems) do
  smethods[stem:lower()] = function(s) return smethods.type(s, 'torch.' .. stem .. 'Storage') end
end

-- s:copy(src): src a storage, a tensor or a table of the same element count
function smethods.copy(s, src)
  local from
  if torch.isStorage(src) then from = src:_tensor()
  elseif torch.is_tensor(src) then from = src
  elseif type(src) == 'table' then from = torch.tensor(src, {dtype = s:_dtype()})
  else error('copy: expected a storage, a tensor or a table, got ' .. type(src), 2) end
  if from:numel() ~= s:size() then
    error(string.format('copy: a storage of %d elements cannot take %d', s:size(), from:numel()), 2)
  end
  s:_tensor():copy_(from:reshape(-1))
  return s
end

function smethods.totable(s)
  if s:size() == 0 then return {} end
  return s:_tensor():totable()
end
smethods.tolist = smethods.totable

-- Torch7 prints a storage as a column of its values and a footer.
function smethods.__tostring_body(s)
  if s:size() == 0 then return '[' .. storage_type(s) .. ' of size 0]' end
  local text = tostring(s:_tensor())
  return (text:gsub('%[torch%.(%a+)Tensor of size (%d+)%]$', '[torch.%1Storage of size %2]'))
end
debug.getregistry()['torch.Storage'].__tostring = smethods.__tostring_body

-- ---- tensors and their storages ----

-- An error message raised again from a wrapper: the position the inner call
-- gave it taken off, and, when name is given, the op named where Lua could
-- not name a function called through pcall ('?').
local function error_text(msg, name)
  if type(msg) ~= 'string' then return msg end
  msg = msg:gsub('^[^:\n]+:%d+: ', '', 1)
  if name then msg = msg:gsub("to '%?'", "to '" .. name .. "'", 1) end
  return msg
end
torch._error_text = error_text

-- the folder holding moontorch's Lua libraries (lib/: torch, nn, optim, data, ...), as
-- sources name it ('@.../lib/')
local LIB_ROOT = debug.getinfo(1, 'S').source:match('^(.*[/\\])torch[/\\][^/\\]+$')

-- torch._in_library(source): whether a chunk's source (debug.getinfo's) is one of
-- moontorch's Lua libraries
local function in_library(source)
  return LIB_ROOT ~= nil and type(source) == 'string' and source:sub(1, #LIB_ROOT) == LIB_ROOT
end
torch._in_library = in_library

-- torch._caller_level(): for error(msg, level) in the function calling this, the level
-- of the first caller outside moontorch's libraries and outside C: a library's error
-- then names the user's line (1, the raising function itself, when there is none).
function torch._caller_level()
  local level = 3                     -- 1: here, 2: the raising function, 3: its caller
  while true do
    local info = debug.getinfo(level, 'S')
    if info == nil then return 1 end
    if info.what ~= 'C' and not in_library(info.source) then return level - 1 end
    level = level + 1
  end
end

-- f(...) with its error raised at the caller of the function calling this
-- (level 3 from here), its own position taken off: a Lua wrapper around a
-- binding then blames the user's line, as the binding alone would.
local function at_caller(f, ...)
  local res = table.pack(pcall(f, ...))
  if not res[1] then error(error_text(res[2]), 3) end
  return table.unpack(res, 2, res.n)
end
torch._at_caller = at_caller

-- x:set(storage [, offset [, sizes [, strides]]]), x:set(y):
-- Torch7's set. Sizes and strides are tables, torch.Size or LongStorage;
-- several numbers after the offset are size, stride pairs.
function methods.set(x, src, offset, ...)
  if torch.is_tensor(src) then return x:set_(src) end
  if not torch.isStorage(src) then
    error('set: expects a storage or a tensor, got ' .. torch.type(src), 2)
  end
  local sizes, strides = ...
  if type(sizes) == 'number' then
    local pairs_ = {...}
    sizes, strides = {}, {}
    for i = 1, #pairs_, 2 do
      sizes[#sizes + 1] = pairs_[i]
      strides[#strides + 1] = pairs_[i + 1] or 1
    end
  end
  return at_caller(torch._set_storage, x, src, offset or 1, sizes, strides)
end

function methods.elementSize(x) return x:element_size() end

-- torch.isStorage(obj)
torch.is_storage = torch.isStorage

return torch
