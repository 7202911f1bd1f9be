-- torch.save(path, obj) / torch.load(path) (Torch7's argument order), and
-- torch.serialize(obj) / torch.deserialize(s): Lua values made of tables
-- (nested, shared references and cycles kept), strings, numbers (integers
-- and floats apart), booleans, torch.Size and tensors of every dtype; tables
-- of torch.class classes (nn modules) come back with their class.
--
-- Format: "MOONTORCH" and a version byte, then one value. A value is a tag
-- byte: 'n' nil, 't'/'f' booleans, 'i' integer (8 bytes), 'd' float (8),
-- 's' string (length, bytes), 'T' tensor (dtype name, dims, sizes, byte
-- count, bytes -- views are saved compacted: their values, not the storage),
-- 'S' torch.Size, 'R' reference to an earlier table or tensor (its id),
-- 'M' table (id, class name or '', pair count, key/value pairs); then the
-- CRC-32 of everything before it (4 bytes). Every length is checked against
-- what is left before anything is allocated.
-- Writes are atomic: a temporary file in the same folder, flushed, fsynced
-- and renamed over the target.
local torch = require 'torch.core'

local MAGIC = 'MOONTORCH\2'
local size_mt = debug.getregistry()['torch.Size']

local function writer()
  local parts, ids, next_id = {}, {}, 0
  local function put(s) parts[#parts + 1] = s end
  local function value(v, where)
    local t = type(v)
    if v == nil then put('n')
    elseif t == 'boolean' then put(v and 't' or 'f')
    elseif t == 'number' then
      if math.type(v) == 'integer' then put('i' .. string.pack('<i8', v)) else put('d' .. string.pack('<d', v)) end
    elseif t == 'string' then put('s' .. string.pack('<s4', v))
    elseif torch.is_tensor(v) or t == 'table' then
      if ids[v] then put('R' .. string.pack('<i4', ids[v])) return end
      next_id = next_id + 1
      ids[v] = next_id
      if torch.is_tensor(v) then
        local sz = v:size()
        put('T' .. string.pack('<s1B', v.dtype, #sz))
        for i = 1, #sz do put(string.pack('<i8', sz[i])) end
        put(string.pack('<s8', torch._tensor_bytes(v)))
        return
      end
      local mt = getmetatable(v)
      if mt == size_mt then
        put('S' .. string.pack('<B', #v))
        for i = 1, #v do put(string.pack('<i8', v[i])) end
        return
      end
      local class = mt and rawget(mt, '__typename') or ''
      if mt and class == '' then
        error(string.format('torch.save: cannot save a table with a metatable that is not a class at %s', where), 0)
      end
      local keys = {}
      for k in next, v do keys[#keys + 1] = k end
      put('M' .. string.pack('<s2i4', class, #keys))
      for _, k in ipairs(keys) do
        value(k, where .. '[key]')
        value(rawget(v, k), where .. '.' .. tostring(k))
      end
    else
      error(string.format('torch.save: cannot save a %s at %s', t, where), 0)
    end
  end
  return function(obj)
    value(obj, 'obj')
    local body = MAGIC .. table.concat(parts)
    return body .. string.pack('<I4', torch._crc32(body))
  end
end

-- torch.serialize(obj): the bytes torch.save writes, as a string.
function torch.serialize(obj)
  return writer()(obj)
end

local function class_named(name)
  local mt = torch.getmetatable and torch.getmetatable(name)
  if not mt then
    local pkg = name:match('^([^.]+)%.')
    if pkg then pcall(require, pkg) end
    mt = torch.getmetatable and torch.getmetatable(name)
  end
  return mt
end

-- torch.deserialize(s): the value a torch.serialize string holds.
function torch.deserialize(s, source)
  source = source or 'string'
  if type(s) ~= 'string' or #s < #MAGIC or s:sub(1, #MAGIC - 1) ~= MAGIC:sub(1, -2) then
    error('torch.load: ' .. source .. ' is not a moontorch file (wrong magic)', 2)
  end
  if s:sub(#MAGIC, #MAGIC) ~= MAGIC:sub(-1) then
    error(string.format('torch.load: %s is format version %d; this moontorch reads version %d', source,
                        s:byte(#MAGIC), MAGIC:byte(-1)), 2)
  end
  if #s < #MAGIC + 4 then error('torch.load: ' .. source .. ' is truncated', 2) end
  local stored = string.unpack('<I4', s, #s - 3)
  s = s:sub(1, #s - 4)
  if torch._crc32(s) ~= stored then
    error('torch.load: ' .. source .. ' is corrupt or truncated (checksum mismatch)', 2)
  end
  local pos, refs = #MAGIC + 1, {}
  local function need(n, what)
    if n < 0 or pos + n - 1 > #s then
      error(string.format('torch.load: %s is truncated or corrupt (%s needs %d bytes at offset %d, %d left)',
                          source, what, n, pos - 1, #s - pos + 1), 0)
    end
  end
  local function unpack(fmt, size, what)
    need(size, what)
    local a, b, c = string.unpack(fmt, s, pos)
    return a, b, c
  end
  local function value()
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
      if refs[id] == nil then error('torch.load: ' .. source .. ' refers to an unknown object ' .. id, 0) end
      return refs[id]
    elseif tag == 'S' then
      local n; n, pos = unpack('<B', 1, 'a size')
      local out = {}
      for i = 1, n do out[i], pos = unpack('<i8', 8, 'a size') end
      refs[#refs + 1] = out                       -- numbered like tables and tensors
      return setmetatable(out, size_mt)
    elseif tag == 'T' then
      local dlen = unpack('<B', 1, 'a dtype')
      need(1 + dlen + 1, 'a dtype')
      local dtype, ndim
      dtype, ndim, pos = string.unpack('<s1B', s, pos)
      local shape, count = {}, 1
      for i = 1, ndim do
        shape[i], pos = unpack('<i8', 8, 'a tensor size')
        if shape[i] < 0 then error('torch.load: ' .. source .. ' holds a negative tensor size', 0) end
        count = count * shape[i]
      end
      local nbytes = unpack('<I8', 8, 'tensor data')
      need(8 + nbytes, 'tensor data')
      local bytes
      bytes, pos = string.unpack('<s8', s, pos)
      local ok, t = pcall(torch._tensor_from_bytes, bytes, dtype, shape)
      if not ok then error('torch.load: ' .. source .. ': ' .. tostring(t), 0) end
      refs[#refs + 1] = t
      return t
    elseif tag == 'M' then
      need(2, 'a class name')
      local class, count
      local clen = string.unpack('<I2', s, pos)
      need(2 + clen + 4, 'a table header')
      class, count, pos = string.unpack('<s2i4', s, pos)
      if count < 0 or count > #s then error('torch.load: ' .. source .. ' is corrupt (a table of ' .. count .. ' entries)', 0) end
      local t = {}
      refs[#refs + 1] = t
      for _ = 1, count do
        local k = value()
        local v = value()
        if k == nil then error('torch.load: ' .. source .. ' is corrupt (a nil key)', 0) end
        rawset(t, k, v)
      end
      if class ~= '' then
        local mt = class_named(class)
        if not mt then error('torch.load: ' .. source .. ' holds a ' .. class .. ', a class that does not exist', 0) end
        setmetatable(t, mt)
      end
      return t
    end
    error(string.format('torch.load: %s is corrupt (unknown tag %q at offset %d)', source, tag, pos - 2), 0)
  end
  local v = value()
  if pos ~= #s + 1 then error('torch.load: ' .. source .. ' has ' .. (#s - pos + 1) .. ' bytes after its value', 0) end
  return v
end

-- torch.save(path, obj): writes obj to path atomically (a crash leaves the old file).
function torch.save(...)
  local path, obj = ...
  if type(path) ~= 'string' then error('torch.save: the first argument is the file name (Torch7 order)', 2) end
  if select('#', ...) < 2 then error('torch.save(path, obj): nothing to save', 2) end
  local ok, bytes = pcall(torch.serialize, obj)
  if not ok then error(bytes, 2) end
  local dir = path:match('^(.*)/[^/]*$') or '.'
  local tmp = string.format('%s.tmp.%d.%d', path, torch._getpid(), math.random(1, 1e9))
  local f, err = io.open(tmp, 'wb')
  if not f then error('torch.save: cannot write ' .. path .. ': ' .. tostring(err), 2) end
  local wrote, werr = f:write(bytes)
  local flushed = wrote and f:flush()
  f:close()
  if not (wrote and flushed) then os.remove(tmp); error('torch.save: writing ' .. path .. ' failed: ' .. tostring(werr), 2) end
  local synced, serr = pcall(torch._fsync, tmp)
  if not synced then os.remove(tmp); error(serr, 2) end
  local renamed, rerr = os.rename(tmp, path)
  if not renamed then os.remove(tmp); error('torch.save: ' .. tostring(rerr), 2) end
  pcall(torch._fsync, dir)
end

-- torch.load(path, {map_location='cpu'}): the value torch.save wrote to path.
function torch.load(path, opts)
  if type(path) ~= 'string' then error('torch.load: expected a file name', 2) end
  local where = type(opts) == 'table' and opts.map_location or 'cpu'
  if where ~= 'cpu' then
    error("torch.load: map_location '" .. tostring(where) .. "' is not available (only 'cpu' here)", 2)
  end
  local f, err = io.open(path, 'rb')
  if not f then error('torch.load: cannot open ' .. path .. ': ' .. tostring(err), 2) end
  local bytes = f:read('a')
  f:close()
  local ok, v = pcall(torch.deserialize, bytes, path)
  if not ok then error(v, 2) end
  return v
end

return torch
