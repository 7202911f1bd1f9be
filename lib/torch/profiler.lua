-- torch.profiler: where the time and memory of a Lua program go, as PyTorch's
-- torch.profiler shows them.
--
-- A session records every op the dispatcher runs (its name, input shapes,
-- bytes allocated and freed, and the Lua line that called it), the autograd
-- nodes backward runs, optimizer steps, DataLoader batches and named
-- record_function regions, each with its start and end on the thread that
-- ran it (src/ops/profiler.c). key_averages() sums them by name into PyTorch's
-- table; export_chrome_trace writes the timeline for chrome://tracing and
-- Perfetto; export_stacks writes folded stacks for flame graphs. docs/profiling.md.
local torch = require 'torch.core'

local profiler = {}
torch.profiler = profiler


-- PyTorch's ProfilerAction: what a schedule asks of a step
local NONE, WARMUP, RECORD, RECORD_AND_SAVE = 'NONE', 'WARMUP', 'RECORD', 'RECORD_AND_SAVE'
profiler.ProfilerAction = {NONE = NONE, WARMUP = WARMUP, RECORD = RECORD, RECORD_AND_SAVE = RECORD_AND_SAVE}
profiler.ProfilerActivity = {CPU = 'cpu', CUDA = 'cuda'}
local RECORDING = {[RECORD] = true, [RECORD_AND_SAVE] = true}

local function fail(level, fmt, ...) error(string.format(fmt, ...), level + 1) end

local function check_count(who, opts, k, least, level)
  local v = opts[k]
  if v ~= nil and (math.type(v) ~= 'integer' or v < least) then
    fail(level + 1, '%s: %s must be an integer >= %d, got %s', who, k, least, tostring(v))
  end
  return v
end

-- torch.profiler.schedule{wait=, warmup=, active=, repeat_=0, skip_first=0}: the
-- schedule of profile's steps, as PyTorch's: skip_first steps, then cycles of
-- wait steps not recorded, warmup steps (not kept), and active steps
-- recorded; on_trace_ready sees each cycle's active steps. repeat_ (or
-- ['repeat']) cycles, 0 for as many as the loop runs. Returns a function of
-- the step number (from 0) giving a ProfilerAction.
function profiler.schedule(opts)
  local who = 'torch.profiler.schedule'
  opts = torch._check_options(who, opts, {wait = 'number', warmup = 'number', active = 'number',
    repeat_ = 'number', ['repeat'] = 'number', skip_first = 'number'}, 2)
  if opts.repeat_ ~= nil and opts['repeat'] ~= nil then fail(2, '%s: give repeat_ or repeat, not both', who) end
  local wait = check_count(who, opts, 'wait', 0, 2) or 0
  local warmup = check_count(who, opts, 'warmup', 0, 2) or 0
  local active = check_count(who, opts, 'active', 1, 2)
  if active == nil then fail(2, '%s: active (the steps recorded per cycle) is required', who) end
  local repeats = check_count(who, opts, opts.repeat_ ~= nil and 'repeat_' or 'repeat', 0, 2) or 0
  local skip_first = check_count(who, opts, 'skip_first', 0, 2) or 0
  local cycle = wait + warmup + active
  return function(step)
    if step < skip_first then return NONE end
    step = step - skip_first
    if repeats > 0 and step // cycle >= repeats then return NONE end
    local at = step % cycle
    if at < wait then return NONE
    elseif at < wait + warmup then return WARMUP
    elseif at < cycle - 1 then return RECORD end
    return RECORD_AND_SAVE
  end
end

-- the libraries' folder: the Lua frames there are not the caller's line
local lib_folder = (package.searchpath('torch', package.path) or ''):match('^(.*[/\\])torch[/\\]init%.lua$') or ''

-- ---- record_function ----
local Range = {__name = 'torch.profiler.record_function'}
Range.__index = Range

-- closes the range opened before fn ran, then returns fn's results or raises its error
local function close(ok, ...)
  torch._profiler_exit()
  if not ok then error((...), 0) end
  return ...
end

-- torch.profiler._region(name, fn, ...): fn(...) as a range named name while a
-- session records (the optimizers' and DataLoader's events)
function profiler._region(name, fn, ...)
  if not torch._profiling() then return fn(...) end
  torch._profiler_enter(name)
  return close(pcall(fn, ...))
end

