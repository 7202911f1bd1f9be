-- fuzz/api.lua: the API fuzzer. Calls every function of torch (internal torch._* ones
-- too), torch.autograd and nn.functional, and every method and metamethod of the
-- engine's objects, with argument lists drawn from a pool of odd values; a Lua error
-- is a fine answer.
--
-- Each call is a standalone Lua script: written to FUZZ_LOG before it runs, then run,
-- so that a crash, a sanitizer report or a hang (fuzz/run_api.sh watches for those)
-- leaves its own reproduction behind. Environment: FUZZ_SEED, FUZZ_SECONDS (the
-- budget), FUZZ_CALLS (stop after that many calls: replays a run), FUZZ_LOG,
-- FUZZ_ONLY (a Lua pattern: fuzz only the names it matches), FUZZ_SKIP (names to
-- leave out, comma-separated).
local torch = require 'torch'
local nn = require 'nn'

local seed = assert(tonumber(os.getenv('FUZZ_SEED')), 'FUZZ_SEED must be set')
local seconds = tonumber(os.getenv('FUZZ_SECONDS') or '60')
local max_calls = tonumber(os.getenv('FUZZ_CALLS') or math.maxinteger)
local log_path = os.getenv('FUZZ_LOG') or 'fuzz-last-call.lua'
local only = os.getenv('FUZZ_ONLY')

-- Calls in a row for one function before the next: enough to get past its argument
-- checks now and then, few enough that a short run still reaches every function.
local CALLS_PER_TURN = 12
-- Tensors up to this many elements are read back after a call (larger results cost
-- more time than their reading tells).
local TOUCH_LIMIT = 1 << 20
-- Seconds between progress lines on stderr.
local PROGRESS_EVERY = 15
-- The most frequent errors raised by Lua itself listed at the end.
local LEADS_SHOWN = 15

