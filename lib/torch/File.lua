-- Torch7's File API: torch.DiskFile, torch.MemoryFile, torch.PipeFile and
-- their shared base torch.File -- typed reads and writes, binary or ascii.
--
-- A File reads and writes through a backend of four raw operations (read n
-- bytes, write bytes, seek, tell) over a Lua file handle (DiskFile), a pipe
-- (PipeFile) or a growing buffer (MemoryFile). Above them: the typed families
-- (readInt, writeFloat, ...) in Torch7's two encodings. Binary: each value's
-- bytes, native byte order unless bigEndianEncoding/littleEndianEncoding
-- says otherwise; a Long is 8 bytes (an x86_64 Torch7's long). Ascii:
-- Torch7's layout, byte for byte -- integers as %d, floats as %.9g, doubles
-- as %.17g, Bytes and Chars as the raw bytes; with autoSpacing (the default)
-- a space between the values of one call and a newline after them. A new
-- File is ascii, as in Torch7. Objects (readObject/writeObject) are in
-- lib/torch/t7format.lua. docs/serialize.md describes the API.
local torch = require 'torch.core'

-- Bytes a read-ahead takes at once when an ascii number is scanned: enough
-- for many numbers per read, small enough that a pipe never waits long.
local SCAN_CHUNK = 4096
-- Longest ascii number token accepted: %.17g of a double is at most 24 bytes,
-- a Long's %d 20; anything longer is not a number Torch7 wrote.
local MAX_TOKEN = 64

-- torch.File: the base class of DiskFile, MemoryFile and PipeFile (Torch7's
-- File API): typed reads and writes (readInt, writeDouble, ...), binary() or
-- ascii(), seek/position, readObject/writeObject in Torch7's format.
local File = torch.class('torch.File')
File.__tostring = function(f) return torch.typename(f) .. (f._name and ' ' .. f._name or '') end

-- ---- errors at the user's line ----

local this_source = debug.getinfo(1, 'S').source
local internal = {[this_source] = true}

-- File._internal(source): errors raised in that chunk are reported at the first
-- frame outside it too (t7format's), so that they name the user's line.
function File._internal(source) internal[source] = true end

-- "src:line: " of the first caller frame outside these files and outside C
local function user_where()
  for level = 3, 200 do
    local info = debug.getinfo(level, 'Sl')
    if not info then return '' end
    if not internal[info.source] and info.currentline > 0 then
      return info.short_src .. ':' .. info.currentline .. ': '
    end
  end
  return ''
end

-- raises "op: message" at the user's line
local function fail(op, fmt, ...)
  error(user_where() .. op .. ': ' .. string.format(fmt, ...), 0)
end
File._fail = fail

-- ---- the typed families ----

-- type name -> dtype, byte size, string.pack code, ascii write format
local TYPES = {
  Byte = {dtype = 'uint8', size = 1, code = 'B', raw = true},
  Char = {dtype = 'int8', size = 1, code = 'b', raw = true},
  Short = {dtype = 'int16', size = 2, code = 'i2', fmt = '%d', int = true},
  Int = {dtype = 'int32', size = 4, code = 'i4', fmt = '%d', int = true},
  Long = {dtype = 'int64', size = 8, code = 'i8', fmt = '%d', int = true},
  Float = {dtype = 'float32', size = 4, code = 'f', fmt = '%.9g'},
  Double = {dtype = 'float64', size = 8, code = 'd', fmt = '%.17g'},
  Half = {dtype = 'float16', size = 2, fmt = '%.9g'},
}
File._TYPES = TYPES
local NATIVE = string.pack('=i2', 1) == string.pack('<i2', 1) and '<' or '>'
local INT_RANGE = {Byte = {0, 255}, Char = {-128, 127}, Short = {-32768, 32767},
                   Int = {-2147483648, 2147483647}, Long = {math.mininteger, math.maxinteger}}

-- ---- state and the byte layer ----

-- Called by each kind's __init once its backend is open.
function File:_setup(name, readable, writable, quiet)
  self._name, self._readable, self._writable = name, readable, writable
  self._binary, self._autospacing, self._quiet, self._error = false, true, quiet == true, false
  self._order = '='                   -- '=' native, '<' little, '>' big endian
  self._ahead = ''                    -- bytes read ahead by the ascii scanner
  self._open = true
end

local function check_open(self, op)
  if not rawget(self, '_open') then fail(op, 'attempt to use a closed file') end
end
local function check_read(self, op)
  check_open(self, op)
  if not self._readable then fail(op, 'attempt to read in a write-only file') end
end
local function check_write(self, op)
  check_open(self, op)
  if not self._writable then fail(op, 'attempt to write in a read-only file') end
end

-- the position the user sees: the backend's, less what was read ahead (0-based)
local function tell(self) return self:_raw_tell() - #self._ahead end

-- gives the read-ahead back to the backend (before a write or a seek)
local function drop_ahead(self)
  if #self._ahead > 0 then
    self:_raw_seek(tell(self))
    self._ahead = ''
  end
end

-- up to n bytes (fewer at the end)
local function read_bytes(self, n)
  local ahead = self._ahead
  if n <= #ahead then
    self._ahead = ahead:sub(n + 1)
    return ahead:sub(1, n)
  end
  self._ahead = ''
  local rest = self:_raw_read(n - #ahead) or ''
  return ahead .. rest
end

local function write_bytes(self, op, s)
  drop_ahead(self)
  local ok, err = self:_raw_write(s)
  if not ok then
    self._error = true
    if not self._quiet then fail(op, 'write error: %s', tostring(err)) end
    return false
  end
  return true
end

-- at least n bytes in the read-ahead unless the end comes first
local function fill_ahead(self, n)
  while #self._ahead < n do
    local more = self:_raw_read(SCAN_CHUNK)
    if not more or #more == 0 then return false end
    self._ahead = self._ahead .. more
  end
  return true
end

-- the next ascii token (after whitespace), or nil at the end of the file
local function scan_token(self)
  while true do
    if not fill_ahead(self, 1) then return nil end
    local first = self._ahead:find('%S')
    if first then self._ahead = self._ahead:sub(first) break end
    self._ahead = ''
  end
  while true do
    local stop = self._ahead:find('[%s]')
    if stop then
      local token = self._ahead:sub(1, stop - 1)
      self._ahead = self._ahead:sub(stop)
      return token
    end
    if #self._ahead > MAX_TOKEN or not fill_ahead(self, #self._ahead + 1) then
      local token = self._ahead
      self._ahead = ''
      return token
    end
  end
end

-- with autoSpacing, the newline that ends a call's values is consumed
local function skip_newline(self)
  if self._autospacing and fill_ahead(self, 1) and self._ahead:sub(1, 1) == '\n' then
    self._ahead = self._ahead:sub(2)
  end
end

-- the value of an ascii token for type info, or nil when it is not one
local SPECIAL = {inf = math.huge, ['+inf'] = math.huge, ['-inf'] = -math.huge, infinity = math.huge,
                 ['-infinity'] = -math.huge, nan = 0 / 0, ['-nan'] = 0 / 0}
local function token_value(info, token)
  if info.int then
    if not token:find('^[+-]?%d+$') then return nil end
    return math.tointeger(tonumber(token))
  end
  local v = tonumber(token)
  if v == nil then v = SPECIAL[token:lower()] end
  return v
end

-- reports a short read: raises unless quiet
local function short_read(self, op, got, want)
  self._error = true
  if not self._quiet then
    fail(op, 'read error: read %d values instead of %d (at byte %d of %s)', got, want, tell(self),
         self._name or 'the file')
  end
end

-- ---- values <-> bytes ----

-- a Lua number as a value of integer type name, as a C cast would give it (floats
-- truncate), or raises when it does not fit
local function integer_value(op, name, v)
  if type(v) ~= 'number' then fail(op, 'expected a number, got %s', type(v)) end
  local i = math.tointeger(v)
  if not i then
    if v ~= v or v == math.huge or v == -math.huge then fail(op, '%s cannot be written as a %s', tostring(v), name) end
    i = math.tointeger(v < 0 and math.ceil(v) or math.floor(v))
    if not i then fail(op, '%s does not fit in a %s', tostring(v), name) end
  end
  local range = INT_RANGE[name]
  if i < range[1] or i > range[2] then fail(op, '%d does not fit in a %s', i, name) end
  return i
end

-- reverses each size-byte block of s (a byte order change)
local function swap_blocks(s, size)
  if size == 1 then return s end
  return (s:gsub(string.rep('.', size), string.reverse))
end

-- true when the file's byte order differs from the machine's
local function foreign(self) return self._order ~= '=' and self._order ~= NATIVE end

-- the values of a tensor (any shape: its elements in order) as bytes in the file's order
local function tensor_bytes(self, t)
  local bytes = torch._tensor_bytes(t)
  return foreign(self) and swap_blocks(bytes, TYPES[self._cur].size) or bytes
end

-- ---- the values of a write call: one number, a table, a tensor or a storage ----

-- the 1-D tensor of a storage (Torch7 Storage classes give it with _tensor)
local function storage_tensor(v)
  if type(v) == 'userdata' or type(v) == 'table' then
    local ok, f = pcall(function() return v._tensor end)
    if ok and type(f) == 'function' then return f(v) end
  end
  return nil
end
File._storage_tensor = storage_tensor

-- v (a table of numbers, a tensor or a storage) as a contiguous tensor of info's dtype
local function as_tensor(op, info, name, v)
  local t = torch.is_tensor(v) and v or storage_tensor(v)
  if t then
    if t.is_cuda then t = t:cpu() end
    t = t:detach():reshape(-1)
    return t.dtype == info.dtype and t or t:to(info.dtype)
  end
  if type(v) ~= 'table' then fail(op, 'expected a number, a table of numbers, a tensor or a storage, got %s', type(v)) end
  local values = {}
  for i = 1, #v do
    local x = v[i]
    if info.int then x = integer_value(op, name, x)
    elseif type(x) ~= 'number' then fail(op, 'element %d is a %s, not a number', i, type(x)) end
    values[i] = x
  end
  if #values == 0 then return torch.empty(0, {dtype = info.dtype}) end
  return torch.tensor(values, {dtype = info.dtype})
end

-- the ascii text of a tensor's values
local function ascii_text(self, info, t)
  local n = t:numel()
  if n == 0 then return '' end
  local values = t:_flat_values()
  local parts = {}
  if info.raw then
    for i = 1, n do parts[i] = string.char(values[i] & 0xff) end
    parts = {table.concat(parts)}
  else
    local fmt = info.fmt
    for i = 1, n do parts[i] = string.format(fmt, values[i]) end
  end
  local text = table.concat(parts, self._autospacing and not info.raw and ' ' or '')
  return self._autospacing and text .. '\n' or text
end

local function write_values(self, name, v)
  local op = 'write' .. name
  check_write(self, op)
  local info = TYPES[name]
  self._cur = name
  if type(v) == 'number' then
    if self._binary and info.code then
      local x = (info.int or info.raw) and integer_value(op, name, v) or v
      local order = self._order == '=' and NATIVE or self._order
      write_bytes(self, op, string.pack(order .. info.code, x))
      return
    end
    if info.int or info.raw then v = integer_value(op, name, v) end
    local t = torch.tensor({v}, {dtype = info.dtype})
    write_bytes(self, op, self._binary and tensor_bytes(self, t) or ascii_text(self, info, t))
    return
  end
  local t = as_tensor(op, info, name, v)
  local ok = write_bytes(self, op, self._binary and tensor_bytes(self, t) or ascii_text(self, info, t))
  return ok and t:numel() or 0
end

-- reads n values of type name into a new 1-D tensor (fewer at a short read)
local function read_tensor(self, op, name, n)
  local info = TYPES[name]
  if self._binary or info.raw then
    local bytes = read_bytes(self, n * info.size)
    local got = #bytes // info.size
    bytes = bytes:sub(1, got * info.size)
    if self._binary and foreign(self) then bytes = swap_blocks(bytes, info.size) end
    if not self._binary then skip_newline(self) end
    if got < n then short_read(self, op, got, n) end
    return torch._tensor_from_bytes(bytes, info.dtype, {got}, op)
  end
  local values = {}
  for i = 1, n do
    local token = scan_token(self)
    local v = token and token_value(info, token)
    if v == nil then break end
    values[i] = v
  end
  if n > 0 then skip_newline(self) end
  if #values < n then short_read(self, op, #values, n) end
  if #values == 0 then return torch.empty(0, {dtype = info.dtype}) end
  return torch.tensor(values, {dtype = info.dtype})
end
File._read_tensor = read_tensor

-- what a read call of n values returns: a storage of them (a 1-D tensor's
-- storage until Torch7 Storage classes exist)
local function as_storage(name, t)
  local cls = rawget(torch, name .. 'Storage')
  if cls then
    local s = cls(t:numel())
    if t:numel() > 0 then storage_tensor(s):copy(t) end
    return s
  end
  return t:storage()
end

local function read_values(self, name, what)
  local op = 'read' .. name
  check_read(self, op)
  self._cur = name
  local info = TYPES[name]
  if what == nil then
    if self._binary and info.code then
      local bytes = read_bytes(self, info.size)
      if #bytes < info.size then short_read(self, op, 0, 1) return nil end
      local order = self._order == '=' and NATIVE or self._order
      return (string.unpack(order .. info.code, bytes))
    end
    local t = read_tensor(self, op, name, 1)
    if t:numel() == 0 then return nil end
    return t:_flat_values()[1]
  end
  if math.type(what) == 'integer' then
    if what < 0 then fail(op, 'cannot read %d values', what) end
    local known = self:_remaining()
    if known and what > known then            -- every value takes a byte at least
      if not self._quiet then short_read(self, op, 0, what) end
      what = math.max(known, 0)
    end
    return as_storage(name, read_tensor(self, op, name, what))
  end
  local target = torch.is_tensor(what) and what or storage_tensor(what)
  if not target then fail(op, 'expected nothing, a count, a storage or a tensor, got %s', type(what)) end
  local t = read_tensor(self, op, name, target:numel())
  if t:numel() > 0 then
    torch.no_grad(function() target:view(-1):narrow(1, 1, t:numel()):copy(t) end)
  end
  return t:numel()
end

for name in pairs(TYPES) do
  File['write' .. name] = function(self, v) return write_values(self, name, v) end
  File['read' .. name] = function(self, what) return read_values(self, name, what) end
end

-- File._write_chars(f, s) / File._read_chars(f, n): a string as writeChar and
-- readChar carry it (its bytes; in ascii with autoSpacing a newline after),
-- for writeObject and readObject. _read_chars gives what it could read.
function File._write_chars(self, s)
  check_write(self, 'writeObject')
  local text = (not self._binary and self._autospacing and #s > 0) and s .. '\n' or s
  return write_bytes(self, 'writeObject', text)
end
function File._read_chars(self, n)
  check_read(self, 'readObject')
  local s = read_bytes(self, n)
  if not self._binary and n > 0 then skip_newline(self) end
  return s
end

-- f:writeBool(b) / f:readBool(): a boolean as the Int 1 or 0, as Torch7
function File:writeBool(v)
  if type(v) ~= 'boolean' then fail('writeBool', 'expected a boolean, got %s', type(v)) end
  return self:writeInt(v and 1 or 0)
end
function File:readBool()
  local v = self:readInt()
  if v == nil then return nil end
  return v == 1
end

-- f:writeString(s): the bytes of s, as they are (no spacing); returns #s
function File:writeString(s)
  check_write(self, 'writeString')
  if type(s) ~= 'string' then fail('writeString', 'expected a string, got %s', type(s)) end
  return write_bytes(self, 'writeString', s) and #s or 0
end

-- f:readString('*a' | '*l' | n): the rest of the file, the next line (without
-- its newline), or the next n bytes
function File:readString(format)
  check_read(self, 'readString')
  if math.type(format) == 'integer' and format >= 0 then
    local s = read_bytes(self, format)
    if #s < format then short_read(self, 'readString', #s, format) end
    return s
  end
  if format == '*a' or format == 'a' then
    local parts = {self._ahead}
    self._ahead = ''
    while true do
      local more = self:_raw_read(65536)
      if not more or #more == 0 then break end
      parts[#parts + 1] = more
    end
    local s = table.concat(parts)
    if #s == 0 then short_read(self, 'readString', 0, 1) end
    return s
  end
  if format == '*l' or format == 'l' then
    local parts = {}
    while true do
      if not fill_ahead(self, 1) then break end
      local nl = self._ahead:find('\n', 1, true)
      if nl then
        parts[#parts + 1] = self._ahead:sub(1, nl - 1)
        self._ahead = self._ahead:sub(nl + 1)
        return table.concat(parts)
      end
      parts[#parts + 1] = self._ahead
      self._ahead = ''
    end
    if #parts == 0 then short_read(self, 'readString', 0, 1) end
    return table.concat(parts)
  end
  fail('readString', "format must be '*a', '*l' or a byte count, got %s", tostring(format))
end

-- ---- modes and state ----

function File:binary() check_open(self, 'binary') self._binary = true return self end
function File:ascii() check_open(self, 'ascii') self._binary = false return self end
function File:isBinary() return self._binary end
function File:autoSpacing() self._autospacing = true return self end
function File:noAutoSpacing() self._autospacing = false return self end
function File:isAutoSpacing() return self._autospacing end
function File:quiet() self._quiet = true return self end
function File:pedantic() self._quiet = false return self end
function File:isQuiet() return self._quiet end
function File:hasError() return self._error end
function File:clearError() self._error = false return self end
function File:isReadable() return self._readable end
function File:isWritable() return self._writable end
function File:isOpened() return rawget(self, '_open') == true end
function File:nativeEndianEncoding() check_open(self, 'nativeEndianEncoding') self._order = '=' return self end
function File:littleEndianEncoding() check_open(self, 'littleEndianEncoding') self._order = '<' return self end
function File:bigEndianEncoding() check_open(self, 'bigEndianEncoding') self._order = '>' return self end
function File.isLittleEndianCPU() return NATIVE == '<' end
function File.isBigEndianCPU() return NATIVE == '>' end

-- f:seek(pos): to byte pos, 1-based as in Torch7
function File:seek(pos)
  check_open(self, 'seek')
  if math.type(pos) ~= 'integer' or pos < 1 then fail('seek', 'position has to be an integer >= 1, got %s', tostring(pos)) end
  self._ahead = ''
  local ok, err = self:_raw_seek(pos - 1)
  if not ok then
    self._error = true
    if not self._quiet then fail('seek', 'unable to seek to position %d: %s', pos, tostring(err)) end
  end
  return self
end

function File:seekEnd()
  check_open(self, 'seekEnd')
  self._ahead = ''
  local ok, err = self:_raw_seek_end()
  if not ok then
    self._error = true
    if not self._quiet then fail('seekEnd', 'unable to seek at end of file: %s', tostring(err)) end
  end
  return self
end

-- f:position(): the current byte, 1-based
function File:position()
  check_open(self, 'position')
  return tell(self) + 1
end

-- bytes between the position and the end, or nil when the file cannot say (a pipe)
function File:_remaining()
  local size = self:_raw_size()
  return size and size - tell(self)
end

function File:synchronize()
  check_open(self, 'synchronize')
  drop_ahead(self)
  self:_raw_flush()
  return self
end

function File:close()
  check_open(self, 'close')
  self._ahead = ''
  self._open = false
  local ok, err = self:_raw_close()
  if not ok and not self._quiet then fail('close', '%s', tostring(err)) end
  return self
end

-- f:referenced(bool): whether writeObject/readObject keep one copy of an
-- object met twice (the default) or write it again each time
function File:referenced(ref)
  self._forced = ref == false
  return self
end
function File:isReferenced() return not self._forced end

-- ---- DiskFile: a Lua file handle ----

local function open_mode(op, mode, allow_rw)
  mode = mode or 'r'
  if mode == 'r' then return true, false end
  if mode == 'w' then return false, true end
  if mode == 'rw' and allow_rw then return true, true end
  fail(op, "file mode should be %s, got %s", allow_rw and "'r', 'w' or 'rw'" or "'r' or 'w'", tostring(mode))
end

local DiskFile = torch.class('torch.DiskFile', 'torch.File')

-- torch.DiskFile(path, mode ('r', 'w', 'rw'; default 'r'), quiet): nil when it
-- cannot be opened and quiet is true
function DiskFile:__init(path, mode, quiet)
  torch._check_file_name(path, 'torch.DiskFile', 0)
  local readable, writable = open_mode('torch.DiskFile', mode, true)
  local handle, err
  if readable and writable then
    handle, err = io.open(path, 'r+b')
    if not handle then handle, err = io.open(path, 'w+b') end
  else
    handle, err = io.open(path, readable and 'rb' or 'wb')
  end
  if not handle then
    if quiet then return end
    fail('torch.DiskFile', 'cannot open %s in mode %s: %s', path, mode or 'r', tostring(err))
  end
  self._handle = handle
  self:_setup(path, readable, writable, quiet)
end

-- the handle, readied for a read or a write: C streams need a seek between the two
local function handle_for(self, dir)
  if self._dir ~= dir then
    if self._dir then self._handle:seek('cur', 0) end
    self._dir = dir
  end
  return self._handle
end

function DiskFile:_raw_read(n) return handle_for(self, 'r'):read(n) end
function DiskFile:_raw_write(s) return handle_for(self, 'w'):write(s) end
function DiskFile:_raw_seek(pos) self._dir = nil return self._handle:seek('set', pos) end
function DiskFile:_raw_seek_end() self._dir = nil return self._handle:seek('end') end
function DiskFile:_raw_tell() return self._handle:seek('cur') end
function DiskFile:_raw_size()
  local here = self._handle:seek('cur')
  local size = self._handle:seek('end')
  self._handle:seek('set', here)
  self._dir = nil
  return size
end
function DiskFile:_raw_flush() return self._handle:flush() end
function DiskFile:_raw_close() return self._handle:close() end
function DiskFile:name() return self._name end

-- Torch7's DiskFile methods that do nothing here: 8-byte longs are the only
-- longs, and Lua's buffer is flushed at synchronize and close.
function DiskFile:longSize(size)
  if size ~= nil and size ~= 0 and size ~= 8 then
    fail('longSize', 'only 8-byte longs (an x86_64 Torch7\'s) are read and written, got %s', tostring(size))
  end
  return self
end
function DiskFile:noBuffer()
  check_open(self, 'noBuffer')
  self._handle:setvbuf('no')
  return self
end

-- ---- PipeFile: a command's output or input ----

local PipeFile = torch.class('torch.PipeFile', 'torch.DiskFile')

-- torch.PipeFile(command, mode ('r' or 'w'; default 'r'), quiet)
function PipeFile:__init(command, mode, quiet)
  if type(command) ~= 'string' then fail('torch.PipeFile', 'expected a command string, got %s', type(command)) end
  local readable, writable = open_mode('torch.PipeFile', mode, false)
  local handle, err = io.popen(command, readable and 'r' or 'w')
  if not handle then
    if quiet then return end
    fail('torch.PipeFile', 'cannot run %s: %s', command, tostring(err))
  end
  self._handle, self._count = handle, 0
  self:_setup(command, readable, writable, quiet)
end

function PipeFile:_raw_read(n)
  local s = self._handle:read(n)
  if s then self._count = self._count + #s end
  return s
end
function PipeFile:_raw_write(s)
  local ok, err = self._handle:write(s)
  if ok then self._count = self._count + #s end
  return ok, err
end
function PipeFile:_raw_seek() return nil, 'a pipe cannot seek' end
PipeFile._raw_seek_end = PipeFile._raw_seek
function PipeFile:_raw_tell() return self._count end
function PipeFile:_raw_size() return nil end

-- ---- MemoryFile: a growing buffer ----

local MemoryFile = torch.class('torch.MemoryFile', 'torch.File')

-- torch.MemoryFile([mode]) or torch.MemoryFile(storage | string, [mode]): a
-- file in memory, empty or holding a CharStorage's bytes (its final NUL, which
-- Torch7 requires, is not part of the contents) or a string's
function MemoryFile:__init(contents, mode)
  if type(contents) == 'string' and mode == nil and (contents == 'r' or contents == 'w' or contents == 'rw') then
    contents, mode = nil, contents
  end
  local readable, writable = open_mode('torch.MemoryFile', mode or 'rw', true)
  local data = ''
  if type(contents) == 'string' then
    data = contents
  elseif contents ~= nil then
    local t = storage_tensor(contents)
    if not t or t.dtype ~= 'int8' then
      fail('torch.MemoryFile', 'expected a CharStorage, a string or a mode, got %s', torch.type(contents))
    end
    data = torch._tensor_bytes(t)
    if data:sub(-1) ~= '\0' then fail('torch.MemoryFile', 'provided CharStorage must be terminated by 0') end
    data = data:sub(1, -2)
  end
  self._parts, self._size, self._pos = {data}, #data, 0
  self:_setup(nil, readable, writable)
end

-- the whole contents as one string
local function flatten(self)
  local parts = self._parts
  if #parts > 1 then self._parts = {table.concat(parts)} end
  return self._parts[1]
end

function MemoryFile:_raw_read(n)
  local data = flatten(self)
  local s = data:sub(self._pos + 1, self._pos + n)
  self._pos = self._pos + #s
  return s
end
function MemoryFile:_raw_write(s)
  if self._pos == self._size then
    self._parts[#self._parts + 1] = s
  else
    local data = flatten(self)
    self._parts = {data:sub(1, self._pos) .. s .. data:sub(self._pos + #s + 1)}
  end
  self._pos = self._pos + #s
  if self._pos > self._size then self._size = self._pos end
  return true
end
function MemoryFile:_raw_seek(pos)
  if pos > self._size then return nil, 'past the end (' .. self._size .. ' bytes)' end
  self._pos = pos
  return true
end
function MemoryFile:_raw_seek_end() self._pos = self._size return true end
function MemoryFile:_raw_tell() return self._pos end
function MemoryFile:_raw_size() return self._size end
function MemoryFile:_raw_flush() return true end
function MemoryFile:_raw_close() self._parts = {''} return true end

-- f:string(): the contents as a Lua string (moontorch's)
function MemoryFile:string()
  check_open(self, 'string')
  return flatten(self)
end

-- f:storage(): a CharStorage of the contents and a final NUL, as Torch7 gives
-- it (a copy: writing to it does not change the file)
function MemoryFile:storage()
  check_open(self, 'storage')
  local bytes = flatten(self) .. '\0'
  local t = torch._tensor_from_bytes(bytes, 'int8', {#bytes}, 'storage')
  return as_storage('Char', t)
end

function MemoryFile:longSize(size) return DiskFile.longSize(self, size) end

-- a constructor that returns nil (quiet DiskFile and PipeFile that cannot open)
for _, cls in ipairs({DiskFile, PipeFile}) do
  getmetatable(cls).__call = function(c, ...)
    local obj = setmetatable({}, c)
    c.__init(obj, ...)
    if rawget(obj, '_open') then return obj end
    return nil
  end
end

return File