-- torch.profiler.record_function(name, fn, ...): runs fn(...) as a region
-- named name in the profile (its ops its children) and returns fn's results.
-- Without fn, a region object for scripts: local r =
-- torch.profiler.record_function('load'); r:enter(); ...; r:exit().
function profiler.record_function(name, fn, ...)
  if type(name) ~= 'string' then
    fail(2, 'torch.profiler.record_function: name must be a string, got %s', type(name))
  end
  if fn == nil then return setmetatable({name = name}, Range) end
  if type(fn) ~= 'function' then
    fail(2, 'torch.profiler.record_function: fn must be a function, got %s', type(fn))
  end
  return profiler._region(name, fn, ...)
end

-- r:enter(): opens the region (when a session records); returns r.
function Range:enter()
  if getmetatable(self) ~= Range then fail(2, "record_function:enter: called with '.'; use r:enter()") end
  if self.entered then fail(2, "record_function:enter: region '%s' is already entered", self.name) end
  self.entered = torch._profiling()
  if self.entered then torch._profiler_enter(self.name) end
  self.entered = self.entered or 'off'
  return self
end

-- r:exit(): closes it.
function Range:exit()
  if getmetatable(self) ~= Range then fail(2, "record_function:exit: called with '.'; use r:exit()") end
  if not self.entered then fail(2, "record_function:exit: region '%s' was not entered", self.name) end
  if self.entered == true then torch._profiler_exit() end
  self.entered = nil
end

-- ---- the profile ----
local Profile = {__name = 'torch.profiler.profile'}
Profile.__index = Profile

local OPTIONS = {activities = 'table', record_shapes = 'boolean', profile_memory = 'boolean',
                 with_stack = 'boolean', schedule = 'function', on_trace_ready = 'function',
                 with_flops = 'boolean', with_modules = 'boolean'}

-- torch.profiler.profile(opts[, fn]): a profiling session. opts:
-- activities={'cpu'}, record_shapes, profile_memory, with_stack (booleans),
-- schedule (torch.profiler.schedule{...}) and on_trace_ready(prof), called
-- when a cycle's active steps end (or at stop). With fn, runs fn(prof)
-- between start and stop (fn calls prof:step() per step) and returns prof;
-- without, returns the profile to drive: prof:start() ... prof:stop().
function profiler.profile(opts, fn)
  local who = 'torch.profiler.profile'
  opts = torch._check_options(who, opts, OPTIONS, 2)
  for i, a in ipairs(opts.activities or {'cpu'}) do
    if a ~= 'cpu' then
      fail(2, "%s: activities[%d] is %s; moontorch records the 'cpu' activity only", who, i,
           type(a) == 'string' and "'" .. a .. "'" or type(a))
    end
  end
  if fn ~= nil and type(fn) ~= 'function' then fail(2, '%s: fn must be a function, got %s', who, type(fn)) end
  local prof = setmetatable({record_shapes = opts.record_shapes == true, profile_memory = opts.profile_memory == true,
                             with_stack = opts.with_stack == true, schedule = opts.schedule,
                             on_trace_ready = opts.on_trace_ready, step_num = 0, action = NONE, _events = {},
                             _threads = {}}, Profile)
  if fn == nil then return prof end
  prof:start()
  local ok, err = pcall(fn, prof)
  if not ok then
    if prof.running then pcall(prof.stop, prof) end
    error(err, 0)
  end
  prof:stop()
  return prof
end

local function is_profile(self, method)
  if getmetatable(self) ~= Profile then
    fail(3, "profile:%s: called with '.' or on something else; use prof:%s(...)", method, method)
  end
end

-- the recorder on, with this step's marker open
local function begin_recording(self)
  torch._profiler_start(self.record_shapes, self.profile_memory, self.with_stack, lib_folder)
  self.recording = true
  torch._profiler_enter('ProfilerStep#' .. self.step_num)
end

-- the recorder off: its events are the profile's; on_trace_ready sees them
local function end_recording(self)
  torch._profiler_exit()
  torch._profiler_stop()
  self.recording = false
  self._events, self._threads, self.pid = torch._profiler_events()
  self.averages = nil
  if self.on_trace_ready then self.on_trace_ready(self) end
end

