-- Files that do not play along (issue 17): a tensor mapped from a file that
-- then shrinks raises a Lua error when read, on any thread, instead of
-- killing the process.
local torch = require 'torch'
local th = dofile('spec/support/th.lua')

local tmp = os.tmpname()
os.remove(tmp)
os.execute('mkdir -p ' .. tmp)
teardown(function() os.execute('rm -rf ' .. tmp) end)

-- a fresh folder per case
local count = 0
local function folder()
  count = count + 1
  local dir = tmp .. '/case' .. count
  os.execute('mkdir -p ' .. dir)
  return dir
end

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
