-- profiler_spec.lua: torch.profiler as a user sees it: the ops, autograd
-- nodes, optimizer steps, DataLoader batches and regions a session records
-- (counts, shapes, nesting, call sites, memory), the schedule's steps, the
-- table, the Chrome trace (parsed here) and the folded stacks.
local torch = require 'torch'
local nn = require 'nn'
local optim = require 'optim'
local data = require 'data'
local raises = require 'spec.support.raises'

local profiler = torch.profiler
local THIS_FILE = debug.getinfo(1, 'S').source:match('([^/]+)$')

-- ---- a small JSON reader: the trace must parse as JSON, not as Lua ----
local function json_decode(s)
  local pos = 1
  local function fail(what) error(string.format('JSON: %s at byte %d', what, pos)) end
  local function space() pos = s:find('[^ \t\r\n]', pos) or #s + 1 end
  local value
  local function string_value()
    local out = {}
    pos = pos + 1
    while true do
      local c = s:sub(pos, pos)
      if c == '' then fail('unterminated string') end
      if c == '"' then pos = pos + 1 break end
      if c == '\\' then
        local e = s:sub(pos + 1, pos + 1)
        local simple = {['"'] = '"', ['\\'] = '\\', ['/'] = '/', b = '\b', f = '\f', n = '\n', r = '\r', t = '\t'}
        if simple[e] then out[#out + 1] = simple[e]; pos = pos + 2
        elseif e == 'u' and s:sub(pos + 2, pos + 5):match('^%x%x%x%x$') then
          out[#out + 1] = utf8.char(tonumber(s:sub(pos + 2, pos + 5), 16)); pos = pos + 6
        else fail('bad escape') end
      elseif c:byte() < 32 then fail('control character in a string')
      else out[#out + 1] = c; pos = pos + 1 end
    end
    return table.concat(out)
  end
  function value()
    space()
    local c = s:sub(pos, pos)
    if c == '{' then
      local t = {}
      pos = pos + 1
      space()
      if s:sub(pos, pos) == '}' then pos = pos + 1 return t end
      while true do
        space()
        if s:sub(pos, pos) ~= '"' then fail('expected a key') end
        local k = string_value()
        space()
        if s:sub(pos, pos) ~= ':' then fail("expected ':'") end
        pos = pos + 1
        t[k] = value()
        space()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == '}' then return t end
        if d ~= ',' then fail("expected ',' or '}'") end
      end
    elseif c == '[' then
      local t = {}
      pos = pos + 1
      space()
      if s:sub(pos, pos) == ']' then pos = pos + 1 return t end
      while true do
        t[#t + 1] = value()
        space()
        local d = s:sub(pos, pos)
        pos = pos + 1
        if d == ']' then return t end
        if d ~= ',' then fail("expected ',' or ']'") end
      end
    elseif c == '"' then return string_value()
    elseif s:sub(pos, pos + 3) == 'true' then pos = pos + 4 return true
    elseif s:sub(pos, pos + 4) == 'false' then pos = pos + 5 return false
    elseif s:sub(pos, pos + 3) == 'null' then pos = pos + 4 return nil
    end
    local num = s:match('^-?%d+%.?%d*[eE]?[-+]?%d*', pos)
    if not num or num == '' then fail('unexpected character') end
    pos = pos + #num
    return tonumber(num)
  end
  local v = value()
  space()
  if pos <= #s then fail('trailing characters') end
  return v
end

local read_file = dofile('spec/support/files.lua').read

local function row_of(averages, key)
  for _, r in ipairs(averages) do if r.key == key then return r end end
end

local function count_of(averages, key)
  local r = row_of(averages, key)
  return r and r.count or 0
end

local function temp_path(suffix)
  return os.tmpname() .. suffix
end

describe('torch.profiler', function()
  local a, b, m, n
  before_each(function()
    a, b = torch.randn(4, 5), torch.randn(4, 5)
    m, n = torch.randn(2, 3), torch.randn(3, 7)
  end)

  it('counts every op issued, by name, with total >= self', function()
    local prof = profiler.profile({}, function()
      for _ = 1, 7 do local _ = a + b end
      for _ = 1, 3 do local _ = m:mm(n) end
    end)
    local avg = prof:key_averages()
    assert.are.equal(7, count_of(avg, 'add'))
    assert.are.equal(3, count_of(avg, 'mm'))
    for _, r in ipairs(avg) do
      assert.is_true(r.cpu_time_total >= r.self_cpu_time_total - 1e-9, r.key)
      assert.is_true(r.self_cpu_time_total >= 0, r.key)
      assert.are.equal(r.cpu_time_total / r.count, r.cpu_time)
    end
  end)

  it('records nothing when off, and reports whether it records', function()
    assert.is_false(torch._profiling())
    local prof = profiler.profile({})
    prof:start()
    assert.is_true(torch._profiling())
    local _ = a + b
    prof:stop()
    assert.is_false(torch._profiling())
    for _ = 1, 5 do local _ = a + b end
    assert.are.equal(1, count_of(prof:key_averages(), 'add'))
  end)

  it('records the input shapes and groups by them', function()
    local x = torch.randn(5, 3)
    local prof = profiler.profile({record_shapes = true}, function()
      local _ = m:mm(n)
      local _ = x:mm(n)
      local _ = m:mm(n)
    end)
    local avg = prof:key_averages({group_by_input_shape = true})
    local seen = {}
    for _, r in ipairs(avg) do
      if r.key == 'mm' then seen[#seen + 1] = {r.input_shapes, r.count} end
    end
    table.sort(seen, function(p, q) return p[1][1][1] < q[1][1][1] end)
    assert.are.same({{{{2, 3}, {3, 7}}, 2}, {{{5, 3}, {3, 7}}, 1}}, seen)
    assert.are.equal(3, count_of(prof:key_averages(), 'mm'))   -- one row without the grouping
  end)

  it('nests ops inside record_function regions, on the same thread, within their interval', function()
    local prof = profiler.profile({}, function()
      profiler.record_function('outer', function()
        local _ = a + b
        profiler.record_function('inner', function() local _ = m:mm(n) end)
      end)
    end)
    local ev = prof:events()
    local by_name = {}
    for i, e in ipairs(ev) do by_name[e.name] = i end
    local outer, inner, add, mm = by_name.outer, by_name.inner, by_name.add, by_name.mm
    assert.are.equal(outer, ev[add].parent)
    assert.are.equal(outer, ev[inner].parent)
    assert.are.equal(inner, ev[mm].parent)
    for _, i in ipairs({add, inner, mm}) do
      local p = ev[ev[i].parent]
      assert.are.equal(p.tid, ev[i].tid)
      assert.is_true(p.start <= ev[i].start and ev[i].finish <= p.finish)
    end
    local avg = prof:key_averages()
    local o = row_of(avg, 'outer')
    assert.is_true(o.cpu_time_total >= row_of(avg, 'add').cpu_time_total + row_of(avg, 'inner').cpu_time_total)
  end)

  it('returns record_function results and closes the region on error', function()
    local prof = profiler.profile({}, function()
      assert.are.same({3, 4}, {profiler.record_function('r', function(p, q) return p + 1, q + 1 end, 2, 3)})
      local ok = pcall(profiler.record_function, 'bad', function() error('boom') end)
      assert.is_false(ok)
      local _ = a + b      -- outside 'bad'
    end)
    local ev = prof:events()
    for _, e in ipairs(ev) do
      if e.name == 'add' then assert.are.equal('ProfilerStep#0', ev[e.parent].name) end
    end
  end)

  it('records record_function as an object with enter and exit', function()
    local prof = profiler.profile({})
    prof:start()
    local r = profiler.record_function('load')
    r:enter()
    local _ = a + b
    r:exit()
    prof:stop()
    local ev = prof:events()
    local load
    for i, e in ipairs(ev) do if e.name == 'load' then load = i end end
    assert.is_not_nil(load)
    for _, e in ipairs(ev) do if e.name == 'add' then assert.are.equal(load, e.parent) end end
    raises('was not entered', function() r:exit() end)
  end)

  it('records the autograd nodes backward runs, named as the grad_fn', function()
    local x = torch.randn(3, 4, {requires_grad = true})
    local w = torch.randn(4, 2, {requires_grad = true})
    local y = x:mm(w):sum()
    local names = {y.grad_fn:name()}
    for _, edge in ipairs(y.grad_fn.next_functions) do
      if edge[1] then names[#names + 1] = edge[1]:name() end
    end
    local prof = profiler.profile({}, function() y:backward() end)
    local avg = prof:key_averages()
    assert.is_true(#names >= 2)
    for _, name in ipairs(names) do assert.are.equal(1, count_of(avg, name), name) end
    assert.are.equal(2, count_of(avg, 'AccumulateGrad'))   -- x and w
  end)

  it('records optimizer steps and DataLoader batches', function()
    local model = nn.Linear(3, 2)
    local opt = optim.SGD(model:parameters(), {lr = 0.1})
    local loader = data.DataLoader(data.TensorDataset(torch.randn(10, 3)), {batch_size = 4})
    local prof = profiler.profile({}, function()
      for _, batch in loader:iter() do
        local loss = model(batch[1]):sum()
        opt:zero_grad()
        loss:backward()
        opt:step()
      end
    end)
    local avg = prof:key_averages()
    assert.are.equal(3, count_of(avg, 'Optimizer.step#SGD.step'))   -- ceil(10 / 4) batches
    -- each batch is one call of the iterator, and so is the call that finds none left
    assert.are.equal(4, count_of(avg, 'enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__'))
    local step_children = 0
    local ev = prof:events()
    for _, e in ipairs(ev) do
      if e.parent and ev[e.parent].name == 'Optimizer.step#SGD.step' then step_children = step_children + 1 end
    end
    assert.is_true(step_children > 0)
  end)

  it('records the batches of a DataLoader with workers (which record nothing themselves)', function()
    local loader = data.DataLoader(data.TensorDataset(torch.randn(6, 2)), {batch_size = 3, num_workers = 1})
    local sums = {}
    local prof = profiler.profile({}, function()
      for _, batch in loader:iter() do sums[#sums + 1] = batch[1]:sum():item() end
    end)
    assert.are.equal(2, #sums)
    assert.are.equal(3, count_of(prof:key_averages(), 'enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__'))
  end)

  it('gives each op the Lua line that called it (with_stack)', function()
    local line
    local prof = profiler.profile({with_stack = true}, function()
      line = debug.getinfo(1, 'l').currentline + 1
      local _ = a + b
    end)
    local found = 0
    for _, e in ipairs(prof:events()) do
      if e.name == 'add' then
        found = found + 1
        assert.are.equal(THIS_FILE .. ':' .. line, e.site:match('([^/]+)$'))
      end
    end
    assert.are.equal(1, found)
    local stack_avg = prof:key_averages({group_by_stack_n = 1})
    assert.matches(THIS_FILE .. ':' .. line, row_of(stack_avg, 'add').stack[1], 1, true)
  end)

  it('records the bytes an op allocates (profile_memory)', function()
    local prof = profiler.profile({profile_memory = true}, function()
      profiler.record_function('make', function() local _ = torch.zeros(1000) end)
    end)
    local avg = prof:key_averages()
    assert.is_true(row_of(avg, 'make').bytes_allocated >= 1000 * 4)
    assert.is_true(row_of(avg, 'zeros').cpu_memory_usage >= 1000 * 4)
    local none = profiler.profile({}, function() local _ = torch.zeros(1000) end)
    assert.are.equal(0, row_of(none:key_averages(), 'zeros').bytes_allocated)
  end)

  describe('schedule', function()
    it('gives PyTorch actions step by step', function()
      local s = profiler.schedule{wait = 1, warmup = 1, active = 2, repeat_ = 1, skip_first = 1}
      local got = {}
      for step = 0, 6 do got[#got + 1] = s(step) end
      assert.are.same({'NONE', 'NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE', 'NONE', 'NONE'}, got)
      local forever = profiler.schedule{wait = 0, warmup = 0, active = 1, ['repeat'] = 0}
      assert.are.same({'RECORD_AND_SAVE', 'RECORD_AND_SAVE'}, {forever(0), forever(9)})
    end)

    it('records only the active steps and hands each cycle to on_trace_ready', function()
      local traces = {}
      local prof = profiler.profile({
        schedule = profiler.schedule{wait = 1, warmup = 1, active = 2, repeat_ = 2},
        on_trace_ready = function(p)
          traces[#traces + 1] = {adds = count_of(p:key_averages(), 'add'),
                                 steps = count_of(p:key_averages(), 'ProfilerStep*')}
        end}, function(p)
        for step = 0, 9 do
          for _ = 1, step + 1 do local _ = a + b end   -- step k issues k + 1 adds
          p:step()
        end
      end)
      -- cycles of 4 steps: steps 2, 3 and 6, 7 active; then no more (repeat_ = 2)
      assert.are.same({{adds = 3 + 4, steps = 2}, {adds = 7 + 8, steps = 2}}, traces)
      assert.are.equal(7 + 8, count_of(prof:key_averages(), 'add'))
    end)

    it('hands the steps recorded when stopped early to on_trace_ready', function()
      local calls = 0
      profiler.profile({schedule = profiler.schedule{wait = 0, warmup = 0, active = 5},
                        on_trace_ready = function() calls = calls + 1 end}, function(p)
        for _ = 1, 2 do p:step() end
      end)
      assert.are.equal(1, calls)
    end)
  end)

  describe('table', function()
    local prof
    before_each(function()
      prof = profiler.profile({record_shapes = true, profile_memory = true}, function()
        for _ = 1, 4 do local _ = a + b end
        for _ = 1, 2 do local _ = m:mm(n) end
        local _ = a:sum()
      end)
    end)

    local function data_rows(text)
      local lines = {}
      for l in text:gmatch('[^\n]+') do lines[#lines + 1] = l end
      local rows = {}
      for i = 4, #lines - 2 do rows[#rows + 1] = lines[i] end
      return rows, lines
    end

    it("lays out PyTorch's columns and footer", function()
      local text = prof:key_averages():table{sort_by = 'self_cpu_time_total', row_limit = 10}
      local rows, lines = data_rows(text)
      assert.matches('^%-+  %-+', lines[1])
      assert.are.equal(lines[1], lines[3])
      assert.are.equal(lines[1], lines[#lines - 1])
      local header = lines[2]
      local last = 0
      for _, col in ipairs({'Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg',
                            'CPU Mem', 'Self CPU Mem', '# of Calls'}) do
        local at = header:find(col, last + 1, true)
        assert.is_not_nil(at, col)
        last = at + #col - 1
      end
      assert.matches('^Self CPU time total: %d+%.%d%d%d[mu]?s$', lines[#lines])
      assert.are.equal(#prof:key_averages(), #rows)     -- fewer rows than the limit: all of them
      for _, l in ipairs(rows) do assert.are.equal(#lines[1], #l) end
    end)

    it('sorts and limits rows', function()
      local rows = data_rows(prof:key_averages():table{sort_by = 'count', row_limit = 2})
      assert.are.equal(2, #rows)
      assert.matches('^%s*add%s', rows[1])                 -- 4 calls
      assert.matches('%s4  $', rows[1])
      assert.matches('%s2  $', rows[2])                    -- mm (or ProfilerStep never: 1 call)
    end)

    it('adds the Input Shapes column when grouped by them', function()
      local text = prof:key_averages({group_by_input_shape = true}):table{sort_by = 'count'}
      assert.matches('Input Shapes', text, 1, true)
      assert.matches('[[2, 3], [3, 7]]', text, 1, true)
    end)

    it('refuses an unknown sort key, naming it', function()
      raises("averages:table: unknown sort_by 'speed'", function() prof:key_averages():table{sort_by = 'speed'} end)
      raises('averages:table: unknown option rows', function() prof:key_averages():table{rows = 3} end)
    end)
  end)

  it('writes a Chrome trace that parses, one row per thread, children inside their parents', function()
    local path = temp_path('.json')
    local prof = profiler.profile({record_shapes = true}, function()
      profiler.record_function('outer', function()
        for _ = 1, 3 do local _ = m:mm(n) end
      end)
    end)
    prof:export_chrome_trace(path)
    local trace = json_decode(read_file(path))
    os.remove(path)
    local complete, named = {}, {}
    for _, e in ipairs(trace.traceEvents) do
      if e.ph == 'X' then
        assert.are.equal('string', type(e.name))
        assert.are.equal('number', type(e.ts))
        assert.is_true(e.dur >= 0)
        assert.is_true(math.type(e.pid) == 'integer' and math.type(e.tid) == 'integer')
        complete[#complete + 1] = e
      elseif e.ph == 'M' and e.name == 'thread_name' then
        named[e.tid] = e.args.name
      end
    end
    local mm = 0
    for _, e in ipairs(complete) do
      assert.is_not_nil(named[e.tid], 'a thread without a name')
      if e.name == 'mm' then
        mm = mm + 1
        assert.are.same({{2, 3}, {3, 7}}, e.args['Input Dims'])
      end
    end
    assert.are.equal(3, mm)
    -- on each thread, two events are disjoint or one holds the other
    for i, p in ipairs(complete) do
      for j, q in ipairs(complete) do
        if i ~= j and p.tid == q.tid then
          local disjoint = p.ts + p.dur <= q.ts or q.ts + q.dur <= p.ts
          local p_holds = p.ts <= q.ts and q.ts + q.dur <= p.ts + p.dur
          local q_holds = q.ts <= p.ts and p.ts + p.dur <= q.ts + q.dur
          assert.is_true(disjoint or p_holds or q_holds, p.name .. ' overlaps ' .. q.name)
        end
      end
    end
    local outer
    for _, e in ipairs(complete) do if e.name == 'outer' then outer = e end end
    for _, e in ipairs(complete) do
      if e.name == 'mm' then assert.is_true(outer.ts <= e.ts and e.ts + e.dur <= outer.ts + outer.dur) end
    end
  end)

  it('writes folded stacks', function()
    local path = temp_path('.folded')
    local big = torch.randn(200, 200)
    local prof = profiler.profile({}, function()
      profiler.record_function('outer', function()
        for _ = 1, 20 do local _ = big:mm(big) end
      end)
    end)
    prof:export_stacks(path)
    local stacks = {}
    for l in read_file(path):gmatch('[^\n]+') do
      local stack, value = l:match('^(.+) (%d+)$')
      assert.is_not_nil(stack, l)
      stacks[stack] = tonumber(value)
    end
    os.remove(path)
    assert.is_true((stacks['ProfilerStep*;outer;mm'] or 0) > 0)
    raises("metric must be 'self_cpu_time_total'", function() prof:export_stacks(path, 'self_cuda_time_total') end)
  end)

  describe('bad input', function()
    it('names the function and the value, at the caller', function()
      local ok, err = pcall(profiler.profile, {record_shape = true})
      assert.is_false(ok)
      assert.matches('torch.profiler.profile: unknown option record_shape', err, 1, true)
      raises("activities[2] is 'cuda'", function() profiler.profile({activities = {'cpu', 'cuda'}}) end)
      raises('record_shapes must be a boolean, got number', function() profiler.profile({record_shapes = 1}) end)
      raises('torch.profiler.schedule: active must be an integer >= 1, got 0',
             function() profiler.schedule{wait = 1, active = 0} end)
      raises('torch.profiler.schedule: unknown option wiat', function() profiler.schedule{wiat = 1, active = 1} end)
      raises('torch.profiler.record_function: name must be a string, got number',
             function() profiler.record_function(3, function() end) end)
      raises('profile:step: the profile is not started', function() profiler.profile({}):step() end)
      raises('profile:export_chrome_trace: path must be a string, got nil',
             function() profiler.profile({}):export_chrome_trace() end)
      local line
      local ok2, err2 = pcall(function()
        line = debug.getinfo(1, 'l').currentline + 1
        profiler.schedule{active = 'x'}
      end)
      assert.is_false(ok2)
      assert.matches(THIS_FILE .. ':' .. line .. ': torch.profiler.schedule: active must be a number', err2, 1, true)
      assert.is_false(torch._profiling())
    end)

    it('stops recording when the profiled function raises', function()
      local ok, err = pcall(profiler.profile, {}, function() error('inside') end)
      assert.is_false(ok)
      assert.matches('inside', err)
      assert.is_false(torch._profiling())
    end)
  end)

  it('leaves the op counter counting', function()
    torch._op_counter(true)
    profiler.profile({}, function() for _ = 1, 3 do local _ = a + b end end)
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.equal(3, counts.add)
  end)
end)
