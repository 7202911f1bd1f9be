-- Torch7's serialization format: File:writeObject/readObject, and torch.save,
-- torch.load, torch.serialize and torch.deserialize in that format.
--
-- A value is an Int type tag and its payload: 0 nil; 1 number (a Double);
-- 2 string (Int length, the bytes); 5 boolean (Int 1 or 0); 3 table and
-- 4 torch object, each followed by an Int reference index -- an index met
-- before names the object already read, a new one is followed by the object:
-- a table's Int pair count and its keys and values, a torch object's version
-- string ("V 1"), class name and contents. A tensor's contents: Int ndim, the
-- sizes and strides (Longs), the 1-based storage offset (Long) and its storage
-- object; a storage's: Long size and the raw values. 6, 7 and 8 are Lua
-- functions (bytecode), which moontorch refuses to write and to read: loading
-- a file never runs code. Every count and size read is bounded by the bytes
-- left, nesting is bounded, and a bad file raises an error naming the file and
-- the byte, never a crash. docs/serialize.md describes it.
local torch = require 'torch.core'
local File = require 'torch.File'

File._internal(debug.getinfo(1, 'S').source)
local fail = File._fail

local generator_mt = debug.getregistry()['torch.Generator']
local TYPE_NIL, TYPE_NUMBER, TYPE_STRING, TYPE_TABLE, TYPE_TORCH, TYPE_BOOLEAN = 0, 1, 2, 3, 4, 5
local TYPE_FUNCTION, LEGACY_TYPE_RECUR_FUNCTION, TYPE_RECUR_FUNCTION = 6, 7, 8
-- Tables nest at most this deep, on write and on read (both recurse), as in
-- moontorch's own format.
local MAX_DEPTH = 10000
-- Dims a tensor may have: the engine's limit (MT_MAX_DIMS).
local MAX_DIMS = 16

-- Torch7's type stems and moontorch's dtypes
local STEM_DTYPE = {Byte = 'uint8', Char = 'int8', Short = 'int16', Int = 'int32', Long = 'int64',
                    Float = 'float32', Double = 'float64', Half = 'float16'}
local DTYPE_STEM = {}
for stem, dtype in pairs(STEM_DTYPE) do DTYPE_STEM[dtype] = stem end
-- dtypes Torch7 has no tensors of, written as the nearest it has
local WRITTEN_AS = {bool = 'uint8', bfloat16 = 'float32'}

local size_mt = debug.getregistry()['torch.Size']

-- 'torch.FloatTensor' -> 'Float', 'tensor'; Cuda classes load on the CPU
local function torch_kind(class)
  local stem, kind = class:match('^torch%.(%a-)(Tensor)$')
  if not stem then stem, kind = class:match('^torch%.(%a-)(Storage)$') end
  if not stem then return nil end
  if stem:sub(1, 4) == 'Cuda' then stem = stem:sub(5) end
  if stem == '' then stem = 'Float' end
  if not STEM_DTYPE[stem] then return nil end
  return stem, kind:lower()
end

local function is_storage(v)
  if torch.isStorage then return torch.isStorage(v) end
  local mt = getmetatable(v)
  return type(v) == 'userdata' and type(mt) == 'table' and mt.__name == 'torch.Storage'
end

-- per-file bookkeeping, kept across calls on one file as Torch7 keeps it
local function state(f)
  local s = rawget(f, '_t7')
  if not s then
    s = {written = {}, count = 0, read = {}, backing = setmetatable({}, {__mode = 'k'})}
    rawset(f, '_t7', s)
  end
  return s
end

-- ---- writing ----

