-- torch.save / torch.load / torch.serialize: round trips of every value kind,
-- sharing and cycles, classes, atomic writes, corrupt files.
local torch = require 'torch'
local nn = require 'nn'

local tmp = os.tmpname()
os.remove(tmp)
os.execute('mkdir -p ' .. tmp)
teardown(function() os.execute('rm -rf ' .. tmp) end)

describe('torch.save and torch.load', function()
  it('round-trip numbers, strings, booleans, nested tables and tensors of every dtype', function()
    local obj = {1, 2.5, 'three', true, false, {nested = {deeper = 'yes'}}, [10] = -7, sz = torch.Size and nil}
    for _, dt in ipairs({'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'}) do
      obj[dt] = (torch.arange(0, 6):view(2, 3) % 2):to(dt)
    end
    obj.empty = torch.zeros(0, 3)
    obj.scalar = torch.tensor(3.5)
    obj.view = torch.arange(0, 12):view(3, 4):t()          -- non-contiguous: saved by value
    local back = torch.deserialize(torch.serialize(obj))
    assert.are.equal(2.5, back[2])
    assert.are.equal(math.type(1), math.type(back[1]))
    assert.are.equal('yes', back[6].nested.deeper)
    assert.are.equal(-7, back[10])
    for _, dt in ipairs({'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'}) do
      assert.are.equal(dt, back[dt].dtype)
      assert.is_true(back[dt]:equal(obj[dt]))
    end
    assert.are.same({0, 3}, back.empty:size():totable())
    assert.are.equal(0, back.scalar:dim())
    assert.is_true(back.view:equal(obj.view))
  end)

  it('keep shared references and cycles, and torch.Size', function()
    local t = torch.ones(2)
    local shared = {x = 1}
    local obj = {a = shared, b = shared, t1 = t, t2 = t, size = t:size()}
    obj.self = obj
    local back = torch.deserialize(torch.serialize(obj))
    assert.is_true(rawequal(back.a, back.b))
    assert.is_true(rawequal(back, back.self))
    assert.is_true(rawequal(back.t1, back.t2))
    assert.is_true(back.size == t:size())
  end)

  it('save modules with their class, and refuse functions naming where', function()
    local m = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    local path = tmp .. '/model.t7'
    torch.save(path, {model = m})
    local back = torch.load(path)
    assert.are.equal('nn.Sequential', torch.typename(back.model))
    local x = torch.randn(4, 3)
    assert.is_true(back.model(x):equal(m(x)))
    local ok, err = pcall(torch.save, path, {a = {f = print}})
    assert.is_false(ok)
    assert.truthy(err:find('cannot save a function at obj.a.f', 1, true), err)
    assert.is_true(torch.load(path).model ~= nil)            -- the old file is intact
  end)

  it('leave the old file whole when the writer is killed mid-save', function()
    local th = os.getenv('TH_BIN')
    for template in package.cpath:gmatch('[^;]+') do
      local dir = template:match('^(.*)/%?%.so$')
      local f = not th and dir and io.open(dir .. '/th', 'rb')
      if f then f:close(); th = dir .. '/th' end
    end
    th = th or './build/th'
    local path = tmp .. '/crash.t7'
    torch.save(path, {generation = 1})
    -- a child saving 200 MB, killed at once with SIGKILL: before, during or after its write
    local script = tmp .. '/writer.lua'
    local f = assert(io.open(script, 'w'))
    f:write(string.format("torch.save(%q, {generation = 2, big = torch.zeros(50000000)})", path))
    f:close()
    for _, delay in ipairs({'0.05', '0.3'}) do
      os.execute(string.format('timeout -s KILL %s %s %s > /dev/null 2>&1', delay, th, script))
      local back = torch.load(path)                      -- loads: the old file or the whole new one
      assert.is_true(back.generation == 1 or (back.generation == 2 and back.big:numel() == 50000000))
    end
    os.execute('rm -f ' .. tmp .. '/crash.t7.tmp.*')
  end)

  it('refuse a map_location other than cpu', function()
    local path = tmp .. '/m.t7'
    torch.save(path, {1})
    assert.are.same({1}, torch.load(path, {map_location = 'cpu'}))
    assert.has_error(function() torch.load(path, {map_location = 'cuda:0'}) end)
  end)

  it('write atomically and leave no temporary files', function()
    local path = tmp .. '/atomic.t7'
    torch.save(path, {v = 1})
    torch.save(path, {v = 2})
    assert.are.equal(2, torch.load(path).v)
    local p = io.popen('ls ' .. tmp)
    local listing = p:read('a')
    p:close()
    assert.falsy(listing:find('tmp', 1, true), listing)
  end)

  it('raise clear errors on corrupt, truncated and foreign files, at every truncation', function()
    local good = torch.serialize({w = torch.randn(3, 3), name = 'x', n = 4})
    for cut = 0, #good - 1 do
      local ok, err = pcall(torch.deserialize, good:sub(1, cut))
      assert.is_false(ok)
      assert.truthy(err:find('torch.load', 1, true), err)
    end
    assert.has_error(function() torch.deserialize('PK\3\4not ours') end)
    local bad = good:sub(1, 10) .. 'Z' .. good:sub(12)
    assert.has_error(function() torch.deserialize(bad) end)
    -- a huge declared size must not allocate
    local body = 'MOONTORCH\2' .. 's' .. string.pack('<I4', 0xFFFFFFF0)
    local huge = body .. string.pack('<I4', torch._crc32(body))      -- a valid checksum over a lie
    local ok, err = pcall(torch.deserialize, huge)
    assert.truthy(err:find('truncated or corrupt', 1, true), err)
    ok, err = pcall(torch.deserialize, bad)
    assert.truthy(err:find('checksum mismatch', 1, true), err)
    ok, err = pcall(torch.deserialize, 'MOONTORCH\9' .. good:sub(11))
    assert.truthy(err:find('format version 9', 1, true), err)
    assert.has_error(function() torch.load(tmp .. '/missing.t7') end)
  end)

  it('resume training bit-identically from a checkpoint', function()
    local optim = require 'optim'
    local function make()
      torch.manual_seed(3)
      local m = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Dropout(0.3), nn.Linear(8, 1))
      return m, optim.Adam(m:parameters(), {lr = 0.01})
    end
    local x, y = torch.randn(16, 4), torch.randn(16, 1)
    local function step(m, o)
      o:zero_grad()
      local loss = nn.MSELoss()(m(x), y)
      loss:backward()
      o:step()
      return loss:item()
    end
    local m1, o1 = make()
    for _ = 1, 3 do step(m1, o1) end
    local path = tmp .. '/ckpt.t7'
    torch.save(path, {model = m1:state_dict(), optim = o1:state_dict(), rng = torch.get_rng_state(), epoch = 3})
    local straight = {}
    for i = 1, 3 do straight[i] = step(m1, o1) end
    local m2, o2 = make()
    local ck = torch.load(path)
    m2:load_state_dict(ck.model)
    o2:load_state_dict(ck.optim)
    torch.set_rng_state(ck.rng)
    for i = 1, 3 do assert.are.equal(straight[i], step(m2, o2)) end
  end)
end)