local function action_at(self, step)
  if not self.schedule then return RECORD end
  local action = self.schedule(step)
  if action ~= NONE and action ~= WARMUP and not RECORDING[action] then
    fail(4, 'torch.profiler.profile: the schedule returned %s for step %d, not a ProfilerAction', tostring(action), step)
  end
  return action
end

-- prof:start(): starts the session (recording at once unless the schedule
-- waits); returns prof.
function Profile:start()
  is_profile(self, 'start')
  if self.running then fail(2, 'profile:start: the profile is already started') end
  if torch._profiling() then fail(2, 'profile:start: another profile is recording') end
  self.running = true
  self.action = action_at(self, self.step_num)
  if RECORDING[self.action] then begin_recording(self) end
  return self
end

-- prof:step(): marks the end of a step (one training iteration): the
-- schedule moves on, and a cycle whose active steps end goes to on_trace_ready.
function Profile:step()
  is_profile(self, 'step')
  if not self.running then fail(2, 'profile:step: the profile is not started') end
  local before = self.action
  self.step_num = self.step_num + 1
  self.action = action_at(self, self.step_num)
  if self.recording and (before == RECORD_AND_SAVE or not RECORDING[self.action]) then
    end_recording(self)
  elseif self.recording then
    torch._profiler_exit()
    torch._profiler_enter('ProfilerStep#' .. self.step_num)
  end
  if not self.recording and RECORDING[self.action] then begin_recording(self) end
end

-- prof:stop(): ends the session; what it recorded since the last trace goes
-- to on_trace_ready.
function Profile:stop()
  is_profile(self, 'stop')
  if not self.running then fail(2, 'profile:stop: the profile is not started') end
  self.running = false
  if self.recording then end_recording(self) end
end

-- ---- averages ----
-- PyTorch's _format_time and _format_memory
local function format_time(us)
  if us >= 1e6 then return string.format('%.3fs', us / 1e6) end
  if us >= 1e3 then return string.format('%.3fms', us / 1e3) end
  return string.format('%.3fus', us)
end

local function format_memory(bytes)
  local KB, MB, GB = 1024, 1024 * 1024, 1024 * 1024 * 1024
  if math.abs(bytes) >= GB then return string.format('%.2f Gb', bytes / GB) end
  if math.abs(bytes) >= MB then return string.format('%.2f Mb', bytes / MB) end
  if math.abs(bytes) >= KB then return string.format('%.2f Kb', bytes / KB) end
  return string.format('%d b', bytes)
end

local function shapes_text(shapes)
  if not shapes then return '[]' end
  local parts = {}
  for i, s in ipairs(shapes) do
    local dims = {}
    for d, v in ipairs(s) do dims[d] = tostring(v) end
    parts[i] = '[' .. table.concat(dims, ', ') .. ']'
  end
  return '[' .. table.concat(parts, ', ') .. ']'
end

-- each event's self time (ns) and self memory: its own less its children's (on its thread)
local function self_values(events)
  local child_time, child_mem = {}, {}
  for _, e in ipairs(events) do
    local p = e.parent
    if p then
      child_time[p] = (child_time[p] or 0) + (e.finish - e.start)
      child_mem[p] = (child_mem[p] or 0) + (e.alloc - e.freed)
    end
  end
  return child_time, child_mem
end

