-- Files that do not play along (issue 17): torch.save, torch.save_safetensors
-- and graph:save follow symlinks (chains, dangling ones, into another folder)
-- and leave the link be; write character devices in place and refuse other
-- files that are not regular, and NUL bytes; say only the path and the reason
-- when the disk is full. A tensor mapped from a file that then shrinks raises
-- a Lua error when read, on any thread, instead of killing the process.
local torch = require 'torch'
local th = dofile('spec/support/th.lua')

local tmp = os.tmpname()
os.remove(tmp)
os.execute('mkdir -p ' .. tmp)
teardown(function() os.execute('rm -rf ' .. tmp) end)

local function shell(command) return os.execute(command) == true end
local function output(command)
  local p = io.popen(command)
  local text = p:read('a')
  p:close()
  return text
end
local function is_link(path) return shell('test -L ' .. path) end
local function link_text(path) return (output('readlink ' .. path):gsub('\n$', '')) end
-- the names in folder, so that a spec can see no temporary file was left
local function listing(folder) return output('ls -A ' .. folder) end
local root = output('id -u') == '0\n'

-- a fresh folder per case
local count = 0
local function folder()
  count = count + 1
  local dir = tmp .. '/case' .. count
  os.execute('mkdir -p ' .. dir)
  return dir
end

-- the three writers, each saving the number v to path and reading it back
local writers = {
  ['torch.save'] = {
    save = function(path, v) torch.save(path, {v = v}) end,
    load = function(path) return torch.load(path).v end,
  },
  ['torch.save_safetensors'] = {
    save = function(path, v) torch.save_safetensors(path, {v = torch.tensor({v})}) end,
    load = function(path) return torch.load_safetensors(path).v[1] end,
  },
  ['graph:save'] = {                                  -- .dot text: the leaf's size is v
    save = function(path, v) torch.autograd.graph((torch.ones(v, {requires_grad = true}) * 2):sum()):save(path) end,
    load = function(path)
      local f = assert(io.open(path))
      local text = f:read('a')
      f:close()
      return tonumber(text:match('leaf\\n(%d+)'))
    end,
  },
}

describe('writers through symlinks', function()
  it('write the file a link names and keep the link (latest -> ckpt_1)', function()
    for op, w in pairs(writers) do                    -- .dot: graph:save writes the text itself
      local dir = folder()
      w.save(dir .. '/ckpt_1.dot', 1)
      os.execute('ln -s ckpt_1.dot ' .. dir .. '/latest.dot')
      w.save(dir .. '/latest.dot', 2)
      assert.is_true(is_link(dir .. '/latest.dot'), op)
      assert.are.equal('ckpt_1.dot', link_text(dir .. '/latest.dot'), op)
      assert.are.equal(2, w.load(dir .. '/ckpt_1.dot'), op)
      assert.are.equal('ckpt_1.dot\nlatest.dot\n', listing(dir), op)
    end
  end)

  it('follow a chain of links, and a dangling link to the file it will name', function()
    local dir = folder()
    torch.save(dir .. '/ckpt_1', {v = 1})
    os.execute(string.format('ln -s ckpt_1 %s/mid && ln -s %s/mid %s/latest', dir, dir, dir))
    torch.save(dir .. '/latest', {v = 2})
    assert.is_true(is_link(dir .. '/latest') and is_link(dir .. '/mid'))
    assert.are.equal(2, torch.load(dir .. '/ckpt_1').v)
    os.execute('ln -s ckpt_2 ' .. dir .. '/next')                       -- dangling
    torch.save(dir .. '/next', {v = 3})
    assert.is_true(is_link(dir .. '/next'))
    assert.are.equal(3, torch.load(dir .. '/ckpt_2').v)
    assert.are.equal('ckpt_1\nckpt_2\nlatest\nmid\nnext\n', listing(dir))
  end)

  it('make the temporary file beside the target, in another folder or file system', function()
    local dir, other, sibling = folder(), folder(), folder()
    -- /dev/shm is another file system where there is one: a temporary file made
    -- beside the link would not rename into it (EXDEV)
    local shm = shell('test -d /dev/shm -a -w /dev/shm') and output('mktemp -d /dev/shm/moontorch.XXXXXX'):gsub('\n$', '')
    if shm then other = shm end
    os.execute(string.format('ln -s %s/ckpt %s/abs', other, dir))
    os.execute(string.format('ln -s ../%s/ckpt %s/rel', sibling:match('[^/]+$'), dir))
    torch.save(dir .. '/abs', {v = 1})
    torch.save(dir .. '/rel', {v = 2})
    assert.are.equal(1, torch.load(other .. '/ckpt').v)
    assert.are.equal(2, torch.load(sibling .. '/ckpt').v)
    assert.are.equal('ckpt\n', listing(other))
    assert.are.equal('ckpt\n', listing(sibling))
    assert.are.equal('abs\nrel\n', listing(dir))
    if shm then os.execute('rm -rf ' .. shm) end
  end)

  it('refuse a loop of links, naming the op and the path', function()
    local dir = folder()
    os.execute(string.format('ln -s b.dot %s/a.dot && ln -s a.dot %s/b.dot', dir, dir))
    for op, w in pairs(writers) do
      assert.has_error(function() w.save(dir .. '/a.dot', 1) end,
                       op .. ': cannot write ' .. dir .. '/a.dot: Too many levels of symbolic links')
    end
    assert.are.equal('a.dot\nb.dot\n', listing(dir))
  end)
end)

