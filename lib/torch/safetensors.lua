-- torch.save_safetensors(path, state_dict, metadata) and
-- torch.load_safetensors(path, {mmap=false}): the safetensors format of
-- Hugging Face (docs/serialize.md): 8 bytes of little-endian header length,
-- a JSON header {name: {dtype, shape, data_offsets}, __metadata__: {str: str}}
-- padded with spaces to 8 bytes, then the tensors' raw little-endian bytes,
-- back to back. Files are written as the reference writer writes them
-- (tensors by alignment then name), atomically; the header of a file read is
-- parsed by a strict JSON reader and every offset, size and dtype checked
-- before any tensor is made.
local torch = require 'torch.core'

-- The reference reader's cap on the header: a file cannot make us parse more.
local MAX_HEADER_BYTES = 100000000
local MAX_JSON_DEPTH = 64
local MAX_DIMS = 16                                -- a tensor's limit (MT_MAX_DIMS)

-- safetensors dtype codes, their moontorch dtypes, and the writer's order
-- (larger elements first, as the reference writer sorts, so data stays aligned)
local dtype_of = {F64 = 'float64', F32 = 'float32', F16 = 'float16', BF16 = 'bfloat16', I64 = 'int64',
                  I32 = 'int32', I16 = 'int16', I8 = 'int8', U8 = 'uint8', BOOL = 'bool'}
local code_of, rank_of = {}, {}
for i, code in ipairs({'I64', 'F64', 'F32', 'I32', 'BF16', 'F16', 'I16', 'I8', 'U8', 'BOOL'}) do
  code_of[dtype_of[code]], rank_of[dtype_of[code]] = code, i
end
local known_codes = 'BF16, BOOL, F16, F32, F64, I16, I32, I64, I8, U8'

-- ---- JSON (RFC 8259), strict: a JSON error is a file error ----

