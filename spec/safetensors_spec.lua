-- torch.save_safetensors / torch.load_safetensors: a file written by Python's
-- safetensors (its bytes below) loads with the right values, moontorch writes
-- the same bytes, every dtype round-trips, mmap gives views of the file, and
-- bad files raise errors naming the loader, the file and the tensor.
local torch = require 'torch'

local tmp = os.tmpname()
os.remove(tmp)
os.execute('mkdir -p ' .. tmp)
teardown(function() os.execute('rm -rf ' .. tmp) end)

local files = dofile('spec/support/files.lua')
local read, write = files.read, files.write
local function same_bytes(a, b) return a.dtype == b.dtype and a:size() == b:size() and torch._tensor_bytes(a) == torch._tensor_bytes(b) end

-- safetensors.torch.save_file(d, path, metadata={'format': 'pt'}) (safetensors 0.8,
-- torch 2.15) for the tensors of `python_tensors` below
local PYTHON_FILE = '\216\2\0\0\0\0\0\0' ..
    '{"__metadata__":{"format":"pt"},"i64":{"dtype":"I64","shape":[3],"data_offse' ..
    'ts":[0,24]},"d":{"dtype":"F64","shape":[2],"data_offsets":[24,40]},"empty":{' ..
    '"dtype":"F32","shape":[0,3],"data_offsets":[40,40]},"scalar":{"dtype":"F32",' ..
    '"shape":[],"data_offsets":[40,44]},"w":{"dtype":"F32","shape":[2,3],"data_of' ..
    'fsets":[44,68]},"i32":{"dtype":"I32","shape":[2,2],"data_offsets":[68,84]},"' ..
    'b":{"dtype":"BF16","shape":[2],"data_offsets":[84,88]},"h":{"dtype":"F16","s' ..
    'hape":[3],"data_offsets":[88,94]},"i16":{"dtype":"I16","shape":[2],"data_off' ..
    'sets":[94,98]},"i8":{"dtype":"I8","shape":[3],"data_offsets":[98,101]},"u8":' ..
    '{"dtype":"U8","shape":[3],"data_offsets":[101,104]},"mask":{"dtype":"BOOL","' ..
    'shape":[3],"data_offsets":[104,107]}}       ' ..
    '\0\0\0\0\0\1\0\0\249\255\255\255\255\255\255\255\255\255\255\255\255\255\255\127UUUUUU\213?\0\0\0\0\0\0\4\192' ..
    '\0\0 @\0\0\0?\0\0\160\191\0\0@@\0\0\128@\0\0\176\192\0\0\216@\1\0\0\0\254\255\255\255\3\0\0\0' ..
    '\255\255\255\127\192?@\192\0>\0\180\255{\212\254,\1\128\127\0\0\255\7\1\0\1'

local function python_tensors()
  return {
    w = torch.tensor({{0.5, -1.25, 3.0}, {4.0, -5.5, 6.75}}, {dtype = 'float32'}),
    d = torch.tensor({1 / 3, -2.5}, {dtype = 'float64'}),
    h = torch.tensor({1.5, -0.25, 65504.0}, {dtype = 'float16'}),
    b = torch.tensor({1.5, -3.0}, {dtype = 'bfloat16'}),
    i64 = torch.tensor({1 << 40, -7, math.maxinteger}, {dtype = 'int64'}),
    i32 = torch.tensor({{1, -2}, {3, 2147483647}}, {dtype = 'int32'}),
    i16 = torch.tensor({-300, 300}, {dtype = 'int16'}),
    i8 = torch.tensor({-128, 127, 0}, {dtype = 'int8'}),
    u8 = torch.tensor({0, 255, 7}, {dtype = 'uint8'}),
    mask = torch.tensor({true, false, true}),
    scalar = torch.tensor(2.5),
    empty = torch.zeros(0, 3),
  }
end

