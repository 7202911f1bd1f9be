-- memory_snapshot_spec.lua: torch.memory_snapshot lists the live storages
-- (size, dtype, shape, device, and the Lua line that allocated them while
-- torch.memory._record_history was on); torch.memory.summary; and the leak
-- hunt of docs/profiling.md (Memory): `total = total + loss` keeping every
-- step's graph and its saved tensors.
local torch = require 'torch'
local nn = require 'nn'

local THIS = debug.getinfo(1, 'S').short_src     -- this file, as frames name it

local function escape(s) return (s:gsub('%p', '%%%0')) end

-- whether frame is this file's line
local function at_line(frame, line)
  return frame ~= nil and frame:match('^' .. escape(THIS) .. ':' .. line .. ' in ') ~= nil
end

-- the snapshot's entries (or groups) allocated at this file's line
local function at(list, line)
  local found = {}
  for _, e in ipairs(list) do
    if at_line(e.site, line) then found[#found + 1] = e end
  end
  return found
end

local function recording(fn)
  torch.memory._record_history(true)
  local ok, err = pcall(fn)
  torch.memory._record_history(false)
  assert(ok, err)
end

describe('torch.memory_snapshot', function()
  it('lists a storage allocated while recording with its size, dtype, shape, device and line', function()
    local x, line
    recording(function()
      x = torch.zeros(7, 3, {dtype = 'float64'}); line = debug.getinfo(1, 'l').currentline
    end)
    local found = at(torch.memory_snapshot(), line)
    assert.are.equal(1, #found)
    local e = found[1]
    assert.are.equal(7 * 3 * 8, e.bytes)
    assert.are.equal('float64', e.dtype)
    assert.are.same({7, 3}, e.shape)
    assert.are.equal('cpu', e.device)
    assert.is_true(at_line(e.frames[1], line), e.frames[1])
    assert.are.equal(e.frames[1], e.site)
    assert.are.equal(e.frames[1], e.full_frames[1])       -- torch.zeros is C: no library frame
    assert.is_true(#e.full_frames >= 2)                   -- the function here, and pcall's caller
    assert.is_true(x ~= nil)
  end)

  it('gives storages allocated while not recording no frames, and their element count as shape', function()
    local x = torch.empty(11, 13, {dtype = 'int16'})
    local found = {}
    for _, e in ipairs(torch.memory_snapshot()) do
      if e.bytes == 11 * 13 * 2 and e.dtype == 'int16' then found[#found + 1] = e end
    end
    assert.are.equal(1, #found)
    assert.is_nil(found[1].frames)
    assert.is_nil(found[1].site)
    assert.are.same({11 * 13}, found[1].shape)
    assert.are.equal(11, x:size(1))
  end)

  it("shows the user's line for storages allocated inside lib/, and keeps the full traceback", function()
    local lin = nn.Linear(5, 9)
    local x = torch.randn(4, 5)
    local y, line
    recording(function()
      y = lin(x); line = debug.getinfo(1, 'l').currentline
    end)
    local found = at(torch.memory_snapshot(), line)
    assert.are.equal(1, #found)
    assert.are.same({4, 9}, found[1].shape)
    assert.is_true(at_line(found[1].frames[1], line))
    assert.truthy(found[1].full_frames[1]:find('lib/nn/', 1, true), found[1].full_frames[1])
    assert.is_true(#found[1].full_frames > #found[1].frames)
    for _, f in ipairs(found[1].frames) do assert.falsy(f:find('lib/nn/', 1, true), f) end
    assert.is_true(y ~= nil)
  end)

  it('forgets a storage once it is freed, and records nothing once recording stops', function()
    local keep, line_freed, line_after = {}, nil, nil
    recording(function()
      for i = 1, 100 do keep[i] = torch.ones(3); line_freed = debug.getinfo(1, 'l').currentline end
    end)
    keep = nil
    local after = torch.ones(6); line_after = debug.getinfo(1, 'l').currentline
    local snap = torch.memory_snapshot()
    assert.are.equal(0, #at(snap, line_freed))
    assert.are.equal(0, #at(snap, line_after))
    assert.are.equal(6, after:size(1))
  end)

  it('lists the largest first, and groups by site', function()
    local a, b, la, lb
    recording(function()
      a = {}
      for i = 1, 3 do a[i] = torch.zeros(1000); la = debug.getinfo(1, 'l').currentline end
      b = torch.zeros(5); lb = debug.getinfo(1, 'l').currentline
    end)
    local snap = torch.memory_snapshot()
    for i = 2, #snap do assert.is_true(snap[i - 1].bytes >= snap[i].bytes) end
    local groups = torch.memory_snapshot({group_by = 'site'})
    for i = 2, #groups do assert.is_true(groups[i - 1].bytes >= groups[i].bytes) end
    local ga, gb = at(groups, la), at(groups, lb)
    assert.are.equal(1, #ga)
    assert.are.equal(3, ga[1].count)
    assert.are.equal(3 * 4000, ga[1].bytes)
    assert.are.equal(3, #ga[1].storages)
    assert.are.equal(ga[1].site, ga[1].frames[1])
    assert.are.equal(1, gb[1].count)
    assert.are.equal(20, gb[1].bytes)
    local total = 0
    for _, g in ipairs(groups) do total = total + g.count end
    assert.are.equal(#snap, total)
    assert.is_true(a ~= nil and b ~= nil)
  end)

  it('never lists more CPU bytes than the allocator holds, with threads computing', function()
    torch.setnumthreads(2)
    local conv = nn.Conv2d(3, 8, 3)
    local x = torch.randn(4, 3, 32, 32, {requires_grad = true})
    recording(function()
      for _ = 1, 3 do conv(x):sum():backward() end
    end)
    torch.setnumthreads(1)
    local snap = torch.memory_snapshot()
    local bytes = 0
    for _, e in ipairs(snap) do
      assert.are.equal('number', type(e.bytes))
      if e.device == 'cpu' and not e.mapped then bytes = bytes + e.bytes end
    end
    assert.is_true(bytes <= torch.memory_stats().allocated, bytes .. ' > ' .. torch.memory_stats().allocated)
  end)

  it('refuses bad options and values, naming the function and the caller line', function()
    local cases = {
      {function() torch.memory_snapshot({group_by = 'line'}) end, "torch.memory_snapshot: group_by must be 'site', got 'line'"},
      {function() torch.memory_snapshot({grouped = true}) end, 'torch.memory_snapshot: unknown option grouped (it takes collect, group_by)'},
      {function() torch.memory_snapshot(3) end, 'torch.memory_snapshot: options must be a table, got number'},
      {function() torch.memory._record_history('yes') end,
       "torch.memory._record_history: enabled must be true, false, nil, 'all' or 'state', got 'yes'"},
      {function() torch.memory._record_history(1) end,
       "torch.memory._record_history: enabled must be true, false, nil, 'all' or 'state', got 1"},
      {function() torch.memory._record_history(true, 'all') end, 'torch.memory._record_history: takes one argument (enabled), got 2'},
      {function() torch.memory.summary({row_limit = 1.5}) end, 'torch.memory.summary: row_limit must be a non-negative integer, got 1.5'},
      {function() torch.memory.summary({rows = 3}) end, 'torch.memory.summary: unknown option rows (it takes collect, row_limit)'},
    }
    for _, c in ipairs(cases) do
      local ok, err = pcall(c[1])
      assert.is_false(ok)
      local line = debug.getinfo(c[1], 'S').linedefined
      assert.are.equal(THIS .. ':' .. line .. ': ' .. c[2], err)
    end
  end)

  it('lists GPU storages with their device', function()
    if not torch.cuda.is_available() then
      pending('no GPU here (' .. torch.cuda.unavailable_reason() .. ')')
      return
    end
    local x, line
    recording(function()
      x = torch.zeros(3, 5, {device = 'cuda'}); line = debug.getinfo(1, 'l').currentline
    end)
    local found = {}
    for _, e in ipairs(at(torch.memory_snapshot(), line)) do
      if e.device ~= 'cpu' then found[#found + 1] = e end
    end
    assert.are.equal(1, #found)
    assert.are.equal('cuda:0', found[1].device)
    assert.are.equal(3 * 5 * 4, found[1].bytes)
    assert.are.same({3, 5}, found[1].shape)
    assert.are.equal('float32', found[1].dtype)
    assert.is_true(x ~= nil)
  end)

  it("takes PyTorch's enabled values: none, 'all', 'state' and true start; nil and false stop", function()
    local function records(...)
      torch.memory._record_history(...)
      local x = torch.zeros(2, 2); local line = debug.getinfo(1, 'l').currentline
      torch.memory._record_history(false)
      return #at(torch.memory_snapshot(), line) == 1 and x ~= nil
    end
    assert.is_true(records())
    assert.is_true(records('all'))
    assert.is_true(records('state'))
    assert.is_true(records(true))
    assert.is_false(records(nil))
    assert.is_false(records(false))
  end)
end)

-- ---- the leak hunt ----
-- n steps of a loop over batches that accumulates the loss (no backward: an
-- evaluation loop, or a training loop that steps on the total later): with
-- fixed, total = total + loss:item(); with backward, loss:backward() every
-- step. Returns the snapshot by site, the loss line and the batch line.
local function run_loop(n, opts)
  torch.manual_seed(1)
  local model = nn.Sequential():add(nn.Linear(8, 32)):add(nn.ReLU()):add(nn.Linear(32, 1))
  local criterion = nn.MSELoss()
  local total, loss_line, batch_line = 0, nil, nil
  torch.memory._record_history(true)
  for _ = 1, n do
    local x, y = torch.randn(16, 8), torch.randn(16, 1); batch_line = debug.getinfo(1, 'l').currentline
    local loss = criterion(model(x), y); loss_line = debug.getinfo(1, 'l').currentline
    if opts.backward then loss:backward() end
    if opts.fixed then total = total + loss:item() else total = total + loss end
  end
  local groups = torch.memory_snapshot({group_by = 'site'})
  torch.memory._record_history(false)
  assert.is_true(total ~= nil)
  return groups, loss_line, batch_line
end

-- the group of the most bytes among those with a traceback (the specs run before
-- this one in busted's process may hold larger tensors, allocated unrecorded)
local function largest_recorded(groups)
  for _, g in ipairs(groups) do if g.frames then return g end end
end

local function count_at(groups, line)
  local g = at(groups, line)
  return g[1] and g[1].count or 0
end

describe('the leak of total = total + loss', function()
  it("shows as the loop's loss line holding a multiple of N saved tensors", function()
    local N1, N2 = 40, 80
    local g1, loss_line = run_loop(N1, {})
    local g2 = run_loop(N2, {})
    assert.is_true(at_line(largest_recorded(g1).site, loss_line), largest_recorded(g1).site)
    assert.is_true(at_line(largest_recorded(g2).site, loss_line), largest_recorded(g2).site)
    local c1, c2 = count_at(g1, loss_line), count_at(g2, loss_line)
    assert.is_true(c1 >= N1, c1)
    assert.are.equal(0, c1 % N1)                 -- the same saved tensors every step
    assert.are.equal(c1 / N1 * N2, c2)
    g1, g2 = nil, nil
  end)

  it('is gone with loss:item(), and absent when backward runs every step: the counts do not grow with N', function()
    for _, opts in ipairs({{fixed = true}, {backward = true}}) do   -- backward frees the saved tensors
      local g1, loss_line, batch_line = run_loop(40, opts)
      local g2 = run_loop(80, opts)
      assert.are.equal(count_at(g1, loss_line), count_at(g2, loss_line))
      assert.are.equal(count_at(g1, batch_line), count_at(g2, batch_line))
      assert.is_true(count_at(g2, loss_line) < 40)
    end
  end)
end)

describe('torch.memory.summary', function()
  it('prints the live count and bytes and the largest sites with their counts', function()
    local keep, line
    recording(function()
      keep = {}
      for i = 1, 25 do keep[i] = torch.zeros(256, 64); line = debug.getinfo(1, 'l').currentline end
    end)
    local text = torch.memory.summary()
    local groups = torch.memory_snapshot({group_by = 'site'})
    local count, bytes = 0, 0
    for _, g in ipairs(groups) do count, bytes = count + g.count, bytes + g.bytes end
    assert.truthy(text:find('live tensor storages: ' .. count .. ',', 1, true), text)
    assert.truthy(text:find('recording tracebacks: off', 1, true), text)
    -- 25 storages of 256 * 64 float32: 25 * 64 KiB
    local row = text:match('\n([^\n]*' .. escape(THIS) .. ':' .. line .. ' in [^\n]*)')
    assert.truthy(row, text)
    assert.truthy(row:match('^%s+1%.56 MiB%s+25%s+'), row)
    local limited = torch.memory.summary({row_limit = 0})
    assert.truthy(limited:find('%s' .. count .. '%s+%(' .. #groups .. ' more sites?%)'), limited)
    assert.are.equal(torch.memory.summary, torch.memory_summary)
    assert.are.equal(torch.memory_snapshot, torch.memory.snapshot)
    assert.is_true(#keep == 25 and bytes > 0)
  end)
end)