-- Never fuzzed: they act on the process rather than on values.
local DENY = {
  -- process control, and descriptors (a read blocks; a close may take the fuzzer's log)
  ['torch._exit'] = true, ['torch._fork'] = true, ['torch._kill'] = true,
  ['torch._waitpid'] = true, ['torch._sleep'] = true, ['torch._usleep'] = true, ['torch._recv_msg'] = true,
  ['torch._send_msg'] = true, ['torch._socketpair'] = true, ['torch._close'] = true,
  ['torch._fsync'] = true,
  -- runs its argument as a shell command
  ['torch.PipeFile'] = true,
  -- process-wide callbacks: every later call would run a pool function instead
  ['torch._set_tracer'] = true, ['torch._set_field_hook'] = true,
  -- the thread pool's size: a huge count starts that many threads
  ['torch.set_num_threads'] = true, ['torch.setnumthreads'] = true,
  -- process-wide recording: a session a fuzzed call started would record every later call
  -- (the profiler's events, a traceback per allocation) for the rest of the run
  ['torch._profiler_start'] = true, ['torch._memory_record'] = true,
}

for name in (os.getenv('FUZZ_SKIP') or ''):gmatch('[^,%s]+') do DENY[name] = true end

-- ---- the pool: Lua expressions, so that a logged call reads as a script ----
local DTYPES = {'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16',
                'int32', 'int64', 'bool'}

local function tensor_pool()
  local pool = {}
  for _, dt in ipairs(DTYPES) do
    local d = string.format("{dtype = '%s'}", dt)
    pool[#pool + 1] = string.format("torch.tensor(3):to('%s')", dt)
    pool[#pool + 1] = string.format('torch.zeros(0, %s)', d)
    pool[#pool + 1] = string.format('torch.zeros(3, 0, %s)', d)
    pool[#pool + 1] = string.format("(torch.arange(0, 6) - 2):to('%s')", dt)
    pool[#pool + 1] = string.format("(torch.arange(0, 6) - 2):to('%s'):view(2, 3):t()", dt)
    pool[#pool + 1] = string.format("torch.arange(0, 18):to('%s'):view(1, 2, 3, 3)", dt)
  end
  local extra = {
    'torch.randn(2, 3, {requires_grad = true})',
    "torch.randn(3, {dtype = 'float64', requires_grad = true})",
    'torch.randn(2, 3, {requires_grad = true}) * 2',
    'torch.randn(1, 2, 4, 4, {requires_grad = true})',
    'torch.randn(2, 3, 4, 5)',
    'torch.tensor({0 / 0, math.huge, -math.huge, -0.0, 1e-45, 3.4e38})',
    "torch.tensor({0 / 0, math.huge, 65504, 1e-8}):to('float16')",
    'torch.ones(1, 3):expand(4, 3)',
    'torch.arange(0, 10):float():narrow(1, 3, 4)',
    'torch.randn(4, 4):narrow(2, 2, 2)',
    'torch.zeros(2, 3):as_strided({2, 3}, {0, 1})',
    'torch.tensor({math.maxinteger, math.mininteger, 0, -1})',
    'torch.tensor({1, 2, 3})',
    'torch.tensor({-1, 0, 7})',
    'torch.tensor({true, false, true})',
    "torch.tensor({255, 0, 128}):to('uint8')",
    "torch.tensor({-128, 127}):to('int8')",
    'torch.zeros(0, 1 << 40)',
  }
  for _, e in ipairs(extra) do pool[#pool + 1] = e end
  return pool
end

local POOL = {
  tensor = tensor_pool(),
  int = {'0', '1', '2', '3', '-1', '-2', '4', 'math.maxinteger', 'math.mininteger', '1 << 62',
         '-(1 << 62) + 1', '1 << 31', '(1 << 31) - 1', '1 << 32', '65536'},
  float = {'0 / 0', 'math.huge', '-math.huge', '0.5', '-0.0', '1e308', '1e-310', '2.5', '-1.5',
           '3.0', '2^31', '2^63', '-2^63', '1e19'},
  string = {"''", "'float32'", "'int64'", "'bool'", "'float16'", "'uint8'", "'nearest'",
            "'bilinear'", "'reflect'", "'replicate'", "'circular'", "'constant'", "'mean'",
            "'sum'", "'none'", "'x'", "'%s%d%n'", "string.rep('a', 4096)", "'nan'", "'1e308'",
            "'fuzz.t7'", "'\\0'"},
  size = {'{}', '{0}', '{3, 0}', '{math.maxinteger, 2}', '{-2, 3}', '{2, 3}', '{1, 2, 3, 3}', '{6}',
          '{-1}', '{math.mininteger}', '{2^31, 2^31}', '{1 << 62, 1 << 62}', '{3, -1}', '{0, 1 << 62}'},
  table = {'{1, {2, 3}}', '{{}, 2}', '{{-1}, {1, -1}}', '{{math.mininteger, math.maxinteger}}',
           '{{2, 1}}', '{{1, 2}, {3, 4}}', '{0.5, 0 / 0}', '{true, false}',
           '{torch.ones(2, 3), torch.zeros(2, 3)}',
           "{torch.ones(2), torch.ones(3, {dtype = 'int8'})}", '{torch.ones(2), 5}',
           '{torch.tensor({true, false})}',
           '{{{{{{{{{{{{{{{{{{{{1}}}}}}}}}}}}}}}}}}}}',
           "{dtype = 'int8'}", "{dtype = 'float64', requires_grad = true}", "{dtype = 'nope'}",
           '{dim = 1, keepdim = true}', '{dim = math.mininteger}',
           "{mode = 'reflect', value = 0 / 0}", "{reduction = 'sum', weight = torch.ones(3)}",
           '{p = 2, eps = 0, training = true}', '{stride = 0, padding = -1, dilation = math.maxinteger}',
           '{kernel_size = 2, stride = 1}', "{size = {3, 3}, mode = 'bilinear', align_corners = true}",
           '{scale_factor = 1e308}', '{generator = torch.Generator()}',
           '{retain_graph = true, create_graph = true}', '{ignore_index = -1, label_smoothing = 0.5}',
           -- a length no table has, told to C code (which must check it); Lua code gets 2,
           -- for a Lua loop to #t, as any Lua library writes, would only exhaust memory
           "setmetatable({}, {__len = function() return debug.getinfo(2, 'S').what == 'C' and math.maxinteger or 2 end})",
           "setmetatable({2, 3}, {__index = function() error('fuzz: __index raised') end})",
           -- (ipairs stops at the first nil: these end at 3)
           'setmetatable({}, {__index = function(_, k) collectgarbage() if k ~= 3 then return 2 end end})',
           'setmetatable({}, {__index = function(_, k) if k ~= 3 then return torch.ones(2) end end})'},
  other = {'nil', 'true', 'false', 'function() end', 'function(...) return ... end',
           "function() error('fuzz: raised in a callback') end", 'function(x) return x * 2 end',
           'function() return torch.ones(2) end', 'function() collectgarbage() end',
           'coroutine.create(function() end)', 'nn.Linear(2, 3)'},
  -- the engine's other objects, each the "self" of its own methods
  storage = {'torch.zeros(3):storage()', 'torch.zeros(0):storage()'},
  node = {'(torch.ones(2, {requires_grad = true}) * 2).grad_fn'},
  generator = {'torch.Generator()'},
  timer = {'torch.Timer()'},
  torch_size = {'torch.zeros(2, 3):size()'},
}

-- How often each kind of value is drawn, in a list of one kind per weight unit.
local KIND_WEIGHTS = {tensor = 35, int = 22, float = 8, string = 7, size = 9, table = 9, other = 7,
                      storage = 1, node = 1, generator = 1, timer = 1, torch_size = 1}
local WEIGHTED_KINDS = {}
for _, kind in ipairs({'tensor', 'int', 'float', 'string', 'size', 'table', 'other', 'storage',
                       'node', 'generator', 'timer', 'torch_size'}) do
  for _ = 1, KIND_WEIGHTS[kind] do WEIGHTED_KINDS[#WEIGHTED_KINDS + 1] = kind end
end
-- Argument counts, one entry per weight unit: mostly one to three.
local ARITIES = {0, 1, 1, 1, 1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 4, 5, 5}
-- the small integers, drawn more often than the odd ones (dims, counts, indices)
local SMALL_INTS = 7

local function draw(kind)
  local list = POOL[kind]
  if kind == 'int' and math.random() < 0.6 then return list[math.random(SMALL_INTS)] end
  return list[math.random(#list)]
end

-- ---- the functions ----
-- Each base is a table of functions, named in a call's script by `path`; `self` is
-- the kind of value its functions mostly take first.
local BASES = {
  {path = 'torch'}, {path = 'torch.autograd'}, {path = 'torch.utils'}, {path = 'F'},
  {path = 'torch.Tensor', enum = 'torch._methods', self = 'tensor'},
  {path = 'torch._tensor_mt', self = 'tensor'},
}
-- the metatables (and their __index tables) of the other objects
for _, kind in ipairs({'storage', 'node', 'generator', 'timer', 'torch_size'}) do
  local mt = string.format('getmetatable(%s)', POOL[kind][1])
  BASES[#BASES + 1] = {path = mt, self = kind}
  BASES[#BASES + 1] = {path = mt .. '.__index', self = kind}
end

local HEADER = [[
local torch = require 'torch'
local nn = require 'nn'
local F = nn.functional
-- reads every element of each tensor given (or held in a table given), and runs
-- backward through those that require grad: a wrong view or graph shows here
local function touch(...)
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    local list = type(v) == 'table' and getmetatable(v) == nil and v or {v}
    for _, t in pairs(list) do
      if torch.is_tensor(t) then
        if t:numel() <= %d then pcall(t.clone, t) end
        if t.requires_grad then pcall(function() t:sum():backward() end) end
      end
    end
  end
end
]]
HEADER = HEADER:format(TOUCH_LIMIT)

local function evaluate(expr)
  return assert(load('return ' .. expr, '=' .. expr, 't', setmetatable({F = nn.functional}, {__index = _G})))()
end

local function callable(v)
  if type(v) == 'function' then return true end
  local mt = getmetatable(v)
  return type(v) == 'table' and type(mt) == 'table' and mt.__call ~= nil
end

local KEYWORDS = {}
for word in ('and break do else elseif end false for function goto if in local nil not or '
             .. 'repeat return then true until while'):gmatch('%a+') do KEYWORDS[word] = true end

-- path.name, or path["name"] where name is no identifier (x:repeat is path["repeat"])
local function member(path, name)
  if name:match('^[%a_][%w_]*$') and not KEYWORDS[name] then return path .. '.' .. name end
  return string.format('%s[%q]', path, name)
end

local function collect_targets()
  local targets = {}
  torch._load_all()   -- the modules torch loads on first use too
  for _, base in ipairs(BASES) do
    local tbl = evaluate(base.enum or base.path)
    if type(tbl) == 'table' then
      local names = {}
      for name, v in pairs(tbl) do
        if type(name) == 'string' and callable(v) and name ~= '__name' then names[#names + 1] = name end
      end
      table.sort(names)
      for _, name in ipairs(names) do
        local path = member(base.path, name)
        if not DENY[path] and (not only or path:find(only)) then
          targets[#targets + 1] = {path = path, self = base.self}
        end
      end
    end
  end
  return targets
end

-- ---- one call ----
local function script(target, call_number)
  local lines = {string.format('-- moontorch API fuzzer: seed %d, call %d: %s', seed, call_number, target.path),
                 HEADER, string.format('torch.manual_seed(%d)', call_number)}
  local args = {}
  for i = 1, ARITIES[math.random(#ARITIES)] do
    local kind = WEIGHTED_KINDS[math.random(#WEIGHTED_KINDS)]
    if i == 1 and target.self and math.random() < 0.85 then kind = target.self end
    args[i] = 'a' .. i
    lines[#lines + 1] = string.format('local a%d = %s', i, draw(kind))
  end
  local list = table.concat(args, ', ')
  lines[#lines + 1] = string.format('local r = table.pack(pcall(%s%s))', target.path, #args > 0 and ', ' .. list or '')
  lines[#lines + 1] = string.format('touch(%s%stable.unpack(r, 2, r.n))', list, #args > 0 and ', ' or '')
  lines[#lines + 1] = 'return r'
  return table.concat(lines, '\n') .. '\n'
end

-- The log is rewritten in place (cheaper than a new file per call), padded with
-- spaces over the end of a longer previous call; flushed, it outlives a crash.
local log_file = assert(io.open(log_path, 'w'))
local log_length = 0
local function write_log(text)
  log_file:seek('set')
  log_file:write(text, string.rep(' ', log_length - #text))
  log_file:flush()
  log_length = math.max(log_length, #text)
end

-- a call may change the process's defaults; the next one starts from the usual ones
local function restore_defaults()
  torch.set_default_dtype('float32')
  torch.set_grad_enabled(true)
  torch.autograd.set_detect_anomaly(false)
end

-- Errors raised by Lua itself inside the library (not by a check): a missing check
-- somewhere; counted by message, and listed at the end as leads, not failures.
local unclear = {}
local function note_error(err)
  local msg = tostring(err)
  if msg:find('attempt to ') or msg:find('stack overflow') then
    local where, what = msg:match('^(.-:%d+: )(.*)$')       -- the place stays, the values go
    local key = ((where or '') .. (what or msg):gsub('%d+%.?%d*', 'N')):sub(1, 160)
    unclear[key] = (unclear[key] or 0) + 1
  end
end

local function print_unclear()
  local keys = {}
  for k in pairs(unclear) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b) return unclear[a] > unclear[b] end)
  if #keys > 0 then io.stderr:write('fuzz: errors raised by Lua, not by a check (leads):\n') end
  for i = 1, math.min(#keys, LEADS_SHOWN) do io.stderr:write(string.format('  %6d  %s\n', unclear[keys[i]], keys[i])) end
end

-- ---- the run ----
math.randomseed(seed)
local targets = collect_targets()
if #targets == 0 then error('fuzz: no function matches FUZZ_ONLY=' .. tostring(only)) end
io.stderr:write(string.format('fuzz: seed %d, %d functions, %s\n', seed, #targets,
  max_calls < math.maxinteger and max_calls .. ' calls' or seconds .. ' s'))

local start = os.time()
local deadline = start + seconds
local calls, failed_calls, next_progress = 0, 0, start + PROGRESS_EVERY
local turn = 0
while calls < max_calls do
  turn = turn + 1
  local index = (turn - 1) % #targets + 1
  if index == 1 and turn > 1 then collectgarbage() end    -- each round: finalizers run, memory stays flat
  local target = targets[index]
  for _ = 1, CALLS_PER_TURN do
    if calls >= max_calls then break end
    calls = calls + 1
    local text = script(target, calls)
    write_log(text)
    local r = assert(load(text, '=' .. target.path, 't'))()
    if not r[1] then failed_calls = failed_calls + 1; note_error(r[2]) end
    restore_defaults()
  end
  local now = os.time()
  if max_calls == math.maxinteger and now >= deadline then break end
  if now >= next_progress then
    io.stderr:write(string.format('fuzz: %d calls (%d/s), %d raised, at %s\n', calls,
      calls // math.max(1, now - start), failed_calls, target.path))
    next_progress = now + PROGRESS_EVERY
  end
end
print_unclear()
io.stderr:write(string.format('fuzz: done, %d calls to %d functions in %d s, %d raised a Lua error\n',
  calls, math.min(turn, #targets), os.time() - start, failed_calls))
