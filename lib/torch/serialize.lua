-- torch.save(path, obj) / torch.load(path) (Torch7's argument order), and
-- torch.serialize(obj) / torch.deserialize(s): Lua values made of tables
-- (nested, shared references and cycles kept), strings, numbers (integers
-- and floats apart), booleans, torch.Size and tensors of every dtype; tables
-- of torch.class classes (nn modules, optimizers) come back with their class.
-- docs/serialize.md describes the format and its guarantees.
--
-- Format: "MOONTORCH" and a version byte, then one value. A value is a tag
-- byte: 'n' nil, 't'/'f' booleans, 'i' integer (8 bytes), 'd' float (8),
-- 's' string (length, bytes), 'T' tensor (dtype name, flags: 1 requires
-- grad, 2 nn.Parameter, 4 saved from a GPU, whose ordinal follows in one
-- byte; dims, sizes, byte count, bytes -- views are saved
-- compacted: their values, not the storage), 'S' torch.Size, 'R' reference
-- to an earlier table, tensor or storage (its id), 'M' table (class name or
-- '', pair count, key/value pairs), 'P' storage (dtype name, byte count,
-- bytes), 'G' random generator (its state, as a 'T' uint8 tensor); files
-- without the last two read in older builds; then the CRC-32 of everything before it (4
-- bytes). Version 2 (read, not written) had no tensor flags. Every length is
-- checked against what is left before anything is allocated, and nesting is
-- bounded, so a bad file gives a 'torch.load:' error, never a crash.
-- Writes are atomic: a temporary file in the target's folder, flushed,
-- fsynced and renamed over the target (torch._write_atomic).
local torch = require 'torch.core'

local MAGIC = 'MOONTORCH\3'
local OLDEST_VERSION = 2
-- Tables nested deeper than this are refused on save and on load: the
-- reader recurses, and a hostile file could otherwise exhaust the stack.
local MAX_DEPTH = 10000
local REQUIRES_GRAD, PARAMETER, ON_GPU = 1, 2, 4
local size_mt = debug.getregistry()['torch.Size']
local generator_mt = debug.getregistry()['torch.Generator']

-- Packages torch.load may require to find a class a file names (an 'nn.Linear'
-- needs nn); any other class must be defined before loading. Code runs on
-- require, so this list stays short: add your own package when you trust its files.
torch.load_packages = {nn = true, optim = true, data = true, nngraph = true, graph = true}

-- Metatables that are not torch.class classes but may be saved (a library's
-- helper tables), by the name the file records: torch.register_metatable.
local named_mts, mt_names = {}, {}
function torch.register_metatable(name, mt)
  if type(name) ~= 'string' or type(mt) ~= 'table' then
    error('torch.register_metatable(name, mt): expects a string and a table', 2)
  end
  named_mts[name], mt_names[mt] = mt, name
end

local function find_class(name)
  return torch.getmetatable and torch.getmetatable(name) or named_mts[name]
end

-- "obj.a.b[key].c" from the keys followed so far; long paths keep their ends
local KEY = {}
local function path_text(trail, depth)
  local parts = {'obj'}
  for i = 1, depth - 1 do
    if depth > 16 and i == 6 then parts[#parts + 1] = '...' end
    if depth <= 16 or i < 6 or i > depth - 9 then
      local k = trail[i]
      parts[#parts + 1] = k == KEY and '[key]' or '.' .. tostring(k)
    end
  end
  return table.concat(parts)
end

local function writer()
  local parts, ids, next_id = {}, {}, 0
  -- for error messages only: the key followed at each depth and the table it came from
  local trail, owners = {}, {}
  local function put(s) parts[#parts + 1] = s end
  local function fail(what, depth)
    local msg = string.format('torch.save: %s at %s', what, path_text(trail, depth))
    for d = depth - 1, 1, -1 do                   -- inside an object that has a state_dict: say so
      local mt = getmetatable(owners[d])
      if type(mt) == 'table' and mt.__typename and owners[d].state_dict then
        msg = string.format('%s (%s, an object of class %s, cannot be saved whole: save its state_dict() instead)',
                            msg, path_text(trail, d), mt.__typename)
        break
      end
    end
    error(msg, 0)
  end
  local function value(v, depth)
    local t = type(v)
    if v == nil then put('n')
    elseif t == 'boolean' then put(v and 't' or 'f')
    elseif t == 'number' then
      if math.type(v) == 'integer' then put('i' .. string.pack('<i8', v)) else put('d' .. string.pack('<d', v)) end
    elseif t == 'string' then put('s' .. string.pack('<s4', v))
    elseif getmetatable(v) == generator_mt then
      put('G')
      value(v:get_state(), depth + 1)
    elseif torch.is_tensor(v) or t == 'table' or torch.isStorage(v) then
      if ids[v] then put('R' .. string.pack('<i4', ids[v])) return end
      if depth > MAX_DEPTH then fail(string.format('tables nest deeper than %d levels', MAX_DEPTH), depth) end
      next_id = next_id + 1
      ids[v] = next_id
      if torch.isStorage(v) then
        put('P' .. string.pack('<s1', v:_dtype()))
        put(string.pack('<s8', torch._tensor_bytes(v:_tensor())))
        return
      end
      if torch.is_tensor(v) then
        local nn = package.loaded.nn
        local flags = v.requires_grad and REQUIRES_GRAD or 0
        if type(nn) == 'table' and nn.is_parameter and nn.is_parameter(v) then flags = flags | PARAMETER end
        local gpu = v.is_cuda and v:get_device()
        if gpu then flags = flags | ON_GPU end
        local sz = v:size()
        put('T' .. string.pack('<s1B', v.dtype, flags))
        if gpu then put(string.pack('<B', gpu)) end
        put(string.pack('<B', #sz))
        for i = 1, #sz do put(string.pack('<i8', sz[i])) end
        put(string.pack('<s8', torch._tensor_bytes(gpu and v:detach():cpu() or v)))   -- a GPU's values, copied
        return
      end
      local mt = getmetatable(v)
      if mt == size_mt then
        put('S' .. string.pack('<B', #v))
        for i = 1, #v do put(string.pack('<i8', v[i])) end
        return
      end
      local class = type(mt) == 'table' and (rawget(mt, '__typename') or mt_names[mt]) or ''
      if mt ~= nil and (class == '' or find_class(class) ~= mt) then
        fail('cannot save a table with a metatable that is not a registered class', depth)
      end
      local keys = {}
      if mt ~= nil and mt.__ordered_keys then keys = mt.__ordered_keys(v)      -- (torch.OrderedDict)
      else for k in next, v do keys[#keys + 1] = k end end
      put('M' .. string.pack('<s2i4', class, #keys))
      owners[depth] = v
      for _, k in ipairs(keys) do
        trail[depth] = KEY
        value(k, depth + 1)
        trail[depth] = k
        value(rawget(v, k), depth + 1)
      end
    else
      fail('cannot save a ' .. t, depth)
    end
  end
  return function(obj)
    value(obj, 1)
    local body = MAGIC .. table.concat(parts)
    return body .. string.pack('<I4', torch._crc32(body))
  end
end

-- torch.serialize(obj): the bytes torch.save writes, as a string.
function torch.serialize(obj)
  return writer()(obj)
end

-- the metatable of a class a file names: one already defined, or one that a
-- package of torch.load_packages defines
local function class_named(name, source)
  local mt = find_class(name)
  local pkg = name:match('^([^.]+)%.')
  if not mt and pkg and torch.load_packages[pkg] then
    require(pkg)
    mt = find_class(name)
  end
  if not mt then
    local allowed = {}
    for p in pairs(torch.load_packages) do allowed[#allowed + 1] = p end
    table.sort(allowed)
    error(string.format("torch.load: %s holds an object of class '%s', which is not defined (require the package "
                        .. "that defines it before loading; torch.load itself requires only %s)", source, name,
                        table.concat(allowed, ', ')), 0)
  end
  -- a finalizer would run, at the next collection, on whatever values the file gave the table
  if rawget(mt, '__gc') ~= nil then
    error(string.format("torch.load: %s holds an object of class '%s', which has a finalizer (__gc) and so is "
                        .. 'never loaded', source, name), 0)
  end
  return mt
end

-- torch.deserialize(s, source, map_location): the value a torch.serialize string holds.
-- Tensors saved from a GPU come back on it, unless map_location ('cpu', 'cuda',
-- 'cuda:N') names where every tensor goes.
function torch.deserialize(s, source, map_location)
  source = source or 'string'
  if type(s) ~= 'string' or #s < #MAGIC or s:sub(1, #MAGIC - 1) ~= MAGIC:sub(1, -2) then
    error('torch.load: ' .. source .. ' is not a moontorch file (wrong magic)', 2)
  end
  local version = s:byte(#MAGIC)
  if version < OLDEST_VERSION or version > MAGIC:byte(-1) then
    error(string.format('torch.load: %s is format version %d; this moontorch reads versions %d to %d', source,
                        version, OLDEST_VERSION, MAGIC:byte(-1)), 2)
  end
  if #s < #MAGIC + 4 then error('torch.load: ' .. source .. ' is truncated', 2) end
  local stored = string.unpack('<I4', s, #s - 3)
  s = s:sub(1, #s - 4)
  if torch._crc32(s) ~= stored then
    error('torch.load: ' .. source .. ' is corrupt or truncated (checksum mismatch)', 2)
  end
  local pos, refs = #MAGIC + 1, {}
  local function corrupt(fmt, ...)
    error('torch.load: ' .. source .. ' is corrupt (' .. string.format(fmt, ...) .. ')', 0)
  end
  local function need(n, what)
    if n < 0 or n > #s - pos + 1 then
      error(string.format('torch.load: %s is truncated or corrupt (%s needs %d bytes at offset %d, %d left)',
                          source, what, n, pos - 1, #s - pos + 1), 0)
    end
  end
  local function unpack(fmt, size, what)
    need(size, what)
    local a, b = string.unpack(fmt, s, pos)
    return a, b
  end
  local function tensor()
    local dlen = unpack('<B', 1, 'a dtype')
    need(1 + dlen + 1, 'a dtype')
    local dtype, flags
    dtype, pos = string.unpack('<s1', s, pos)
    if version >= 3 then flags, pos = unpack('<B', 1, 'tensor flags') else flags = 0 end
    if flags > (REQUIRES_GRAD | PARAMETER | ON_GPU) then corrupt('tensor flags %d', flags) end
    local device = map_location
    if flags & ON_GPU ~= 0 then
      local gpu
      gpu, pos = unpack('<B', 1, 'a GPU ordinal')
      if device == nil then
        device = 'cuda:' .. gpu
        if not torch.cuda.is_available() then
          error(string.format("torch.load: %s holds tensors saved from %s, and there is no CUDA device here (%s): "
                              .. "load them with {map_location = 'cpu'}", source, device,
                              torch.cuda.unavailable_reason()), 0)
        end
      end
    end
    local ndim
    ndim, pos = unpack('<B', 1, 'a dim count')
    local shape = {}
    for i = 1, ndim do
      shape[i], pos = unpack('<i8', 8, 'a tensor size')
      if shape[i] < 0 then corrupt('a negative tensor size %d', shape[i]) end
    end
    local nbytes
    nbytes, pos = unpack('<i8', 8, 'a byte count')
    if nbytes < 0 then corrupt('a negative byte count %d', nbytes) end
    need(nbytes, 'tensor data')
    local t = torch._tensor_from_bytes(s:sub(pos, pos + nbytes - 1), dtype, shape, 'torch.load: ' .. source)
    pos = pos + nbytes
    if device ~= nil and device ~= 'cpu' then t = t:to(device) end
    if flags & PARAMETER ~= 0 then
      class_named('nn.Module', source)            -- loads nn
      t = package.loaded.nn.Parameter(t, flags & REQUIRES_GRAD ~= 0)
    elseif flags & REQUIRES_GRAD ~= 0 then
      t:requires_grad_(true)
    end
    return t
  end
  local function value(depth)
    need(1, 'a tag')
    local tag = s:sub(pos, pos)
    pos = pos + 1
    if tag == 'n' then return nil
    elseif tag == 't' then return true
    elseif tag == 'f' then return false
    elseif tag == 'i' then local v; v, pos = unpack('<i8', 8, 'an integer'); return v
    elseif tag == 'd' then local v; v, pos = unpack('<d', 8, 'a number'); return v
    elseif tag == 's' then
      local len = unpack('<I4', 4, 'a string length')
      need(4 + len, 'a string')
      local v; v, pos = string.unpack('<s4', s, pos)
      return v
    elseif tag == 'R' then
      local id; id, pos = unpack('<i4', 4, 'a reference')
      if refs[id] == nil then corrupt('a reference to an unknown object %d', id) end
      return refs[id]
    end
    if depth > MAX_DEPTH then corrupt('tables nest deeper than %d levels', MAX_DEPTH) end
    if tag == 'G' then
      local state = value(depth + 1)
      if not (torch.is_tensor(state) and state.dtype == 'uint8') then corrupt('a generator without its state') end
      local g = torch.Generator()
      local ok, err = pcall(g.set_state, g, state)
      if not ok then corrupt('a generator state that does not fit (%s)', tostring(err):gsub('^[^\n]-:%d+: ', '', 1)) end
      return g
    elseif tag == 'P' then
      local dlen = unpack('<B', 1, 'a dtype')
      need(1 + dlen, 'a dtype')
      local dtype
      dtype, pos = string.unpack('<s1', s, pos)
      local nbytes
      nbytes, pos = unpack('<i8', 8, 'a byte count')
      if nbytes < 0 then corrupt('a negative byte count %d', nbytes) end
      need(nbytes, 'storage data')
      local known, esize = pcall(function() return torch.empty(0, {dtype = dtype}):element_size() end)
      if not known then corrupt('a storage of unknown dtype %q', dtype) end
      if nbytes % esize ~= 0 then corrupt('a %s storage of %d bytes', dtype, nbytes) end
      local ok, t = pcall(torch._tensor_from_bytes, s:sub(pos, pos + nbytes - 1), dtype, {nbytes // esize},
                          'torch.load: ' .. source)
      if not ok then corrupt('a storage that does not fit (%s)', tostring(t):gsub('^[^\n]-:%d+: ', '', 1)) end
      pos = pos + nbytes
      local st = t:storage()
      refs[#refs + 1] = st
      return st
    elseif tag == 'S' then
      local n; n, pos = unpack('<B', 1, 'a size')
      local out = {}
      for i = 1, n do out[i], pos = unpack('<i8', 8, 'a size') end
      refs[#refs + 1] = out                       -- numbered like tables and tensors
      return setmetatable(out, size_mt)
    elseif tag == 'T' then
      local ok, t = pcall(tensor)
      if not ok then
        t = tostring(t):gsub('^[^\n]-:%d+: ', '', 1)     -- the position a C error carries
        error(t:find('^torch%.load: ') and t or 'torch.load: ' .. source .. ': ' .. t, 0)
      end
      refs[#refs + 1] = t
      return t
    elseif tag == 'M' then
      local clen = unpack('<I2', 2, 'a class name')
      need(2 + clen + 4, 'a table header')
      local class, count
      class, count, pos = string.unpack('<s2i4', s, pos)
      if count < 0 or count > (#s - pos + 1) // 2 then corrupt('a table of %d entries', count) end
      local t, keys = {}, {}
      refs[#refs + 1] = t
      for i = 1, count do
        local k = value(depth + 1)
        local v = value(depth + 1)
        if k == nil then corrupt('a nil key') end
        if k ~= k then corrupt('a NaN key') end
        rawset(t, k, v)
        keys[i] = k
      end
      if class ~= '' then
        local mt = class_named(class, source)
        if mt.__restore_order then mt.__restore_order(t, keys)     -- (torch.OrderedDict: the file's order)
        else setmetatable(t, mt) end
      end
      return t
    end
    corrupt('unknown tag %q at offset %d', tag, pos - 2)
  end
  local v = value(1)
  if pos ~= #s + 1 then corrupt('%d bytes after its value', #s - pos + 1) end
  return v
end

-- The reason alone in an io or os error message ("name: reason").
local function reason(message, name)
  local prefix = name .. ': '
  return message:sub(1, #prefix) == prefix and message:sub(#prefix + 1) or message
end

-- write(...) for a fill function: strings and tensors, in order, to f; a
-- failure raises its reason alone.
local function writer(f)
  return function(...)
    for i = 1, select('#', ...) do
      local v = select(i, ...)
      local ok, err
      if type(v) == 'string' then ok, err = f:write(v) else ok, err = torch._write_tensor(f, v) end
      if not ok then error(err, 0) end
    end
  end
end

-- Creates or truncates name and runs fill(write, name) on it: true, or nil
-- and the reason.
local function write_file(name, fill)
  local f, err = io.open(name, 'wb')
  if not f then return nil, reason(err, name) end
  local ok, ferr = pcall(fill, writer(f), name)
  if ok then ok, ferr = f:flush() end
  local closed, cerr = f:close()
  if ok and not closed then ok, ferr = nil, cerr end
  return ok, ferr
end

-- torch._write_atomic(path, op, fill): fill(write, name) writes the file,
-- with write(...) taking strings and tensors, or by name (an outside
-- program). path's symlinks are followed first, so that a link (latest ->
-- ckpt_3.t7) keeps naming the file it names, which gets the new contents.
-- A file goes to a temporary file in its folder, which is flushed, fsynced
-- and renamed over it: on any failure the temporary file goes and the old
-- file is untouched. A character device (/dev/null) is written in place; a
-- directory, FIFO, socket or block device is refused. Errors raise at
-- level 0 as "op: cannot write path: reason". The temporary name comes from
-- the pid, the time and a counter (not math.random: saving must not move the
-- user's random stream).
local temp_count = 0

-- Raises (at level) unless path is a file name C can open as given: a NUL
-- byte would cut it short and open another file.
function torch._check_file_name(path, op, level)
  op = type(op) == 'string' and op or 'torch._check_file_name'
  level = math.type(level) == 'integer' and level >= 0 and level or 1
  if type(path) ~= 'string' then error(op .. ': expected a file name, got ' .. type(path), level + 1) end
  if path:find('\0', 1, true) then
    error(string.format('%s: the file name %q holds a NUL byte', op, path), level > 0 and level + 1 or 0)
  end
end

function torch._write_atomic(path, op, fill)
  if type(path) ~= 'string' or type(op) ~= 'string' or type(fill) ~= 'function' then
    error('torch._write_atomic(path, op, fill): expects two strings and a function', 2)
  end
  torch._check_file_name(path, op, 0)
  local function fail(why) error(op .. ': cannot write ' .. path .. ': ' .. tostring(why), 0) end
  local target, kind = torch._resolve_links(path)
  if not target then fail(kind) end
  if kind == 'character device' then
    local ok, err = write_file(target, fill)
    if not ok then fail(err) end
    return
  end
  if kind ~= 'file' and kind ~= 'none' then fail('it is a ' .. kind .. ', not a regular file') end
  temp_count = temp_count + 1
  local tmp = string.format('%s.tmp.%d.%d.%d', target, torch._getpid(), os.time(), temp_count)
  local ok, err = write_file(tmp, fill)
  if ok then ok, err = torch._fsync(tmp) end
  if ok then
    ok, err = os.rename(tmp, target)
    if not ok then err = reason(err, tmp) end
  end
  if not ok then
    os.remove(tmp)
    fail(err)
  end
  -- the rename made durable; a file system that cannot flush a folder has still renamed
  torch._fsync(target:match('^(.*)/[^/]*$') or '.')
end

-- torch.save(path, obj): writes obj to path atomically (a crash leaves the old file).
-- A symlink is followed and the file it names replaced; /dev/null is written in
-- place; a directory, FIFO or a name with a NUL byte raises.
function torch.save(...)
  local path, obj = ...
  if type(path) ~= 'string' then error('torch.save: the first argument is the file name (Torch7 order)', 2) end
  if select('#', ...) < 2 then error('torch.save(path, obj): nothing to save', 2) end
  local ok, err = pcall(function()
    local bytes = torch.serialize(obj)
    torch._write_atomic(path, 'torch.save', function(write) write(bytes) end)
  end)
  if not ok then error(err, 2) end
end

-- the options of torch.load: {map_location = 'cpu'}, or 'cpu' alone
local function check_load_options(opts)
  if type(opts) == 'string' then opts = {map_location = opts} end
  if opts == nil then return end
  if type(opts) ~= 'table' then
    error("torch.load: options must be a table such as {map_location = 'cpu'}, got a " .. type(opts), 3)
  end
  for k, v in pairs(opts) do
    if k == 'map_location' then
      if type(v) ~= 'string' then
        error("torch.load: map_location must be a device name such as 'cpu', got a " .. type(v), 3)
      elseif v ~= 'cpu' and v ~= 'cuda' and not v:match('^cuda:%d+$') then
        error("torch.load: unknown map_location '" .. v .. "' (expected 'cpu', 'cuda' or 'cuda:N')", 3)
      elseif v ~= 'cpu' and not torch.cuda.is_available() then
        error("torch.load: map_location '" .. v .. "' is not available: no CUDA device ("
              .. torch.cuda.unavailable_reason() .. ')', 3)
      end
    elseif k == 'mmap' then
      error('torch.load: mmap is not supported for moontorch files (their data is checksummed as one '
            .. 'stream); torch.load_safetensors(path, {mmap = true}) maps a safetensors file', 3)
    else
      error(string.format("torch.load: unknown option '%s' (options: map_location)", tostring(k)), 3)
    end
  end
end

-- torch.load(path, {map_location='cpu'|'cuda'|'cuda:N'}): the value torch.save wrote to
-- path. Tensors saved from a GPU load on it, unless map_location names where every tensor goes.
function torch.load(path, opts)
  torch._check_file_name(path, 'torch.load', 2)
  check_load_options(opts)
  local f, err = io.open(path, 'rb')
  if not f then error('torch.load: cannot open ' .. path .. ': ' .. tostring(err), 2) end
  local bytes = f:read('a')
  f:close()
  if type(opts) == 'string' then opts = {map_location = opts} end
  local ok, v = pcall(torch.deserialize, bytes, path, opts and opts.map_location)
  if not ok then error(v, 2) end
  return v
end

return torch
