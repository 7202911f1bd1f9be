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
    local th = dofile('spec/support/th.lua').path()
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

  it('refuse a map_location other than cpu, mmap, and unknown options', function()
    local path = tmp .. '/m.t7'
    torch.save(path, {1})
    assert.are.same({1}, torch.load(path, {map_location = 'cpu'}))
    assert.are.same({1}, torch.load(path, 'cpu'))
    local cases = {
      {{map_location = 'cuda:0'}, "map_location 'cuda:0' is not available"},
      {{map_location = print}, 'map_location must be a device name'},
      {{mmap = true}, 'torch.load: mmap is not supported for moontorch files'},
      {{weights_onyl = true}, "torch.load: unknown option 'weights_onyl'"},
      {42, 'torch.load: options must be a table'},
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(torch.load, path, case[1])
      assert.is_false(ok)
      assert.truthy(err:find(case[2], 1, true), err)
    end
  end)

  it('leave math.random alone', function()
    math.randomseed(42)
    local want = {math.random(), math.random()}
    math.randomseed(42)
    torch.save(tmp .. '/r.t7', {1})
    assert.are.same(want, {math.random(), math.random()})
  end)

  it('keep requires_grad, and nn.Parameters, so a loaded model trains', function()
    local optim = require 'optim'
    local w = torch.randn(3, {requires_grad = true})
    local back = torch.deserialize(torch.serialize({w = w, y = w * 2, plain = torch.ones(2)}))
    assert.is_true(back.w.requires_grad)
    assert.is_true(back.y.requires_grad and back.y.is_leaf)       -- as PyTorch: a leaf now
    assert.is_false(back.plain.requires_grad)
    local model = torch.deserialize(torch.serialize(nn.Sequential(nn.Linear(3, 2))))
    for _, p in ipairs(model:parameters()) do
      assert.is_true(p.requires_grad and nn.is_parameter(p))
    end
    local before = model[1].weight:clone()
    local opt = optim.SGD(model:parameters(), {lr = 0.1})
    model(torch.randn(4, 3)):sum():backward()
    opt:step()
    assert.is_false(model[1].weight:equal(before))
  end)

  it('save a whole model, optimizer and scheduler, or say to save state_dict()', function()
    local optim = require 'optim'
    torch.manual_seed(1)
    local m = nn.Sequential(nn.Linear(3, 2))
    local o = optim.SGD(m:parameters(), {lr = 0.1, momentum = 0.9})
    local s = optim.lr_scheduler.StepLR(o, 2, 0.5)
    local x = torch.randn(4, 3)
    local function step(mm, oo, ss)
      oo:zero_grad()
      local loss = mm(x):pow(2):sum()
      loss:backward()
      oo:step()
      ss:step()
      return loss:item()
    end
    step(m, o, s)
    local b = torch.deserialize(torch.serialize({m = m, o = o, s = s}))
    assert.is_true(rawequal(b.s.optimizer, b.o))
    assert.is_true(rawequal(b.o.param_groups[1].params[1], b.m:parameters()[1]))
    for _ = 1, 3 do assert.are.equal(step(m, o, s), step(b.m, b.o, b.s)) end
    local lambda = optim.lr_scheduler.LambdaLR(o, function(e) return 0.9 ^ e end)
    local ok, err = pcall(torch.serialize, {sched = lambda})
    assert.is_false(ok)
    assert.truthy(err:find('cannot save a function at obj.sched.lr_lambdas.1 (obj.sched, an object of class '
                           .. 'optim.lr_scheduler.LambdaLR, cannot be saved whole: save its state_dict() instead)', 1, true), err)
  end)

  it('refuse crafted files with clear errors, never a crash or a huge allocation', function()
    local M = 'MOONTORCH\3'
    local function seal(body) return body .. string.pack('<I4', torch._crc32(body)) end
    local function tensor(dtype, shape, nbytes, data)
      local s = M .. 'T' .. string.pack('<s1BB', dtype, 0, #shape)
      for _, d in ipairs(shape) do s = s .. string.pack('<i8', d) end
      return seal(s .. string.pack('<i8', nbytes) .. data)
    end
    local table_of = function(class, n, rest) return seal(M .. 'M' .. string.pack('<s2i4', class, n) .. rest) end
    local cases = {
      {tensor('float32', {1 << 40, 1 << 40}, 16, string.rep('\0', 16)), 'a float32 tensor of size 1099511627776x1099511627776 is too large'},
      {tensor('float32', {10}, 8, string.rep('\0', 8)), '8 bytes of data for a float32 tensor of size 10 (40 bytes)'},
      {tensor('float32', {(1 << 62) + 1}, 4, 'abcd'), 'is too large'},
      {tensor('float32', {0, math.maxinteger}, 0, ''), 'a float32 tensor of size 0x9223372036854775807 is too large'},
      {tensor('float32', {4}, -16, ''), 'a negative byte count -16'},
      {tensor('float32', {4}, -1, ''), 'a negative byte count -1'},
      {tensor('float32', {4}, 1 << 40, ''), 'tensor data needs 1099511627776 bytes'},
      {tensor('complex999', {1}, 4, 'abcd'), "unknown dtype 'complex999'"},
      {tensor('bool', {3}, 3, '\5\0\1'), 'bool value 1 is byte 5'},
      {seal(M .. 'T' .. string.pack('<s1BB', 'float32', 9, 0) .. string.pack('<i8', 4) .. 'abcd'), 'tensor flags 9'},
      {table_of('', 0x7fffffff, ''), 'a table of 2147483647 entries'},
      {table_of('', 1, 'nn'), 'a nil key'},
      {table_of('', 1, 'd' .. string.pack('<d', 0 / 0) .. 'n'), 'a NaN key'},
      {seal(M .. 'R' .. string.pack('<i4', 5)), 'a reference to an unknown object 5'},
      {seal(M .. 'Q'), 'unknown tag "Q"'},
      {seal(M .. 'nn'), '1 bytes after its value'},
      {seal(M .. string.rep('M' .. string.pack('<s2i4', '', 1) .. 'i' .. string.pack('<i8', 1), 20000) .. 'n'),
       'tables nest deeper than 10000 levels'},
      {table_of('os.exit', 0, ''), "holds an object of class 'os.exit', which is not defined"},
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(torch.deserialize, case[1])
      assert.is_false(ok, case[2])
      assert.truthy(err:find('^torch%.load: string'), err)
      assert.truthy(err:find(case[2], 1, true), err .. '  [wanted: ' .. case[2] .. ']')
    end
  end)

  it('require only the packages of torch.load_packages to find a class', function()
    local pkg_dir = tmp .. '/pkgs'
    os.execute('mkdir -p ' .. pkg_dir)
    local f = assert(io.open(pkg_dir .. '/evilpkg.lua', 'w'))
    f:write('EVILPKG_RAN = true; torch.class("evilpkg.Thing"); return {}')
    f:close()
    local saved_path = package.path
    package.path = pkg_dir .. '/?.lua;' .. package.path
    local bytes = torch.serialize({})
    bytes = bytes:sub(1, 11) .. string.pack('<s2', 'evilpkg.Thing') .. bytes:sub(14, -5)
    bytes = bytes .. string.pack('<I4', torch._crc32(bytes))
    local ok, err = pcall(torch.deserialize, bytes)
    package.path = saved_path
    assert.is_false(ok)
    assert.is_nil(rawget(_G, 'EVILPKG_RAN'))
    assert.truthy(err:find("class 'evilpkg.Thing', which is not defined", 1, true), err)
    -- nn is on the list: a file holding nn modules loads in a fresh process that has not required nn
    assert.is_true(torch.load_packages.nn)
  end)

  it('bound nesting on save too, and build the path only for errors (no quadratic memory)', function()
    local list = nil
    for i = 1, 9000 do list = {next = list, i = i} end
    collectgarbage()
    collectgarbage('stop')
    local before = collectgarbage('count')
    local bytes = torch.serialize(list)
    local used_kb = collectgarbage('count') - before
    collectgarbage('restart')
    assert.is_true(used_kb < 16 * 1024, used_kb .. ' KB')   -- a path string per value would take ~300 MB
    local back = torch.deserialize(bytes)
    assert.are.equal(9000, back.i)
    assert.are.equal(1, back.next.next.next.i == 8997 and 1 or 0)
    for i = 9001, 10001 do list = {next = list, i = i} end
    local ok, err = pcall(torch.serialize, list)
    assert.is_false(ok)
    assert.truthy(err:find('torch.save: tables nest deeper than 10000 levels at obj.next.next.next.next.next...', 1, true), err)
  end)

  it('give sizes in C errors as numbers (Lua messages have no %zu)', function()
    local a, b = torch._socketpair()
    local ok, err = pcall(torch._send_msg, a, string.rep('x', (1 << 20) + 1))
    torch._close(a)
    torch._close(b)
    assert.is_false(ok)
    assert.truthy(err:find('DataLoader: a message of 1048601 bytes is too large', 1, true), err)
    ok, err = pcall(torch._tensor_from_bytes, 'abc', 'float32', {1}, 'torch.load: x')
    assert.truthy(err:find('torch.load: x: 3 bytes of data for a float32 tensor of size 1 (4 bytes)', 1, true), err)
  end)

  it('read files of format version 2 (no tensor flags)', function()
    local body = 'MOONTORCH\2' .. 'T' .. string.pack('<s1B', 'int16', 1) .. string.pack('<i8', 2) .. string.pack('<s8', string.pack('<i2i2', 7, -3))
    local t = torch.deserialize(body .. string.pack('<I4', torch._crc32(body)))
    assert.are.same({7, -3}, t:totable())
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
      local o = optim.Adam(m:parameters(), {lr = 0.01})
      return m, o, optim.lr_scheduler.StepLR(o, 2, 0.5)
    end
    local x, y = torch.randn(16, 4), torch.randn(16, 1)
    local function step(m, o, s)
      o:zero_grad()
      local loss = nn.MSELoss()(m(x), y)
      loss:backward()
      o:step()
      s:step()
      return loss:item()
    end
    local m1, o1, s1 = make()
    for _ = 1, 3 do step(m1, o1, s1) end
    local path = tmp .. '/ckpt.t7'
    torch.save(path, {model = m1:state_dict(), optim = o1:state_dict(), sched = s1:state_dict(),
                      rng = torch.get_rng_state(), epoch = 3})
    local straight = {}
    for i = 1, 3 do straight[i] = step(m1, o1, s1) end
    local m2, o2, s2 = make()
    local ck = torch.load(path)
    m2:load_state_dict(ck.model)
    o2:load_state_dict(ck.optim)
    s2:load_state_dict(ck.sched)
    torch.set_rng_state(ck.rng)
    assert.are.equal(3, ck.epoch)
    for i = 1, 3 do assert.are.equal(straight[i], step(m2, o2, s2)) end
    assert.are.equal(o1.param_groups[1].lr, o2.param_groups[1].lr)
  end)
end)