describe('writers and files that are not regular', function()
  it('refuse a directory and a FIFO, naming the op and the path', function()
    local dir = folder()
    os.execute(string.format('mkdir %s/d.dot && mkfifo %s/p.dot && ln -s d.dot %s/to_d.dot', dir, dir, dir))
    for op, w in pairs(writers) do
      for name, kind in pairs({d = 'directory', p = 'FIFO', to_d = 'directory'}) do
        local path = dir .. '/' .. name .. '.dot'
        assert.has_error(function() w.save(path, 1) end,
                         op .. ': cannot write ' .. path .. ': it is a ' .. kind .. ', not a regular file')
      end
    end
    assert.is_true(shell(string.format('test -d %s/d.dot -a -p %s/p.dot -a -L %s/to_d.dot', dir, dir, dir)))
    assert.are.equal('d.dot\np.dot\nto_d.dot\n', listing(dir))
    assert.are.equal('', listing(dir .. '/d.dot'))
  end)

  it('write a character device in place: /dev/null takes it, /dev/full says the disk is full', function()
    local dir = folder()
    os.execute(string.format('ln -s /dev/null %s/null.dot && ln -s /dev/full %s/full.dot', dir, dir))
    for op, w in pairs(writers) do
      w.save(dir .. '/null.dot', 1)
      assert.has_error(function() w.save(dir .. '/full.dot', 1) end,
                       op .. ': cannot write ' .. dir .. '/full.dot: No space left on device')
      assert.is_true(is_link(dir .. '/null.dot') and is_link(dir .. '/full.dot'), op)
    end
    assert.are.equal('full.dot\nnull.dot\n', listing(dir))
    if root and shell(string.format('mknod %s/devnull c 1 3 && mknod %s/devfull c 1 7', dir, dir)) then
      -- as root a rename over a device node succeeds: it must still not happen
      torch.save(dir .. '/devnull', {v = 1})
      assert.has_error(function() torch.save(dir .. '/devfull', {v = 1}) end,
                       'torch.save: cannot write ' .. dir .. '/devfull: No space left on device')
      assert.is_true(shell(string.format('test -c %s/devnull -a -c %s/devfull', dir, dir)))
    end
  end)

  it('say only the path and the reason when the disk is full, at the caller\'s line', function()
    local dir = folder()
    os.execute('ln -s /dev/full ' .. dir .. '/full')
    local line = debug.getinfo(1, 'l').currentline + 1
    local ok, err = pcall(function() torch.save(dir .. '/full', {v = torch.zeros(100000)}) end)
    assert.is_false(ok)
    assert.are.equal(string.format('spec/serialize_safety_spec.lua:%d: torch.save: cannot write %s/full: No space '
                                   .. 'left on device', line, dir), err)
  end)

  it('refuse a file name with a NUL byte rather than write a shorter name', function()
    local dir = folder()
    for op, w in pairs(writers) do
      local path = dir .. '/a\0b.dot'
      assert.has_error(function() w.save(path, 1) end, string.format('%s: the file name %q holds a NUL byte', op, path))
    end
    assert.are.equal('', listing(dir))
  end)

  it('refuse a file name with a NUL byte when loading rather than open another file', function()
    local dir = folder()
    torch.save(dir .. '/a', torch.ones(2))
    torch.save_safetensors(dir .. '/a.st', {w = torch.ones(2)})
    local cut = dir .. '/a\0.st'
    for op, load in pairs({['torch.load'] = torch.load, ['torch.load_safetensors'] = torch.load_safetensors}) do
      local ok, err = pcall(load, cut)
      assert.is_false(ok)
      assert.is_truthy(err:find(op .. ': the file name', 1, true), err)
      assert.is_truthy(err:find('holds a NUL byte', 1, true), err)
    end
    assert.has_error(function() torch._map_file(cut, 'uint8') end)
    assert.has_error(function() torch._read_idx(cut) end)
  end)
end)