-- "obj.a.b" for messages
local function path_text(trail, depth)
  local parts = {'obj'}
  for i = 1, depth - 1 do parts[#parts + 1] = '.' .. tostring(trail[i]) end
  return table.concat(parts)
end

local function write_string(f, s)
  f:writeInt(#s)
  File._write_chars(f, s)
end

local function write_header(f, class)
  write_string(f, 'V 1')
  write_string(f, class)
end

-- a tensor's whole storage as a 1-D tensor of a dtype Torch7 has, and the key
-- that names the storage (tensors on one storage share it in the file)
local function storage_of(x)
  local n = #x:storage()
  local base = x:data_ptr() - (x:storageOffset() - 1) * x:element_size()
  local whole = x:as_strided({n}, {1}, 1)
  local as = WRITTEN_AS[x.dtype]
  return as and whole:to(as) or whole, n > 0 and base ~= 0 and (x.dtype .. ':' .. base) or nil
end

local writer

-- the class name and field table of a torch.class object
local function object_fields(op, v, mt, trail, depth)
  local class = rawget(mt, '__typename')
  if type(class) ~= 'string' or torch.getmetatable(class) ~= mt then
    fail(op, 'cannot save a table with a metatable that is not a registered class at %s', path_text(trail, depth))
  end
  local nn = package.loaded.nn
  if nn and nn.is_module and nn.is_module(v) then
    local name, fields = require('nn.torch7').to_torch7(v)
    if not name then
      fail(op, "cannot save moontorch's %s in Torch7's format at %s (Torch7 has no such module here): "
           .. 'save its state_dict(), or use moontorch\'s format', class, path_text(trail, depth))
    end
    return name, fields
  end
  local fields = {}
  for k, x in next, v do fields[k] = x end
  return class, fields
end

-- writer(f, op): a function writing one value to f as Torch7's writeObject
function writer(f, op)
  local st = state(f)
  local trail = {}
  local value

  -- the Int reference index of obj (keyed by key): true when it was written before
  local function reference(key)
    local index = not f._forced and st.written[key]
    if index then f:writeInt(index) return true end
    st.count = st.count + 1
    if not f._forced then st.written[key] = st.count end
    f:writeInt(st.count)
    return false
  end

  local function storage(t, key)              -- t: a 1-D tensor of the whole storage
    f:writeInt(TYPE_TORCH)
    if reference(key or t) then return end
    local stem = DTYPE_STEM[t.dtype]
    write_header(f, 'torch.' .. stem .. 'Storage')
    f:writeLong(t:numel())
    if t:numel() > 0 then f['write' .. stem](f, t) end
  end

  local function tensor(x)
    if x.is_cuda then x = x:cpu() end
    x = x:detach()
    local stem = DTYPE_STEM[WRITTEN_AS[x.dtype] or x.dtype]
    write_header(f, 'torch.' .. stem .. 'Tensor')
    if x:numel() == 0 then                    -- Torch7's empty tensor: no dims, no storage
      f:writeInt(0)
      f:writeLong(1)
      f:writeInt(TYPE_NIL)
      return
    end
    if x:dim() == 0 then x = x:view(1) end    -- Torch7 has no 0-dim tensors
    local sizes, strides = {}, {}
    for d = 1, x:dim() do sizes[d], strides[d] = x:size(d), x:stride(d) end
    f:writeInt(x:dim())
    f:writeLong(sizes)
    f:writeLong(strides)
    f:writeLong(x:storageOffset())
    storage(storage_of(x))
  end

  function value(v, depth)
    local t = type(v)
    if v == nil then f:writeInt(TYPE_NIL) return end
    if t == 'boolean' then f:writeInt(TYPE_BOOLEAN) f:writeInt(v and 1 or 0) return end
    if t == 'number' then f:writeInt(TYPE_NUMBER) f:writeDouble(v) return end
    if t == 'string' then f:writeInt(TYPE_STRING) write_string(f, v) return end
    if depth > MAX_DEPTH then fail(op, 'tables nest deeper than %d levels', MAX_DEPTH) end
    if torch.is_tensor(v) then
      f:writeInt(TYPE_TORCH)
      if not reference(v) then tensor(v) end
      return
    end
    if is_storage(v) then
      local whole = File._storage_tensor(v)
      if not whole then fail(op, 'cannot save a storage at %s: this moontorch has no Storage:_tensor()', path_text(trail, depth)) end
      local key = whole:numel() > 0 and (whole.dtype .. ':' .. whole:data_ptr()) or nil
      storage(WRITTEN_AS[whole.dtype] and whole:to(WRITTEN_AS[whole.dtype]) or whole, key)
      return
    end
    if t == 'function' then
      fail(op, 'cannot save a function at %s (Torch7 files may hold Lua bytecode, but moontorch neither writes nor '
           .. 'loads it)', path_text(trail, depth))
    end
    if getmetatable(v) == generator_mt then      -- moontorch's generator state, as a field
      f:writeInt(TYPE_TORCH)
      if reference(v) then return end
      write_header(f, 'torch.Generator')
      value({state = v:get_state()}, depth + 1)
      return
    end
    if t ~= 'table' then fail(op, 'cannot save a %s at %s', t, path_text(trail, depth)) end
    local mt = getmetatable(v)
    if mt == size_mt then                       -- Torch7's sizes are LongStorages
      local sizes = {}
      for i = 1, #v do sizes[i] = v[i] end
      f:writeInt(TYPE_TORCH)
      if reference(v) then return end
      write_header(f, 'torch.LongStorage')
      f:writeLong(#sizes)
      if #sizes > 0 then f:writeLong(sizes) end
      return
    end
    if mt ~= nil and not mt.__ordered_keys then     -- (a torch.OrderedDict: a plain table in Torch7's files)
      f:writeInt(TYPE_TORCH)
      if reference(v) then return end
      local class, fields = object_fields(op, v, mt, trail, depth)
      write_header(f, class)
      trail[depth] = class
      value(fields, depth + 1)
      return
    end
    f:writeInt(TYPE_TABLE)
    if reference(v) then return end
    local keys = {}
    if mt ~= nil then keys = mt.__ordered_keys(v)
    else for k in next, v do keys[#keys + 1] = k end end
    f:writeInt(#keys)
    for _, k in ipairs(keys) do
      trail[depth] = '[key]'
      value(k, depth + 1)
      trail[depth] = k
      value(rawget(v, k), depth + 1)
    end
  end
  return function(v) value(v, 1) end
end

-- f:writeObject(obj): obj in Torch7's format
function File:writeObject(obj)
  writer(self, 'writeObject')(obj)
end

-- ---- reading ----

-- reader(f, op, source): a function reading one value from f as Torch7's readObject
local function reader(f, op, source)
  local st = state(f)
  local remaining_at_start = f:_remaining()
  local start = f:position()
  local known_end = remaining_at_start and start + remaining_at_start

  local function offset() return f:position() - 1 end
  local function bad(fmt, ...)
    fail(op, '%s is corrupt or truncated (%s, at byte %d)', source, string.format(fmt, ...), offset())
  end
  local function left() return known_end and known_end - f:position() end

  -- one scalar of type name, or an error naming what it is
  local function scalar(name, what)
    local at = offset()
    local v = f['read' .. name](f)
    if v == nil then fail(op, '%s is corrupt or truncated (%s missing at byte %d)', source, what, at) end
    return v
  end
  local function count(what, per)
    local at = offset()
    local n = scalar('Int', what)
    local room = left()
    if n < 0 or (room and n > room // per) then
      fail(op, '%s is corrupt or truncated (%s %d at byte %d, with %s bytes left)', source, what, n, at,
           room and tostring(room) or 'fewer')
    end
    return n
  end
  local function chars(n, what)
    local s = File._read_chars(f, n)
    if #s < n then bad('%s of %d bytes', what, n) end
    return s
  end
  local function string_value(what) return chars(count(what .. ' length', 1), what) end
  -- n values of type stem as a 1-D tensor
  local function values(stem, n, what)
    local t = File._read_tensor(f, op, stem, n)
    if t:numel() < n then bad('%s: %d of %d values', what, t:numel(), n) end
    return t
  end

  local value

  local function read_storage(stem, index)
    local at = offset()
    local n = scalar('Long', 'a storage size')
    local size = File._TYPES[stem].size
    local room = left()
    local per = f:isBinary() and size or 1
    if n < 0 or (room and n > room // per) then
      fail(op, '%s is corrupt or truncated (a %s storage of %d values at byte %d, with %s bytes left)', source,
           stem, n, at, room and tostring(room) or 'fewer')
    end
    local t = values(stem, n, 'storage data')
    local s = t:storage()
    st.backing[s] = t
    st.read[index] = s
    return s
  end

  local function read_tensor(stem, index)
    local dtype = STEM_DTYPE[stem]
    local at = offset()
    local ndim = scalar('Int', 'a dim count')
    if ndim < 0 or ndim > MAX_DIMS then
      fail(op, '%s is corrupt (a tensor of %d dims at byte %d; at most %d)', source, ndim, at, MAX_DIMS)
    end
    local sizes = ndim > 0 and values('Long', ndim, 'tensor sizes'):_flat_values() or {}
    local strides = ndim > 0 and values('Long', ndim, 'tensor strides'):_flat_values() or {}
    local first = scalar('Long', 'a storage offset')
    local s = value(1)
    local backing = s ~= nil and st.backing[s]
    if s ~= nil and not backing then bad('a tensor whose storage is a %s', torch.type(s)) end
    local x
    if ndim == 0 or not backing then
      x = torch.empty(0, {dtype = dtype})
    else
      if backing.dtype ~= dtype then bad('a %s tensor on a %s storage', dtype, backing.dtype) end
      for d = 1, ndim do
        if sizes[d] < 0 or strides[d] < 0 then bad('a tensor of size %d and stride %d in dim %d', sizes[d], strides[d], d) end
      end
      if first < 1 then bad('a tensor at storage offset %d', first) end
      local ok, view = pcall(backing.as_strided, backing, sizes, strides, first)
      if not ok then bad('%s', tostring(view):gsub('^.-as_strided: ', 'as_strided: ')) end
      x = view
    end
    st.read[index] = x
    return x
  end

  -- the class a torch object of the file names (a metatable, or 'nn' for an
  -- nn module mapped by nn.torch7), checked before its fields are read
  local function class_of(class, at)
    local pkg = class:match('^([^.]+)%.')
    if pkg == 'nn' then
      require 'nn'
      if not require('nn.torch7').can_map(class) then
        fail(op, "%s holds a Torch7 %s (at byte %d), which moontorch has no counterpart of", source, class, at)
      end
      return 'nn'
    end
    local mt = torch.getmetatable(class)
    if not mt and pkg and torch.load_packages and torch.load_packages[pkg] then
      require(pkg)
      mt = torch.getmetatable(class)
    end
    if not mt then
      fail(op, "%s holds an object of class '%s' (at byte %d), which is not defined (define or require it before "
           .. 'loading)', source, class, at)
    end
    if rawget(mt, '__gc') ~= nil then
      fail(op, "%s holds an object of class '%s' (at byte %d), which has a finalizer (__gc) and so is never loaded",
           source, class, at)
    end
    return mt
  end

  -- a torch.class object (not a tensor or storage): its fields, then its class
  local function read_object(class, index, depth, at)
    if class == 'torch.Generator' then            -- as moontorch writes one: its state
      local fields = value(depth + 1)
      local state = type(fields) == 'table' and fields.state
      if not (torch.is_tensor(state) and state.dtype == 'uint8') then
        fail(op, "%s holds a torch.Generator (at byte %d) that is not moontorch's (Torch7's generators cannot be read)",
             source, at)
      end
      local g = torch.Generator()
      local ok = pcall(g.set_state, g, state)
      if not ok then fail(op, '%s holds a torch.Generator (at byte %d) whose state does not fit', source, at) end
      st.read[index] = g
      return g
    end
    local mt = class_of(class, at)
    local obj = {}
    st.read[index] = obj
    local fields = value(depth + 1)
    if type(fields) ~= 'table' or getmetatable(fields) ~= nil then
      bad('the fields of a %s are a %s', class, torch.type(fields))
    end
    for k, v in next, fields do obj[k] = v end
    if mt ~= 'nn' then return setmetatable(obj, mt) end
    local m, why = require('nn.torch7').from_torch7(class, obj)
    if not m then fail(op, '%s holds a Torch7 %s (at byte %d), which cannot be loaded: %s', source, class, at, why) end
    st.read[index] = m
    return m
  end

  function value(depth)
    local at = offset()
    local tag = scalar('Int', 'a type tag')
    if tag == TYPE_NIL then return nil end
    if tag == TYPE_NUMBER then
      local v = scalar('Double', 'a number')
      local i = math.tointeger(v)
      if i and (i ~= 0 or 1 / v > 0) then return i end
      return v
    end
    if tag == TYPE_BOOLEAN then return scalar('Int', 'a boolean') == 1 end
    if tag == TYPE_STRING then return string_value('a string') end
    if tag == TYPE_FUNCTION or tag == TYPE_RECUR_FUNCTION or tag == LEGACY_TYPE_RECUR_FUNCTION then
      fail(op, '%s holds a Lua function (type %d at byte %d): moontorch never loads code from a file', source, tag, at)
    end
    if tag ~= TYPE_TABLE and tag ~= TYPE_TORCH then
      fail(op, '%s is corrupt (unknown type %d at byte %d)', source, tag, at)
    end
    local index = scalar('Int', 'a reference index')
    if not f._forced and st.read[index] ~= nil then return st.read[index] end
    if depth > MAX_DEPTH then bad('tables nest deeper than %d levels', MAX_DEPTH) end
    if tag == TYPE_TABLE then
      local n = count('a table size', 2)
      local t = {}
      st.read[index] = t
      for _ = 1, n do
        local kat = offset()
        local k = value(depth + 1)
        local v = value(depth + 1)
        if k == nil or k ~= k then fail(op, '%s is corrupt (a nil or NaN key at byte %d)', source, kat) end
        rawset(t, k, v)
      end
      return t
    end
    local version = string_value('a class name')
    local class = version
    if version:find('^V ') then
      if not tonumber(version:sub(3)) then bad('version %q', version) end
      class = string_value('a class name')
    end
    local stem, kind = torch_kind(class)
    if kind == 'tensor' then return read_tensor(stem, index) end
    if kind == 'storage' then return read_storage(stem, index) end
    return read_object(class, index, depth, at)
  end
  return function() return value(1) end
end

-- f:readObject(): the next value in Torch7's format
function File:readObject()
  local quiet = self._quiet
  self._quiet = true                          -- short reads are reported by the reader, with the byte
  local ok, v = pcall(reader(self, 'readObject', self._name or 'the file'))
  self._quiet = quiet
  if not ok then error(v, 0) end
  return v
end

-- ---- torch.save / load / serialize / deserialize ----

local M = {}

local function check_mode(op, mode, level)
  if mode ~= 'binary' and mode ~= 'ascii' then
    error(string.format("%s: the format must be 'binary' or 'ascii' (Torch7's), got %s", op, tostring(mode)), level + 1)
  end
end

-- M.serialize(obj, mode, op): the bytes of obj in Torch7's format
function M.serialize(obj, mode, op)
  local f = torch.MemoryFile('w')
  f[mode](f)
  writer(f, op)(obj)
  return f:string()
end

-- the Torch7 mode the bytes s begin with: 'binary', 'ascii', or nil
function M.detect(s)
  local b1, b2, b3, b4 = s:byte(1, 4)
  if b4 and b2 == 0 and b3 == 0 and b4 == 0 and b1 <= TYPE_RECUR_FUNCTION then return 'binary', '<' end
  if b4 and b1 == 0 and b2 == 0 and b3 == 0 and b4 <= TYPE_RECUR_FUNCTION then return 'binary', '>' end
  if s:find('^%s*%d') then return 'ascii' end
  return nil
end

-- reads one value from f (a File positioned at its start) for op
local function load_from(f, mode, order, op, source)
  f[mode](f)
  if order == '>' then f:bigEndianEncoding() elseif order == '<' then f:littleEndianEncoding() end
  f:quiet()
  local v = reader(f, op, source)()
  if f:_remaining() and f:_remaining() > 0 and mode == 'binary' then
    fail(op, '%s is corrupt (%d bytes after its value, at byte %d)', source, f:_remaining(), f:position() - 1)
  end
  return v
end

-- M.deserialize(s, mode, op, source): the value of Torch7 bytes s
function M.deserialize(s, mode, op, source)
  local detected, order = M.detect(s)
  mode = mode or detected
  if not mode then fail(op, '%s is neither a moontorch nor a Torch7 file (unknown first bytes)', source) end
  local f = torch.MemoryFile(s, 'r')
  return load_from(f, mode, order, op, source)
end

-- M.load(path, mode, head, op): the value of the Torch7 file path (head: its first bytes)
function M.load(path, mode, head, op)
  local detected, order = M.detect(head)
  mode = mode or detected
  if not mode then fail(op, '%s is neither a moontorch nor a Torch7 file (unknown first bytes)', path) end
  local f = torch.DiskFile(path, 'r')
  local ok, v = pcall(load_from, f, mode, order, op, path)
  f:close()
  if not ok then error(v, 0) end
  return v
end

-- ---- the public functions: moontorch's format unless Torch7's is asked for ----

local moontorch = torch._own_format    -- moontorch's own save, load, serialize and deserialize
local MAGIC = 'MOONTORCH'

-- true when the process runs Torch7's dialect (th --torch7)
local function torch7_dialect()
  return torch.dialect ~= nil and torch.dialect() == 'torch7'
end

-- torch.save(path, obj [, 'binary' | 'ascii' [, referenced]]): with a format,
-- or in the Torch7 dialect, Torch7's format (binary by default); else
-- moontorch's. Written atomically either way.
function torch.save(...)
  local path, obj, mode, referenced = ...
  if mode == nil and not torch7_dialect() then return moontorch.save(...) end
  mode = mode or 'binary'
  if type(path) ~= 'string' then error('torch.save: the first argument is the file name (Torch7 order)', 2) end
  check_mode('torch.save', mode, 2)
  if referenced ~= nil and type(referenced) ~= 'boolean' then
    error('torch.save: referenced must be true, false or nil, got ' .. type(referenced), 2)
  end
  local f = torch.MemoryFile('w')
  f[mode](f)
  f:referenced(referenced ~= false)
  writer(f, 'torch.save')(obj)
  local bytes = f:string()
  local ok, err = pcall(torch._write_atomic, path, 'torch.save', function(write) write(bytes) end)
  if not ok then error(err, 2) end
end

-- torch.serialize(obj [, 'binary' | 'ascii']): the bytes torch.save writes
function torch.serialize(obj, mode)
  if mode == nil and not torch7_dialect() then return moontorch.serialize(obj) end
  check_mode('torch.serialize', mode or 'binary', 2)
  return M.serialize(obj, mode or 'binary', 'torch.serialize')
end

-- torch.deserialize(s [, 'binary' | 'ascii']): the value of either format's
-- bytes, told apart by their first bytes (moontorch's arguments: s, source, map_location)
function torch.deserialize(s, mode, ...)
  if type(s) == 'string' and s:sub(1, #MAGIC) == MAGIC then return moontorch.deserialize(s, mode, ...) end
  if type(s) ~= 'string' then error('torch.deserialize: expected a string, got ' .. type(s), 2) end
  if mode == nil and not M.detect(s) then return moontorch.deserialize(s, mode, ...) end
  if mode ~= nil then check_mode('torch.deserialize', mode, 2) end
  return M.deserialize(s, mode, 'torch.deserialize', 'the string')
end

-- torch.load(path [, options | 'binary' | 'ascii']): moontorch's or Torch7's
-- file, told apart by the first bytes; Torch7's tensors load on the CPU
function torch.load(path, opts, ...)
  local mode = (opts == 'binary' or opts == 'ascii' or opts == 'b64') and opts or nil
  torch._check_file_name(path, 'torch.load', 2)
  local h = io.open(path, 'rb')
  if not h then return moontorch.load(path, opts, ...) end
  local head = h:read(16) or ''
  h:close()
  if not mode and (head:sub(1, #MAGIC) == MAGIC or not M.detect(head)) then return moontorch.load(path, opts, ...) end
  if opts ~= nil and not mode then
    local where = type(opts) == 'table' and opts.map_location or opts
    if where ~= 'cpu' then
      error("torch.load: " .. path .. " is a Torch7 file, whose tensors load on the CPU (options: "
            .. "'binary', 'ascii' or {map_location = 'cpu'})", 2)
    end
  end
  if mode == 'b64' then mode = 'binary' end
  return M.load(path, mode, head, 'torch.load')
end

-- the stubs torch held until this file loaded (lib/torch/init.lua) are
-- documented by these functions
for name, stub in pairs(torch._format_stubs) do torch._help_alias(stub, torch[name]) end

return M