-- the name an event is averaged under (PyTorch's ProfilerStep*)
local function key_of(e)
  if e.kind == 'range' and e.name:match('^ProfilerStep#%d+$') then return 'ProfilerStep*' end
  return e.name
end

local Averages = {__name = 'torch.profiler.EventList'}
Averages.__index = Averages

-- prof:key_averages({group_by_input_shape=false, group_by_stack_n=0}): the
-- recorded events summed by name (and by input shapes, or by the Lua line
-- that called them), as a list of rows {key, count, self_cpu_time_total,
-- cpu_time_total, cpu_time (the mean), self_cpu_time, cpu_memory_usage,
-- self_cpu_memory_usage, bytes_allocated, bytes_freed, input_shapes,
-- stack}; times in microseconds, memory in bytes. Its :table{...} prints them.
function Profile:key_averages(opts)
  is_profile(self, 'key_averages')
  opts = torch._check_options('profile:key_averages', opts,
    {group_by_input_shape = 'boolean', group_by_stack_n = 'number'}, 2)
  if self.running and self.recording then
    fail(2, 'profile:key_averages: the profile is still recording; call it after stop (or in on_trace_ready)')
  end
  local by_shape, by_stack = opts.group_by_input_shape, (opts.group_by_stack_n or 0) > 0
  local events = self._events
  local child_time, child_mem = self_values(events)
  local rows, index = setmetatable({}, Averages), {}
  for i, e in ipairs(events) do
    if e.kind ~= 'chunk' then
      local key = key_of(e)
      local shapes = by_shape and shapes_text(e.shapes) or nil
      local group = key .. '\0' .. (shapes or '') .. '\0' .. (by_stack and e.site or '')
      local row = index[group]
      if not row then
        row = {key = key, count = 0, self_cpu_time_total = 0, cpu_time_total = 0, cpu_memory_usage = 0,
               self_cpu_memory_usage = 0, bytes_allocated = 0, bytes_freed = 0,
               input_shapes = by_shape and (e.shapes or {}) or nil, stack = by_stack and {e.site} or nil}
        index[group] = row
        rows[#rows + 1] = row
      end
      local total = e.finish - e.start
      row.count = row.count + 1
      row.cpu_time_total = row.cpu_time_total + total / 1e3
      row.self_cpu_time_total = row.self_cpu_time_total + (total - (child_time[i] or 0)) / 1e3
      row.cpu_memory_usage = row.cpu_memory_usage + e.alloc - e.freed
      row.self_cpu_memory_usage = row.self_cpu_memory_usage + (e.alloc - e.freed) - (child_mem[i] or 0)
      row.bytes_allocated = row.bytes_allocated + e.alloc
      row.bytes_freed = row.bytes_freed + e.freed
    end
  end
  for _, row in ipairs(rows) do
    row.cpu_time = row.cpu_time_total / row.count
    row.self_cpu_time = row.self_cpu_time_total / row.count
  end
  rows.profile_memory, rows.by_shape, rows.by_stack = self.profile_memory, by_shape, by_stack
  return rows
end

local SORT_KEYS = {self_cpu_time_total = true, cpu_time_total = true, cpu_time = true, self_cpu_time = true,
                   count = true, cpu_memory_usage = true, self_cpu_memory_usage = true}
local function sort_keys_text()
  local names = {}
  for k in pairs(SORT_KEYS) do names[#names + 1] = k end
  table.sort(names)
  return table.concat(names, ', ')
end

local COLUMN, SPACING, NAME_WIDTH, SHAPES_WIDTH = 12, 2, 55, 80

-- averages:table{sort_by='cpu_time_total', row_limit=100,
-- max_name_column_width=55, max_shapes_column_width=80,
-- top_level_events_only=false}: PyTorch's table as a string: Name, Self CPU %,
-- Self CPU, CPU total %, CPU total, CPU time avg, CPU Mem and Self CPU Mem
-- (with profile_memory), # of Calls, Input Shapes (grouped by them), Source
-- Location (grouped by it), then "Self CPU time total: ...". Rows sort
-- descending by sort_by.
function Averages:table(opts)
  if getmetatable(self) ~= Averages then fail(2, "averages:table: called with '.'; use averages:table{...}") end
  opts = torch._check_options('averages:table', opts, {sort_by = 'string', row_limit = 'number',
    max_name_column_width = 'number', max_shapes_column_width = 'number', top_level_events_only = 'boolean',
    header = 'string'}, 2)
  local sort_by = opts.sort_by or 'cpu_time_total'
  if not SORT_KEYS[sort_by] then
    fail(2, "averages:table: unknown sort_by '%s' (it takes %s)", sort_by, sort_keys_text())
  end
  local row_limit = opts.row_limit or 100
  if math.type(row_limit) ~= 'integer' then fail(2, 'averages:table: row_limit must be an integer, got %s', row_limit) end
  local rows = {}
  for i, r in ipairs(self) do rows[i] = r end
  table.sort(rows, function(a, b)
    if a[sort_by] ~= b[sort_by] then return a[sort_by] > b[sort_by] end
    return a.key < b.key
  end)
  local total_self = 0
  for _, r in ipairs(rows) do total_self = total_self + r.self_cpu_time_total end
  if row_limit > 0 and #rows > row_limit then for i = #rows, row_limit + 1, -1 do rows[i] = nil end end

  local max_name = opts.max_name_column_width or NAME_WIDTH
  local name_width = 0
  for _, r in ipairs(rows) do name_width = math.max(name_width, #r.key + 4) end
  name_width = math.min(math.max(name_width, 8), max_name)
  local headers = {'Name', 'Self CPU %', 'Self CPU', 'CPU total %', 'CPU total', 'CPU time avg'}
  if self.profile_memory then headers[#headers + 1] = 'CPU Mem'; headers[#headers + 1] = 'Self CPU Mem' end
  headers[#headers + 1] = '# of Calls'
  local widths, left = {name_width}, {}
  for i = 2, #headers do widths[i] = COLUMN end
  local shape_texts = {}
  if self.by_shape then
    local w = 0
    for i, r in ipairs(rows) do shape_texts[i] = shapes_text(r.input_shapes); w = math.max(w, #shape_texts[i] + 4) end
    headers[#headers + 1] = 'Input Shapes'
    widths[#headers] = math.min(math.max(w, 16), opts.max_shapes_column_width or SHAPES_WIDTH)
  end
  if self.by_stack then
    headers[#headers + 1] = 'Source Location'
    local w = 0
    for _, r in ipairs(rows) do w = math.max(w, #(r.stack[1] or '') + 4) end
    widths[#headers] = math.max(w, 19)
    left[#headers] = true
  end
  local function line(cells)
    local out = {}
    for i, c in ipairs(cells) do
      if #c > widths[i] then c = c:sub(1, widths[i] - 3) .. '...' end
      out[i] = (left[i] and c .. string.rep(' ', widths[i] - #c) or string.rep(' ', widths[i] - #c) .. c)
        .. string.rep(' ', SPACING)
    end
    return table.concat(out)
  end
  local sep = {}
  for i, w in ipairs(widths) do sep[i] = string.rep('-', w) .. string.rep(' ', SPACING) end
  sep = table.concat(sep)
  local function percent(v) return string.format('%.2f%%', total_self > 0 and v * 100 / total_self or 0) end
  local out = {}
  if opts.header then out[#out + 1] = opts.header end
  out[#out + 1] = sep
  out[#out + 1] = line(headers)
  out[#out + 1] = sep
  for i, r in ipairs(rows) do
    local name = r.key
    if #name >= max_name - 3 then name = name:sub(1, max_name - 3) .. '...' end
    local cells = {name, percent(r.self_cpu_time_total), format_time(r.self_cpu_time_total),
                   percent(r.cpu_time_total), format_time(r.cpu_time_total), format_time(r.cpu_time)}
    if self.profile_memory then
      cells[#cells + 1] = format_memory(r.cpu_memory_usage)
      cells[#cells + 1] = format_memory(r.self_cpu_memory_usage)
    end
    cells[#cells + 1] = tostring(r.count)
    if self.by_shape then cells[#cells + 1] = shape_texts[i] end
    if self.by_stack then cells[#cells + 1] = r.stack[1] or '' end
    out[#out + 1] = line(cells)
  end
  out[#out + 1] = sep
  out[#out + 1] = 'Self CPU time total: ' .. format_time(total_self)
  return table.concat(out, '\n') .. '\n'
end

-- tostring(averages): the table sorted by total CPU time
function Averages:__tostring() return self:table() end

-- averages:total_average(): one row summing every row
function Averages:total_average()
  local sum = {key = 'Total', count = 0, self_cpu_time_total = 0, cpu_time_total = 0, cpu_memory_usage = 0,
               self_cpu_memory_usage = 0, bytes_allocated = 0, bytes_freed = 0}
  for _, r in ipairs(self) do
    for k, v in pairs(r) do if type(v) == 'number' and sum[k] and k ~= 'key' then sum[k] = sum[k] + v end end
  end
  return sum
end

-- ---- exports ----
-- a JSON string
local function json_string(s)
  return '"' .. s:gsub('[%c"\\\128-\255]', function(c)
    if c == '"' then return '\\"' elseif c == '\\' then return '\\\\' end
    local b = c:byte()
    if b >= 128 then return c end
    return string.format('\\u%04x', b)
  end) .. '"'
end

-- nanoseconds as microseconds with three decimals, exactly
local function micros(ns) return string.format('%d.%03d', ns // 1000, ns % 1000) end

local CATEGORY = {op = 'cpu_op', node = 'cpu_op', range = 'user_annotation', chunk = 'pool_chunk'}

local function check_path(self, method, path)
  is_profile(self, method)
  if type(path) ~= 'string' then fail(3, 'profile:%s: path must be a string, got %s', method, type(path)) end
  if self.recording then fail(3, 'profile:%s: the profile is still recording; call it after stop', method) end
end

-- prof:export_chrome_trace(path): the recorded events as a Chrome trace
-- (JSON; chrome://tracing, https://ui.perfetto.dev): one row per thread
-- (the caller's and the pool's workers', named), each event a complete
-- event with its input shapes, call site and memory in args. Written
-- atomically (a temporary file renamed over path).
function Profile:export_chrome_trace(path)
  check_path(self, 'export_chrome_trace', path)
  local pid = self.pid or 0
  local parts = {'{"schemaVersion": 1, "displayTimeUnit": "ms", "traceEvents": [\n'}
  local first = true
  local function add(s)
    parts[#parts + 1] = (first and '' or ',\n') .. s
    first = false
  end
  add(string.format('{"ph": "M", "name": "process_name", "pid": %d, "tid": 0, "args": {"name": "th"}}', pid))
  for i, t in ipairs(self._threads) do
    add(string.format('{"ph": "M", "name": "thread_name", "pid": %d, "tid": %d, "args": {"name": %s}}',
                      pid, t.tid, json_string(t.label)))
    add(string.format('{"ph": "M", "name": "thread_sort_index", "pid": %d, "tid": %d, "args": {"sort_index": %d}}',
                      pid, t.tid, i))
  end
  for _, e in ipairs(self._events) do
    local args = {}
    if e.shapes then args[#args + 1] = '"Input Dims": ' .. shapes_text(e.shapes) end
    if e.site then args[#args + 1] = '"Call stack": ' .. json_string(e.site) end
    if self.profile_memory then
      args[#args + 1] = string.format('"Bytes allocated": %d, "Bytes freed": %d', e.alloc, e.freed)
    end
    add(string.format('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": {%s}}',
                      CATEGORY[e.kind], json_string(e.name), pid, e.tid, micros(e.start),
                      micros(e.finish - e.start), table.concat(args, ', ')))
  end
  parts[#parts + 1] = '\n]}\n'
  torch._write_atomic(path, 'profile:export_chrome_trace', function(write) write(table.concat(parts)) end)
end

-- prof:export_stacks(path, metric='self_cpu_time_total'): folded stacks for
-- flamegraph.pl and speedscope, one line per stack "site;outer;...;op N"
-- with N the metric summed over its calls in microseconds (the Lua line
-- that made the outermost call leads when with_stack was on). Written atomically.
function Profile:export_stacks(path, metric)
  check_path(self, 'export_stacks', path)
  metric = metric or 'self_cpu_time_total'
  if metric ~= 'self_cpu_time_total' then
    fail(2, "profile:export_stacks: metric must be 'self_cpu_time_total' (moontorch records CPU time), got %s",
         tostring(metric))
  end
  local events = self._events
  local child_time = self_values(events)
  local paths, sums, order = {}, {}, {}
  for i, e in ipairs(events) do
    if e.kind ~= 'chunk' then
      local name = key_of(e):gsub(';', ':')
      local p = e.parent and paths[e.parent] and paths[e.parent] .. ';' .. name or ((e.site and e.site .. ';' or '') .. name)
      paths[i] = p
      if not sums[p] then order[#order + 1] = p end
      sums[p] = (sums[p] or 0) + (e.finish - e.start) - (child_time[i] or 0)
    end
  end
  local lines = {}
  for _, p in ipairs(order) do
    local us = math.floor(sums[p] / 1e3 + 0.5)
    if us > 0 then lines[#lines + 1] = p .. ' ' .. us .. '\n' end
  end
  torch._write_atomic(path, 'profile:export_stacks', function(write) write(table.concat(lines)) end)
end

-- tostring(prof)
function Profile:__tostring()
  return string.format('torch.profiler.profile(step %d, %s, %d events)', self.step_num,
                       self.recording and 'recording' or self.running and 'waiting' or 'stopped', #self._events)
end

-- prof:events(): the recorded events, each {name, kind ('op', 'node',
-- 'range', 'chunk'), tid, start, finish (ns from the session's start),
-- parent (an index in the list), shapes, site, alloc, freed}
function Profile:events()
  is_profile(self, 'events')
  return self._events
end

return profiler