describe('safetensors', function()
  it('load a file written by Python safetensors, with and without mmap', function()
    local path = tmp .. '/python.safetensors'
    write(path, PYTHON_FILE)
    local want = python_tensors()
    for _, mmap in ipairs({false, true}) do
      local got, metadata = torch.load_safetensors(path, {mmap = mmap})
      assert.are.same({format = 'pt'}, metadata)
      local n = 0
      for name, t in pairs(got) do
        n = n + 1
        assert.is_true(same_bytes(want[name], t), name)
      end
      assert.are.equal(12, n)
      assert.are.equal(0, got.scalar:dim())
      assert.are.equal(math.maxinteger, got.i64[3])
    end
  end)

  it('write the bytes the reference writer writes', function()
    local path = tmp .. '/ours.safetensors'
    torch.save_safetensors(path, python_tensors(), {format = 'pt'})
    assert.are.equal(PYTHON_FILE, read(path))
    torch.save_safetensors(path, {})
    assert.are.equal('\8\0\0\0\0\0\0\0{}      ', read(path))
  end)

  it('round-trip every dtype, non-contiguous, empty and scalar tensors, and metadata', function()
    torch.manual_seed(0)
    local sd = {}
    for _, dt in ipairs({'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'}) do
      sd[dt] = (torch.randn(3, 5) * 50):to(dt)
      sd[dt .. '.t'] = sd[dt]:t()                       -- saved by value
      sd[dt .. '.empty'] = torch.zeros(0, 4):to(dt)
    end
    sd.special = torch.tensor({0 / 0, 1 / 0, -1 / 0, -0.0})
    sd.scalar = torch.tensor(7, {dtype = 'int16'})
    local path = tmp .. '/all.safetensors'
    local metadata = {epoch = '3', ['unicode é "quoted"\n'] = 'ok'}
    torch.save_safetensors(path, sd, metadata)
    assert.are.equal(0, string.unpack('<I8', read(path)) % 8)          -- the header is padded
    for _, mmap in ipairs({false, true}) do
      local back, md = torch.load_safetensors(path, {mmap = mmap})
      assert.are.same(metadata, md)
      for name, t in pairs(sd) do assert.is_true(same_bytes(t:contiguous(), back[name]), name) end
      assert.is_true(back['float32.t']:is_contiguous())
    end
  end)

  it('map the file with mmap: tensors view it without copying, and writes never reach it', function()
    local path = tmp .. '/mapped.safetensors'
    torch.save_safetensors(path, {a = torch.arange(0, 6):float(), b = torch.ones(2, 2)})
    local before = read(path)
    local data_start = 8 + string.unpack('<I8', before)
    local t = torch.load_safetensors(path, {mmap = true})
    -- one mapping of the whole file, page-aligned: each tensor lies at its offset in it
    assert.are.equal(24, t.b:data_ptr() - t.a:data_ptr())
    assert.are.equal(0, (t.a:data_ptr() - data_start) % 4096)
    t.a:add_(100)
    assert.are.equal(100, t.a[1])
    assert.are.equal(before, read(path))
    t = nil
    collectgarbage()
  end)

  it('write atomically and refuse what is not a table of named tensors', function()
    local path = tmp .. '/atomic.safetensors'
    torch.save_safetensors(path, {x = torch.ones(2)})
    local bad = {
      {{x = 'nope'}, "'x' is a string, not a tensor"},
      {{[1] = torch.ones(1)}, 'tensor names must be strings'},
      {{__metadata__ = torch.ones(1)}, "'__metadata__' is reserved"},
    }
    for _, case in ipairs(bad) do
      local ok, err = pcall(torch.save_safetensors, path, case[1])
      assert.is_false(ok)
      assert.truthy(err:find('torch.save_safetensors: ' .. case[2], 1, true), err)
    end
    local ok, err = pcall(torch.save_safetensors, path, require('nn').Linear(2, 2))
    assert.truthy(not ok and err:find('got a nn.Linear; save its state_dict()', 1, true), err)
    ok, err = pcall(torch.save_safetensors, path, {x = torch.ones(1)}, {epoch = 3})
    assert.truthy(not ok and err:find('metadata must map strings to strings', 1, true), err)
    ok, err = pcall(torch.save_safetensors, tmp .. '/no/such/dir/x.safetensors', {x = torch.ones(1)})
    assert.truthy(not ok and err:find('torch.save_safetensors: cannot write', 1, true), err)
    assert.is_true(torch.load_safetensors(path).x:equal(torch.ones(2)))      -- untouched
    local p = io.popen('ls ' .. tmp)
    local listing = p:read('a')
    p:close()
    assert.falsy(listing:find('tmp', 1, true), listing)
    ok, err = pcall(torch.load_safetensors, path, {mmpa = true})
    assert.truthy(not ok and err:find("unknown option 'mmpa'", 1, true), err)
  end)

  it('refuse bad files with errors naming the loader, the file and the tensor', function()
    local path = tmp .. '/bad.safetensors'
    local F32x2 = '{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
    local zeros8 = string.rep('\0', 8)
    local function file(header, data, n) return string.pack('<I8', n or #header) .. header .. (data or '') end
    local cases = {
      {'abc', 'too few for a safetensors file'},
      {file(F32x2, zeros8, 1 << 40), 'header length 1099511627776 is larger than the limit'},
      {file(F32x2, zeros8, -1), 'header length 18446744073709551615 is larger than the limit'},
      {file(F32x2, '', #F32x2 + 100), 'runs past the end of the file'},
      {file(F32x2:sub(1, 6), ''), 'the header ends early'},
      {file(F32x2:sub(1, 10), ''), 'an unterminated string'},
      {file(F32x2 .. '}', zeros8), 'trailing characters'},
      {file('{"x":{"dtype":"F32","shape":[02],"data_offsets":[0,8]}}', zeros8), 'a malformed number'},
      {file('{"x\1":1}', ''), 'a control character'},
      {file('{"\255":1}', ''), 'not UTF-8'},
      {file(string.rep('{"a":', 100) .. '1' .. string.rep('}', 100), ''), 'nested too deep'},
      {file('{"x":{"dtype":"U16","shape":[2],"data_offsets":[0,4]}}', '\0\0\0\0'), "tensor 'x': unknown dtype 'U16'"},
      {file('{"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}', zeros8), "tensor 'x': data_offsets [0, 8] hold 8 bytes, but F32 of shape [3] needs 12"},
      {file(F32x2, '\0\0\0\0'), "tensor 'x': data_offsets [0, 8] run past the data (4 bytes)"},
      {file('{"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', zeros8), "tensor 'x': data_offsets [4, 8] leave a gap"},
      {file('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"y":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', zeros8), "tensor 'y': data_offsets [4, 8] overlap"},
      {file('{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', zeros8), 'the tensors cover 4 bytes of data, but the file holds 8'},
      {file('{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"x":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', zeros8), "a duplicate key 'x'"},
      {file('{"x":{"dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,0]}}', ''), "tensor 'x': shape [4611686018427387904, 4] is too large"},
      {file('{"x":{"dtype":"F32","shape":[2.0],"data_offsets":[0,8]}}', zeros8), "tensor 'x': shape entry 1 is not a size"},
      {file('{"x":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"extra":1}}', zeros8), "tensor 'x': unknown field 'extra'"},
      {file('{"x":{"dtype":"BOOL","shape":[2],"data_offsets":[0,2]}}', '\1\2'), "tensor 'x': bool value 2 is byte 2"},
      {file('{"__metadata__":{"epoch":3}}', ''), "__metadata__ 'epoch' is not a string"},
    }
    for _, case in ipairs(cases) do
      write(path, case[1])
      for _, mmap in ipairs({false, true}) do
        local ok, err = pcall(torch.load_safetensors, path, {mmap = mmap})
        assert.is_false(ok, case[2])
        assert.truthy(err:find('torch.load_safetensors: ' .. path .. ': ', 1, true), err)
        assert.truthy(err:find(case[2], 1, true), err .. '  [wanted: ' .. case[2] .. ']')
      end
    end
  end)
end)