describe('tensors mapped from a file that shrinks', function()
  -- A child maps a file, truncates it and reads the tensors each way; a
  -- SIGBUS would kill it, so the parent sees a crash as a failed spec. Every
  -- case runs on a fresh file, and prints the line it sits on and its error.
  local script = [[
local torch = require 'torch'
torch.setnumthreads(4)
local path = arg[1]
local function case(f) return {f = f, line = debug.getinfo(f, 'S').linedefined} end
local cases = {
  {'print', case(function(m) print(m.big) end)},
  {'sum', case(function(m) return m.big:sum() end)},
  {'clone', case(function(m) return m.big:clone() end)},
  {'add', case(function(m) return m.big + 1 end)},
  {'mul_', case(function(m) m.big:mul_(2) end)},
  {'index', case(function(m) return m.big[2][3] end)},
  {'mm', case(function(m) return m.big:mm(torch.ones(1000, 2)) end)},
}
for _, c in ipairs(cases) do
  torch.save_safetensors(path, {big = torch.ones(2000, 1000), small = torch.ones(4)})
  local m = torch.load_safetensors(path, {mmap = true})
  assert(io.open(path, 'w')):close()
  local ok, err = pcall(c[2].f, m)
  print(string.format('%s|%d|%s|%s', c[1], c[2].line, tostring(ok), tostring(err)))
end
print('end')
]]

  it('raises a Lua error at the reading line, naming the file, for every kind of read', function()
    local dir = folder()
    local child, path = dir .. '/child.lua', dir .. '/m.safetensors'
    local f = assert(io.open(child, 'w'))
    f:write(script)
    f:close()
    local ok, out = th.run(child .. ' ' .. path)
    assert.is_true(ok, out)
    assert.truthy(out:find('\nend\n$'), out)
    local seen = 0
    for name, line, passed, err in out:gmatch('([%w_]+)|(%d+)|(%a+)|([^\n]*)') do
      seen = seen + 1
      assert.are.equal('false', passed, name)
      local where = child .. ':' .. line .. ': '
      assert.are.equal(where, err:sub(1, #where), name .. ': ' .. err)
      assert.truthy(err:find('mapped file ' .. path .. ' was truncated after loading', 1, true), err)
    end
    assert.are.equal(7, seen, out)
  end)

  it('leaves a SIGBUS that is not a mapped file\'s to kill the process, as before', function()
    local dir = folder()
    local child, path = dir .. '/child.lua', dir .. '/m.safetensors'
    local f = assert(io.open(child, 'w'))
    f:write(string.format([[
local torch = require 'torch'
torch.save_safetensors(%q, {x = torch.ones(4)})
local m = torch.load_safetensors(%q, {mmap = true})
os.execute('kill -BUS ' .. torch._getpid())
torch._sleep(5)                -- any thread may take the signal: the process dies meanwhile
print('survived')
]], path, path))
    f:close()
    local ok, out = th.run(child)
    assert.is_false(ok)
    assert.falsy(out:find('survived', 1, true), out)
  end)
end)