local escapes = {['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t'}
-- Decoded arrays carry ARRAY as metatable (and their length in n); objects a
-- metatable of their own holding the keys in order; null is NULL.
local ARRAY, NULL = {}, {}
local function is_array(v) return getmetatable(v) == ARRAY end
local function is_object(v) return type(v) == 'table' and getmetatable(v) ~= nil and getmetatable(v).order ~= nil end

-- json_decode(s): the value s holds; errors are tables {json = message}
local function json_decode(s)
  local pos = 1
  local function fail(what)
    if pos > #s then error({json = 'the header ends early'}) end
    error({json = string.format('%s at byte %d of the header', what, pos)})
  end
  local function skip() pos = s:find('[^ \t\n\r]', pos) or #s + 1 end
  local function literal(word, v)
    if s:sub(pos, pos + #word - 1) ~= word then fail('invalid JSON') end
    pos = pos + #word
    return v
  end
  local function string_value()
    pos = pos + 1                                 -- the opening quote
    local out = {}
    while true do
      local stop = s:find('["\\\0-\31]', pos)
      if not stop then fail('an unterminated string') end
      out[#out + 1] = s:sub(pos, stop - 1)
      local c = s:sub(stop, stop)
      pos = stop + 1
      if c == '"' then break end
      if c ~= '\\' then pos = stop; fail('a control character in a string') end
      local e = s:sub(pos, pos)
      if escapes[e] then
        out[#out + 1] = escapes[e]
        pos = pos + 1
      elseif e == 'u' then
        local function hex4()
          local h = s:match('^%x%x%x%x', pos + 1)
          if not h then fail('a bad \\u escape') end
          pos = pos + 5
          return tonumber(h, 16)
        end
        local code = hex4()
        if code >= 0xDC00 and code <= 0xDFFF then fail('a lone low surrogate') end
        if code >= 0xD800 and code <= 0xDBFF then
          if s:sub(pos, pos + 1) ~= '\\u' then fail('a lone high surrogate') end
          pos = pos + 1
          local low = hex4()
          if low < 0xDC00 or low > 0xDFFF then fail('a bad surrogate pair') end
          code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
        end
        out[#out + 1] = utf8.char(code)
      else
        fail('a bad escape')
      end
    end
    local str = table.concat(out)
    if not utf8.len(str) then fail('a string that is not UTF-8') end
    return str
  end
  -- -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][-+]?[0-9]+)?
  local function number()
    local i = s:sub(pos, pos) == '-' and pos + 1 or pos
    local digits = s:match('^%d+', i)
    if not digits or (#digits > 1 and digits:sub(1, 1) == '0') then fail('a malformed number') end
    i = i + #digits
    local integral = true
    if s:sub(i, i) == '.' then
      local frac = s:match('^%d+', i + 1)
      if not frac then fail('a malformed number') end
      i, integral = i + 1 + #frac, false
    end
    if s:find('^[eE]', i) then
      local exp = s:match('^[eE][-+]?%d+', i)
      if not exp then fail('a malformed number') end
      i, integral = i + #exp, false
    end
    local v = tonumber(s:sub(pos, i - 1))
    if integral and math.type(v) ~= 'integer' then fail('an integer out of range') end
    pos = i
    return v
  end
  local value
  local function container(depth, close, item)
    if depth > MAX_JSON_DEPTH then fail('JSON nested too deep') end
    pos = pos + 1
    skip()
    if s:sub(pos, pos) == close then pos = pos + 1 return end
    while true do
      item()
      skip()
      local c = s:sub(pos, pos)
      pos = pos + 1
      if c == close then return end
      if c ~= ',' then pos = pos - 1; fail("',' or '" .. close .. "' expected") end
      skip()
    end
  end
  function value(depth)
    skip()
    local c = s:sub(pos, pos)
    if c == '{' then
      local order = {}
      local obj = setmetatable({}, {order = order})
      container(depth, '}', function()
        if s:sub(pos, pos) ~= '"' then fail('a key expected') end
        local k = string_value()
        if obj[k] ~= nil then fail("a duplicate key '" .. k .. "'") end
        skip()
        if s:sub(pos, pos) ~= ':' then fail("':' expected") end
        pos = pos + 1
        order[#order + 1] = k
        obj[k] = value(depth + 1)
      end)
      return obj
    elseif c == '[' then
      local arr = setmetatable({n = 0}, ARRAY)
      container(depth, ']', function()
        arr.n = arr.n + 1
        arr[arr.n] = value(depth + 1)
      end)
      return arr
    elseif c == '"' then return string_value()
    elseif c == 't' then return literal('true', true)
    elseif c == 'f' then return literal('false', false)
    elseif c == 'n' then return literal('null', NULL)
    elseif c:match('[-%d]') then return number()
    end
    fail('invalid JSON')
  end
  local v = value(1)
  skip()
  if pos <= #s then fail('trailing characters after the JSON') end
  return v
end

-- JSON text of a string, escaped as the reference writer (serde_json) does
local json_escapes = {['"'] = '\\"', ['\\'] = '\\\\', ['\b'] = '\\b', ['\f'] = '\\f', ['\n'] = '\\n',
                      ['\r'] = '\\r', ['\t'] = '\\t'}
local function json_string(s, what)
  if not utf8.len(s) then error(string.format('torch.save_safetensors: %s is not valid UTF-8', what), 0) end
  return '"' .. s:gsub('[\0-\31"\\]', function(c)
    return json_escapes[c] or string.format('\\u%04x', c:byte())
  end) .. '"'
end

-- ---- writing ----

-- torch.save_safetensors(path, {name = tensor, ...}, {key = 'value', ...}):
-- writes the tensors (their values: views are compacted) and the metadata,
-- atomically and through symlinks, as torch.save writes.
function torch.save_safetensors(path, state_dict, metadata)
  local op = 'torch.save_safetensors'
  if type(path) ~= 'string' then error(op .. ': the first argument is the file name', 2) end
  if type(state_dict) ~= 'table' then
    error(op .. ': expected a table of name -> tensor, got a ' .. type(state_dict), 2)
  end
  if getmetatable(state_dict) and state_dict.state_dict then
    error(op .. ': got a ' .. torch.type(state_dict) .. '; save its state_dict()', 2)
  end
  local entries = {}
  for name, t in pairs(state_dict) do
    if type(name) ~= 'string' then error(op .. ': tensor names must be strings, got a ' .. type(name), 2) end
    if name == '__metadata__' then error(op .. ": '__metadata__' is reserved and cannot name a tensor", 2) end
    if not torch.is_tensor(t) then error(string.format("%s: '%s' is a %s, not a tensor", op, name, type(t)), 2) end
    entries[#entries + 1] = {name = name, tensor = t, rank = rank_of[t.dtype]}
  end
  table.sort(entries, function(a, b)
    if a.rank ~= b.rank then return a.rank < b.rank end
    return a.name < b.name
  end)
  local parts = {}
  if metadata ~= nil then
    if type(metadata) ~= 'table' then
      error(op .. ': metadata must be a table of strings, got a ' .. type(metadata), 2)
    end
    local keys = {}
    for k, v in pairs(metadata) do
      if type(k) ~= 'string' or type(v) ~= 'string' then
        error(string.format('%s: metadata must map strings to strings (%s = %s)', op, tostring(k), tostring(v)), 2)
      end
      keys[#keys + 1] = k
    end
    table.sort(keys)
    local items = {}
    for i, k in ipairs(keys) do
      items[i] = json_string(k, 'metadata key') .. ':' .. json_string(metadata[k], 'metadata value of ' .. k)
    end
    parts[1] = '"__metadata__":{' .. table.concat(items, ',') .. '}'
  end
  local offset = 0
  for _, e in ipairs(entries) do
    local t = e.tensor
    local nbytes = t:numel() * t:element_size()
    parts[#parts + 1] = string.format('%s:{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}',
                                      json_string(e.name, 'tensor name ' .. e.name), code_of[t.dtype],
                                      table.concat(t:size():totable(), ','), offset, offset + nbytes)
    offset = offset + nbytes
  end
  local header = '{' .. table.concat(parts, ',') .. '}'
  header = header .. string.rep(' ', -#header % 8)
  local ok, err = pcall(torch._write_atomic, path, op, function(write)
    write(string.pack('<I8', #header), header)
    for _, e in ipairs(entries) do write(e.tensor) end
  end)
  if not ok then error(err, 2) end
end

-- ---- reading ----

local function natural(v) return math.type(v) == 'integer' and v >= 0 end
local element_size = {}
for _, dtype in pairs(dtype_of) do element_size[dtype] = torch.tensor(0, {dtype = dtype}):element_size() end

-- the tensor specs a header describes, checked against data_bytes; raises
-- messages without the file's name
local function check_header(header, data_bytes)
  if not is_object(header) then error({json = 'the header is not a JSON object'}) end
  local specs, metadata = {}, nil
  for _, name in ipairs(getmetatable(header).order) do
    local info = header[name]
    local function bad(what) error({json = string.format("tensor '%s': %s", name, what)}) end
    if name == '__metadata__' then
      if not is_object(info) then error({json = '__metadata__ is not a JSON object'}) end
      metadata = {}
      for k, v in pairs(info) do
        if type(v) ~= 'string' then error({json = string.format("__metadata__ '%s' is not a string", k)}) end
        metadata[k] = v
      end
    else
      if not is_object(info) then bad('not a JSON object') end
      for k in pairs(info) do
        if k ~= 'dtype' and k ~= 'shape' and k ~= 'data_offsets' then bad("unknown field '" .. tostring(k) .. "'") end
      end
      local dtype = dtype_of[info.dtype]
      if not dtype then
        bad(string.format('unknown dtype %s (known: %s)', type(info.dtype) == 'string' and "'" .. info.dtype .. "'"
                          or 'of type ' .. type(info.dtype), known_codes))
      end
      local shape, offsets = info.shape, info.data_offsets
      if not is_array(shape) then bad('shape is not a JSON array') end
      if not is_array(offsets) or offsets.n ~= 2 then bad('data_offsets is not an array of two numbers') end
      local first, last = offsets[1], offsets[2]
      if not (natural(first) and natural(last) and first <= last) then
        bad(string.format('data_offsets [%s, %s] are not a range', tostring(first), tostring(last)))
      end
      if last > data_bytes then
        bad(string.format('data_offsets [%d, %d] run past the data (%d bytes)', first, last, data_bytes))
      end
      if shape.n > MAX_DIMS then bad(string.format('%d dims (at most %d)', shape.n, MAX_DIMS)) end
      local dims, count, empty = {}, element_size[dtype], false
      for i = 1, shape.n do
        local d = shape[i]
        if not natural(d) then bad('shape entry ' .. i .. ' is not a size') end
        dims[i] = d
        if d == 0 then empty = true
        elseif count > math.maxinteger // d then
          bad('shape [' .. table.concat(shape, ', ', 1, shape.n) .. '] is too large')
        else count = count * d end
      end
      if empty then count = 0 end
      if count ~= last - first then
        bad(string.format('data_offsets [%d, %d] hold %d bytes, but %s of shape [%s] needs %d', first, last,
                          last - first, info.dtype, table.concat(dims, ', '), count))
      end
      specs[#specs + 1] = {name, dtype, dims, first, last}
    end
  end
  -- tensors must tile the data: sorted by offset, each starts where the last ended
  local by_offset = {}
  for i, spec in ipairs(specs) do by_offset[i] = spec end
  table.sort(by_offset, function(a, b)
    if a[4] ~= b[4] then return a[4] < b[4] end
    return a[5] < b[5]
  end)
  local at = 0
  for _, spec in ipairs(by_offset) do
    if spec[4] ~= at then
      error({json = string.format("tensor '%s': data_offsets [%d, %d] %s", spec[1], spec[4], spec[5],
                                  spec[4] < at and 'overlap another tensor' or 'leave a gap after byte ' .. at)})
    end
    at = spec[5]
  end
  if at ~= data_bytes then
    error({json = string.format('the tensors cover %d bytes of data, but the file holds %d', at, data_bytes)})
  end
  return specs, metadata
end

-- torch.load_safetensors(path, {mmap=false}) -> {name = tensor, ...}, metadata
-- (a table of strings, or nil when the file has none). With mmap=true the
-- tensors are views of the mapped file (copy on write: changing them never
-- changes the file), read only when used; a tensor at an offset that does not
-- suit its dtype's alignment is copied. If the file is truncated while they
-- live, the op reading the lost data raises (never SIGBUS); it then reads as zeros.
function torch.load_safetensors(path, opts)
  local op = 'torch.load_safetensors'
  torch._check_file_name(path, op, 2)
  local mmap = false
  if opts ~= nil then
    if type(opts) ~= 'table' then error(op .. ': options must be a table such as {mmap = true}', 2) end
    for k, v in pairs(opts) do
      if k ~= 'mmap' then error(string.format("%s: unknown option '%s' (options: mmap)", op, tostring(k)), 2) end
      mmap = v and true or false
    end
  end
  local f, err = io.open(path, 'rb')
  if not f then error(op .. ': cannot open ' .. path .. ': ' .. tostring(err), 2) end
  local size = f:seek('end')
  f:seek('set', 0)
  local prefix = f:read(8) or ''
  local function fail(what) f:close(); error(string.format('%s: %s: %s', op, path, what), 3) end
  if size == nil or #prefix < 8 then fail(string.format('%d bytes are too few for a safetensors file', size or 0)) end
  local n = string.unpack('<i8', prefix)
  if n < 0 or n > MAX_HEADER_BYTES then
    fail(string.format('the header length %u is larger than the limit of %d bytes', n, MAX_HEADER_BYTES))
  end
  if n > size - 8 then
    fail(string.format('the header length %d runs past the end of the file (%d bytes)', n, size))
  end
  if n == 0 then fail('an empty header') end
  local text = f:read(n)
  f:close()
  if not text or #text ~= n then error(string.format('%s: %s: the file is truncated', op, path), 2) end
  local ok, specs, metadata = pcall(function()
    if text:sub(1, 1) ~= '{' then error({json = "the header does not start with '{'"}) end
    return check_header(json_decode(text), size - 8 - n)
  end)
  if not ok then
    local msg = type(specs) == 'table' and specs.json or tostring(specs)
    error(string.format('%s: %s: %s', op, path, msg), 2)
  end
  for _, spec in ipairs(specs) do
    spec[4], spec[5] = 8 + n + spec[4], spec[5] - spec[4]        -- file offset, byte count
  end
  local loaded
  ok, loaded = pcall(torch._file_tensors, path, specs, mmap, op .. ': ' .. path)
  if not ok then error((tostring(loaded):gsub('^[^\n]-:%d+: ', '', 1)), 2) end
  local out = {}
  for i, spec in ipairs(specs) do out[spec[1]] = loaded[i] end
  return out, metadata
end

return torch
