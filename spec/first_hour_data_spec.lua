-- first_hour_data_spec.lua: what a new user tries first with lib/data and th's
-- prompt (issue 21): every natural loop over a loader, dataset or sampler
-- makes one pass or says which form works; Dataset/Sampler:extend; progress
-- bars timed from the loop's start (on a fake clock); the REPL's lazy nn,
-- optim and data, the bare word help and torch.optim.
local torch = require 'torch'
local data = require 'data'
local th_bin = dofile('spec/support/th.lua').path

-- a dataset of n items {x = i} that counts its get calls
local function counting(n)
  local C = data.Dataset:extend('Counting')
  function C:__init(k) self.k, self.calls = k, 0 end
  function C:size() return self.k end
  function C:get(i)
    self.calls = self.calls + 1
    return {x = i}
  end
  return C(n)
end

-- the first item of each batch (a batch of counting's items collates to {x = tensor})
local function firsts(list)
  local out = {}
  for k, b in ipairs(list) do out[k] = b.x[1] end
  return out
end

local function sorted(t)
  local c = {table.unpack(t)}
  table.sort(c)
  return c
end

local function range(a, b)
  local out = {}
  for i = a, b do out[#out + 1] = i end
  return out
end

describe('iterating a DataLoader', function()
  it('ipairs(loader) yields #loader batches numbered from 1, as loader:iter() does', function()
    local loader = data.DataLoader(counting(7), {batch_size = 3})
    assert.are.equal(3, #loader)
    local seen, idx = {}, {}
    for i, batch in ipairs(loader) do
      idx[#idx + 1] = i
      seen[#seen + 1] = batch
    end
    assert.are.same({1, 2, 3}, idx)
    assert.are.same({1, 4, 7}, firsts(seen))
    assert.are.same({7}, seen[3].x:totable())                -- the last, short batch
  end)

  it('for batch in loader and pairs(loader) make the same pass', function()
    local loader = data.DataLoader(counting(7), {batch_size = 3})
    local got = {}
    for batch in loader do got[#got + 1] = batch end
    assert.are.same({1, 4, 7}, firsts(got))
    local keys, vals = {}, {}
    for i, batch in pairs(loader) do keys[#keys + 1], vals[#vals + 1] = i, batch end
    assert.are.same({1, 2, 3}, keys)
    assert.are.same({1, 4, 7}, firsts(vals))
  end)

  it('a shuffled loader: an ipairs loop is exactly one pass of its iterator', function()
    local function loader()
      return data.DataLoader(counting(10), {batch_size = 1, shuffle = true,
                                            generator = torch.Generator():manual_seed(7)})
    end
    local by_iter, by_ipairs, by_call = {}, {}, {}
    for _, b in loader():iter() do by_iter[#by_iter + 1] = b.x[1] end
    for _, b in ipairs(loader()) do by_ipairs[#by_ipairs + 1] = b.x[1] end
    for b in loader() do by_call[#by_call + 1] = b.x[1] end
    assert.are.same(range(1, 10), sorted(by_iter))           -- every item once
    assert.are.same(by_iter, by_ipairs)
    assert.are.same(by_iter, by_call)
  end)

  it('a loop left by break, started again, is a new whole pass', function()
    local ds = counting(6)
    local loader = data.DataLoader(ds, {batch_size = 2})
    for i in ipairs(loader) do if i == 2 then break end end
    local again = {}
    for i, b in ipairs(loader) do again[i] = b end
    assert.are.same({1, 3, 5}, firsts(again))
    assert.are.equal(4 + 6, ds.calls)                           -- the abandoned pass read no further
    for b in loader do if b.x[1] == 3 then break end end
    again = {}
    for b in loader do again[#again + 1] = b end
    assert.are.same({1, 3, 5}, firsts(again))
  end)

  it('nested ipairs over one loader raises at the caller, naming the form that works', function()
    local loader = data.DataLoader(counting(4), {batch_size = 2})
    local ok, err = pcall(function()
      for _ in ipairs(loader) do
        for _ in ipairs(loader) do end
      end
    end)
    assert.is_false(ok)
    assert.truthy(err:find('first_hour_data_spec.lua:%d+: data.DataLoader: loader%[2%]: batches are read in order'), err)
    assert.truthy(err:find('`for i, batch in loader:iter() do`', 1, true), err)
    -- read at random: the same error
    assert.has_error(function() return loader[3] end)
  end)

  it('nested loops that each get a pass of their own: for batch in loader, or ipairs around iter()', function()
    local loader = data.DataLoader(counting(3), {batch_size = 1})
    local pairs_seen = {}
    for a in loader do
      for b in loader do pairs_seen[#pairs_seen + 1] = a.x[1] * 10 + b.x[1] end
    end
    assert.are.same({11, 12, 13, 21, 22, 23, 31, 32, 33}, pairs_seen)
    pairs_seen = {}
    for _, a in ipairs(loader) do
      for _, b in loader:iter() do pairs_seen[#pairs_seen + 1] = a.x[1] * 10 + b.x[1] end
    end
    assert.are.same({11, 12, 13, 21, 22, 23, 31, 32, 33}, pairs_seen)
  end)

  it('an empty loader runs no iteration in any form', function()
    local loader = data.DataLoader(data.TensorDataset(torch.ones(0, 2)), {batch_size = 2})
    assert.are.equal(0, #loader)
    local n = 0
    for _ in ipairs(loader) do n = n + 1 end
    for _ in loader do n = n + 1 end
    for _ in pairs(loader) do n = n + 1 end
    assert.are.equal(0, n)
  end)

  it('a worker loader: ipairs gives the batches of num_workers = 0, and starts over after break', function()
    local x = torch.arange(1, 11)
    local plain = data.DataLoader(data.TensorDataset(x), {batch_size = 3})
    local workers = data.DataLoader(data.TensorDataset(x), {batch_size = 3, num_workers = 2})
    local a, b = {}, {}
    for i, batch in ipairs(plain) do a[i] = batch[1]:totable() end
    for i in ipairs(workers) do if i == 1 then break end end
    for i, batch in ipairs(workers) do b[i] = batch[1]:totable() end
    assert.are.same({{1, 2, 3}, {4, 5, 6}, {7, 8, 9}, {10}}, a)
    assert.are.same(a, b)
  end)

  it('an iterable dataset streams through ipairs(loader) and for batch in loader', function()
    local Count = data.IterableDataset:extend('Count')
    function Count:iter()
      local i = 0
      return function()
        i = i + 1
        if i <= 5 then return i end
      end
    end
    local loader = data.DataLoader(Count(), {batch_size = 2})
    local got = {}
    for i, b in ipairs(loader) do got[i] = b:totable() end
    assert.are.same({{1, 2}, {3, 4}, {5}}, got)
    got = {}
    for b in loader do got[#got + 1] = b:totable() end
    assert.are.same({{1, 2}, {3, 4}, {5}}, got)
  end)

  it('calling a loader as a function says how to loop', function()
    local loader = data.DataLoader(counting(2))
    local ok, err = pcall(function() return loader(1) end)
    assert.is_false(ok)
    assert.truthy(err:find('first_hour_data_spec.lua:%d+: data.DataLoader: loader%(...%) is not a function call; ' ..
                           'iterate with `for batch in loader do`'), err)
  end)

  it('for i, batch in loader and for x, y in loader (two names for one value) say what to write', function()
    local loader = data.DataLoader(data.TensorDataset(torch.ones(4, 2), torch.zeros(4)), {batch_size = 2})
    local expect = 'first_hour_data_spec.lua:%d+: data.DataLoader: `for batch in loader do` gives one value, ' ..
                   'the batch: write `for i, batch in ipairs%(loader%) do` for its number too, and ' ..
                   '`local x, y = batch%[1%], batch%[2%]` for its parts'
    local ok, err = pcall(function() for _, batch in loader do local _ = batch[1] end end)
    assert.is_false(ok)
    assert.truthy(err:find(expect), err)
    ok, err = pcall(function() for _, y in loader do return y:size() end end)
    assert.is_false(ok)
    assert.truthy(err:find(expect), err)
  end)

  it('printing a loader, dataset or sampler shows what it is and draws nothing', function()
    local ds = counting(7)
    local loader = data.DataLoader(ds, {batch_size = 3, shuffle = true})
    assert.are.equal('data.DataLoader(Counting (7 items), batch_size=3, shuffle=true): 3 batches', tostring(loader))
    assert.are.equal('data.RandomSampler (7 indices)', tostring(loader.sampler))
    assert.are.equal(0, ds.calls)
  end)
end)

describe('iterating datasets and samplers', function()
  it('a map-style dataset: ipairs, for item in ds, pairs, #ds', function()
    local ds = data.TensorDataset(torch.tensor({10, 20, 30}))
    assert.are.equal(3, #ds)
    local a, b, c = {}, {}, {}
    for i, item in ipairs(ds) do a[i] = item[1] end
    for item in ds do b[#b + 1] = item[1] end
    for i, item in pairs(ds) do c[i] = item[1] end
    assert.are.same({10, 20, 30}, a)
    assert.are.same(a, b)
    assert.are.same(a, c)
    assert.is_nil(ds[4])
    assert.is_nil(ds[0])
  end)

  it('samplers: each loop form makes one pass, a random one a fresh permutation', function()
    local s = data.SequentialSampler(4)
    local a, b, c = {}, {}, {}
    for k, idx in ipairs(s) do a[k] = idx end
    for idx in s do b[#b + 1] = idx end
    for k, idx in pairs(s) do c[k] = idx end
    assert.are.same({1, 2, 3, 4}, a)
    assert.are.same(a, b)
    assert.are.same(a, c)
    local r = data.RandomSampler(6, {generator = torch.Generator():manual_seed(3)})
    local p = {}
    for _, idx in ipairs(r) do p[#p + 1] = idx end
    assert.are.same(range(1, 6), sorted(p))
    -- nested loops with numbers at equal values cannot be told apart: an error, not a guess
    local ok, err = pcall(function() for _ in s do for _ in s do end end end)
    assert.is_false(ok)
    assert.truthy(err:find('`for idx in sampler:iter() do`', 1, true), err)
  end)
end)

describe('one way to subclass: :extend', function()
  it('data.Dataset:extend makes a dataset class a loader takes', function()
    local Squares = data.Dataset:extend('Squares')
    function Squares:__init(n) self.n = n end
    function Squares:size() return self.n end
    function Squares:get(i) return i * i end
    local ds = Squares(4)
    assert.are.equal('Squares', torch.typename(ds))
    assert.are.equal(4, #ds)
    assert.are.equal(9, ds[3])
    assert.are.equal('Squares (4 items)', tostring(ds))
    local got = {}
    for _, b in ipairs(data.DataLoader(ds, {batch_size = 2})) do got[#got + 1] = b:totable() end
    assert.are.same({{1, 4}, {9, 16}}, got)
    -- a class made that way extends again, and the base's errors name the class
    local Cubes = Squares:extend('Cubes')
    function Cubes:get(i) return i ^ 3 end
    assert.are.equal(27, Cubes(3)[3])
    local Bare = data.Dataset:extend('Bare')
    assert.has_error(function() return Bare()[1] end, 'Bare: define __len or size()')
    -- the name is optional; a non-string raises at the caller
    assert.are.equal('data.Dataset subclass', torch.typename(data.Dataset:extend()()))
    local ok, err = pcall(function() return data.Dataset:extend(3) end)
    assert.is_false(ok)
    assert.truthy(err:find('first_hour_data_spec.lua:%d+: data.Dataset:extend: expects a class name'), err)
  end)

  it('data.Sampler:extend and data.IterableDataset:extend', function()
    local Evens = data.Sampler:extend('Evens')
    function Evens:__init(n) self.n = n end
    function Evens:size() return self.n // 2 end
    function Evens:iter()
      local i = 0
      return function()
        i = i + 2
        if i <= self.n then return i end
      end
    end
    assert.are.same({2, 4, 6}, Evens(6):indices())
    local ds = data.TensorDataset(torch.arange(1, 7))
    local got = {}
    for _, b in ipairs(data.DataLoader(ds, {sampler = Evens(6), batch_size = 3})) do got[#got + 1] = b[1]:totable() end
    assert.are.same({{2, 4, 6}}, got)
    local Letters = data.IterableDataset:extend('Letters')
    function Letters:iter() return ('abc'):gmatch('.') end
    local s = {}
    for ch in Letters() do s[#s + 1] = ch end
    assert.are.same({'a', 'b', 'c'}, s)
  end)

  it('torch.class subclasses read items as before', function()
    local C = torch.class('first_hour.Thrice', 'data.Dataset', {})
    function C:size() return 2 end
    function C:get(i) return 3 * i end
    local got = {}
    for i, v in ipairs(C()) do got[i] = v end
    assert.are.same({3, 6}, got)
  end)
end)

-- progress on a fake clock: its lines captured (print) and drawn (io.write)
local function capture(fn)
  local lines, saved = {}, _G.print
  _G.print = function(s) lines[#lines + 1] = s end   -- (progress prints through the global)
  local ok, err = pcall(fn)
  _G.print = saved
  assert(ok, err)
  return lines
end

describe('torch.progress', function()
  it('times a wrapped loader from the loop start: elapsed, rate and ETA right from step 1', function()
    local t = 0
    local clock = function() return t end
    local Slow = data.Dataset:extend('Slow')
    function Slow:size() return 10 end
    function Slow:get(i)
      if i == 1 then t = t + 4 end                   -- the first batch takes 4 s to come
      return i
    end
    local loader = data.DataLoader(Slow(), {batch_size = 1})
    local steps = 0
    local lines = capture(function()
      for i, batch in torch.progress(loader, {clock = clock, tty = false, text = function() return 'loss ' .. steps end}) do
        assert.are.equal(i, batch[1])
        steps = steps + 1
        t = t + 2                                      -- each step's body: 2 s
      end
    end)
    assert.are.equal(10, steps)
    assert.are.equal(10, #lines)                       -- a line at each tenth, n = 10: every step
    -- step k done at 4 + 2k s: rate k / (4 + 2k), ETA (10 - k) / rate
    for k = 1, 10 do
      local elapsed = 4 + 2 * k
      local rate = k / elapsed
      local eta = math.floor((10 - k) / rate + 0.5)
      local expect = string.format(' %d/10 (%d%%)  %.1f it/s  %d:%02d elapsed, %d:%02d left  loss %d', k, 10 * k,
                                   rate, elapsed // 60, elapsed % 60, eta // 60, eta % 60, k)
      assert.are.equal(expect, lines[k])
    end
  end)

  it('prints a plain line as each tenth is reached, evenly', function()
    local lines = capture(function()
      for _ in torch.progress(25, {clock = function() return 0 end, tty = false}) do end
    end)
    local at = {}
    for _, l in ipairs(lines) do at[#at + 1] = tonumber(l:match('^ (%d+)/25')) end
    -- ceil(25 k / 10), k = 1..10
    assert.are.same({3, 5, 8, 10, 13, 15, 18, 20, 23, 25}, at)
  end)

  it('redraws a terminal line at most ten times a second, and the last step always', function()
    local t, writes = 0, {}
    local saved = io.write
    io.write = function(...) for _, s in ipairs({...}) do writes[#writes + 1] = s end end
    local ok, err = pcall(function()
      for _ in torch.progress(40, {clock = function() return t end, tty = true}) do t = t + 1 / 32 end
    end)
    io.write = saved
    assert(ok, err)
    local drawn = {}
    for _, s in ipairs(writes) do
      local i = s:match('^\r %[[=.]+%] (%d+)/40')
      if i then drawn[#drawn + 1] = tonumber(i) end
    end
    -- 1/32 s a step: steps 1, 5, 9, ... (at least 0.1 s apart), and 40
    assert.are.same({1, 5, 9, 13, 17, 21, 25, 29, 33, 37, 40}, drawn)
    assert.are.equal('\n', writes[#writes])
  end)

  it('wraps any iterable: a number, a Lua array, a dataset, a sampler, a function; n takes the first n', function()
    local quiet = {clock = function() return 0 end, tty = false}
    capture(function()
      local got = {}
      for i in torch.progress(3, quiet) do got[#got + 1] = i end
      assert.are.same({1, 2, 3}, got)
      got = {}
      for i, v in torch.progress({'a', 'b'}, quiet) do got[i] = v end
      assert.are.same({'a', 'b'}, got)
      got = {}
      for i, item in torch.progress(data.TensorDataset(torch.tensor({5, 6})), quiet) do got[i] = item[1] end
      assert.are.same({5, 6}, got)
      got = {}
      for idx in torch.progress(data.SequentialSampler(3), quiet) do got[#got + 1] = idx end
      assert.are.same({1, 2, 3}, got)
      got = {}
      for i in torch.progress(data.SequentialSampler(100), 4, quiet) do got[#got + 1] = i end
      assert.are.same({1, 2, 3, 4}, got)
    end)
    -- a stream of unknown length: lines at 1, 2, 5, 10, 20, ... and at the end
    local lines = capture(function()
      local k = 0
      for _ in torch.progress(function() k = k + 1; if k <= 12 then return k end end, quiet) do end
    end)
    local at = {}
    for _, l in ipairs(lines) do at[#at + 1] = tonumber(l:match('^ (%d+) ')) end
    assert.are.same({1, 2, 5, 10, 12}, at)
    local ok, err = pcall(function() local _ = torch.progress(true) end)
    assert.is_false(ok)
    assert.truthy(err:find('first_hour_data_spec.lua:%d+: torch.progress: expected %(i, n%), a loader, dataset, ' ..
                           'sampler, Lua array, number of steps or iterator function, got boolean'), err)
  end)

  it('the (i, n) form: progress(0, n) starts the clock at the loop start', function()
    local t = 0
    local lines = capture(function()
      torch.progress(0, 10, {clock = function() return t end, tty = false})
      for i = 1, 10 do
        t = t + 1
        if i % 5 == 0 then torch.progress(i, 10, {clock = function() return t end, tty = false}) end
      end
    end)
    assert.are.same({' 5/10 (50%)  1.0 it/s  0:05 elapsed, 0:05 left',
                     ' 10/10 (100%)  1.0 it/s  0:10 elapsed, 0:00 left'}, lines)
  end)
end)

-- ---- th's prompt ----
local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function th(args, input)
  local cmd = 'printf %s ' .. shell_quote(input or '') .. ' | ' .. th_bin() .. ' ' .. args .. ' 2>&1'
  local p = io.popen(cmd)
  local out = p:read('a')
  p:close()
  return out
end

describe("th's prompt", function()
  it('loads nn, optim and data on first use of the global', function()
    local out = th('-i', '?nn.Linear\nnn.Linear(2, 3)\noptim.SGD\ndata.DataLoader\ntorch.optim == optim\n')
    assert.truthy(out:find('th> ?nn.Linear\nnn.Linear(in_features, out_features', 1, true), out)
    assert.truthy(out:find('Linear(in_features=2, out_features=3, bias=true)', 1, true), out)
    assert.truthy(out:find('th> optim.SGD\noptim.SGD\n', 1, true), out)
    assert.truthy(out:find('th> data.DataLoader\ndata.DataLoader\n', 1, true), out)
    assert.truthy(out:find('th> torch.optim == optim\ntrue\n', 1, true), out)
    assert.falsy(out:find('nil value', 1, true), out)
  end)

  it('prints help for the bare word help, as for help()', function()
    local out = th('-i', 'help\nhelp()\nhelp = 3\nhelp\n')
    local _, n = out:gsub('help%(f%) or %?f prints the documentation', '')
    assert.are.equal(2, n, out)
    assert.truthy(out:find("a script requires them: local nn = require 'nn'", 1, true), out)
    assert.truthy(out:find('th> help\n3\n', 1, true), 'a user value named help prints as itself:\n' .. out)
  end)

  it('prints a loader without drawing a batch', function()
    local out = th('-i', "loader = data.DataLoader(data.TensorDataset(torch.ones(5, 2)), {batch_size = 2})\n" ..
                         "loader\n")
    assert.truthy(out:find('th> loader\ndata.DataLoader(data.TensorDataset (5 items), batch_size=2): 3 batches\n',
                           1, true), out)
  end)

  it('scripts see no lazy globals, but torch.nn and torch.optim are the libraries', function()
    local out = th([[-e "print(nn, optim, data); print(torch.optim.Adam, torch.nn.Linear, torch.data.DataLoader)"]])
    assert.are.equal('nil\tnil\tnil\noptim.Adam\tnn.Linear\tdata.DataLoader\n', out)
    out = th([[-e "require 'optim'; print(torch.optim == optim)"]])
    assert.are.equal('true\n', out)
  end)

  it('the banner on a terminal says help(), and Tab completes the lazy globals', function()
    if os.execute('command -v script > /dev/null 2>&1') ~= true then
      pending('script(1) from util-linux is not installed: the banner not checked')
      return
    end
    local home = os.tmpname()
    os.remove(home)
    os.execute('mkdir -p ' .. home)
    local p = io.popen('(sleep 0.5; printf "nn.LogSi\\t\\n"; sleep 0.3; printf "\\004") | HOME=' .. home ..
                       ' NO_COLOR=1 script -qfec ' ..
                       shell_quote('exec ' .. shell_quote(th_bin())) .. ' /dev/null 2>&1')
    local out = p:read('a')
    p:close()
    os.execute('rm -rf ' .. home)
    assert.truthy(out:find('help() for help', 1, true), out)
    out = out:gsub('\27%[[%d;?]*[%a@]', ''):gsub('\r', '')
    assert.truthy(out:find('th> nn.LogSigmoid\nnn.LogSigmoid\n', 1, true), out)
  end)
end)
