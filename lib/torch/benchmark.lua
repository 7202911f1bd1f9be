-- torch.utils.benchmark: Timer and Measurement, as PyTorch's
-- torch.utils.benchmark (the Python timeit module's model): a statement timed
-- in blocks of runs, reported as the median and interquartile range per run.
--   local Timer = torch.utils.benchmark.Timer
--   local t = Timer{stmt = function() a:mm(b) end, label = 'mm 256'}
--   print(t:blocked_autorange({min_run_time = 0.2}))
local torch = require 'torch'

local benchmark = {}
torch.utils = torch.utils or {}
torch.utils.benchmark = benchmark

local clock = torch.clock

-- the GPU's queued work counts in the time, as PyTorch's Timer synchronizes
local function sync()
  if package.loaded['torch.device'] and torch.cuda.is_available() then torch.cuda.synchronize() end
end

-- ---- Measurement ----

local Measurement = {}
Measurement.__index = Measurement
Measurement.__name = 'torch.utils.benchmark.Measurement'
benchmark.Measurement = Measurement

-- quantile q of a sorted array, linear between neighbours (PyTorch's and numpy's default)
local function quantile(sorted, q)
  local pos = (#sorted - 1) * q + 1
  local lo = math.floor(pos)
  local hi = math.min(lo + 1, #sorted)
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo)
end

local function new_measurement(number_per_run, raw_times, spec)
  local m = setmetatable({number_per_run = number_per_run, raw_times = raw_times, label = spec.label,
                          sub_label = spec.sub_label, description = spec.description, num_threads = spec.num_threads,
                          _spec = spec}, Measurement)
  local times, sum = {}, 0
  for i, t in ipairs(raw_times) do
    times[i] = t / number_per_run
    sum = sum + times[i]
  end
  m.times = times
  local sorted = {table.unpack(times)}
  table.sort(sorted)
  m.mean = sum / #times
  m.median = quantile(sorted, 0.5)
  m._p25, m._p75 = quantile(sorted, 0.25), quantile(sorted, 0.75)
  m.iqr = m._p75 - m._p25
  return m
end

-- ns, us, ms or s, as PyTorch's select_unit picks for t seconds
local function unit_of(t)
  local k = t > 0 and math.floor(math.log(t, 10) / 3) or -3
  if k <= -3 then return 'ns', 1e-9 elseif k == -2 then return 'us', 1e-6 elseif k == -1 then return 'ms', 1e-3 end
  return 's', 1
end

-- m:meets_confidence(threshold=0.1): the IQR is below threshold times the median
function Measurement:meets_confidence(threshold)
  return self.iqr / self.median < (threshold or 0.1)
end

-- tostring(m): as PyTorch prints a Measurement: the title (label, else the
-- statement), the setup, median, IQR, and the number of measurements and of
-- runs in each, with PyTorch's warning when the IQR is over 10% of the median.
function Measurement:__tostring()
  local spec = self._spec
  local n = #self.times
  local unit, scale = unit_of(self.median)
  local lines = {'<torch.utils.benchmark.Measurement>', spec.title}
  if spec.description then lines[#lines + 1] = spec.description end
  if spec.setup_str then lines[#lines + 1] = spec.setup_str end
  lines[#lines + 1] = string.format('  %s%.2f %s', n > 1 and 'Median: ' or '', self.median / scale, unit)
  if n >= 4 then
    lines[#lines + 1] = string.format('  IQR:    %.2f %s (%.2f to %.2f)', self.iqr / scale, unit, self._p25 / scale,
                                      self._p75 / scale, unit)
  end
  lines[#lines + 1] = string.format('  %d measurement%s, %d runs %s %d thread%s', n, n > 1 and 's' or '',
                                    self.number_per_run, n > 1 and 'per measurement,' or ',', self.num_threads,
                                    self.num_threads > 1 and 's' or '')
  if n >= 4 and not self:meets_confidence(0.25) then
    lines[#lines + 1] = string.format('  WARNING: Interquartile range is %.1f%% of the median measurement.\n' ..
                                      '           This suggests significant environmental influence.',
                                      self.iqr / self.median * 100)
  elseif n >= 4 and not self:meets_confidence(0.1) then
    lines[#lines + 1] = string.format('  WARNING: Interquartile range is %.1f%% of the median measurement.\n' ..
                                      '           This could indicate system fluctuation.', self.iqr / self.median * 100)
  end
  return table.concat(lines, '\n')
end

-- ---- Timer ----

local Timer = {}
Timer.__index = Timer
Timer.__name = 'torch.utils.benchmark.Timer'

local timer_keys = {stmt = true, setup = true, globals = true, label = true, sub_label = true, description = true,
                    num_threads = true}

-- code: a function, or Lua source (a statement, or an expression as in
-- PyTorch's 'x + 1') compiled in env (its globals first, then _G's)
local function compile(what, code, env)
  if type(code) == 'function' then return code end
  if type(code) ~= 'string' then
    error(string.format('torch.utils.benchmark.Timer: %s must be a function or a string of Lua code, got %s', what,
                        torch.type(code)), 3)
  end
  local f = load('return ' .. code, '=' .. what, 't', env)   -- an expression ('x + 1'), as the REPL reads one
  local err
  if not f then f, err = load(code, '=' .. what, 't', env) end
  if not f then error('torch.utils.benchmark.Timer: ' .. what .. ' does not compile: ' .. err, 3) end
  return f
end

-- torch.utils.benchmark.Timer{stmt=, setup=, globals=, label=, sub_label=,
-- description=, num_threads=1}: a timer of stmt (a function, or a string
-- of Lua code run with globals' names visible), after setup (likewise,
-- run once before each measurement loop). Time it with t:timeit(n) or
-- t:blocked_autorange({min_run_time=0.2}); both return a Measurement (fields
-- times, mean, median, iqr, number_per_run; it prints as PyTorch's).
-- num_threads sets torch's intra-op threads while timing.
local function new_timer(_, opts)
  if type(opts) == 'string' or type(opts) == 'function' then opts = {stmt = opts} end
  if type(opts) ~= 'table' then
    error('torch.utils.benchmark.Timer: expected Timer{stmt=, setup=, globals=, label=, num_threads=}, got ' ..
          torch.type(opts), 2)
  end
  for k in pairs(opts) do
    if not timer_keys[k] then
      error("torch.utils.benchmark.Timer: unknown option '" .. tostring(k) ..
            "' (options: stmt, setup, globals, label, sub_label, description, num_threads)", 2)
    end
  end
  local stmt = opts.stmt
  if stmt == nil then error('torch.utils.benchmark.Timer: stmt is required (a function or a string of Lua code)', 2) end
  local globals = opts.globals
  if globals ~= nil and type(globals) ~= 'table' then
    error('torch.utils.benchmark.Timer: globals must be a table of names, got ' .. torch.type(globals), 2)
  end
  local env = setmetatable({}, {__index = function(_, k)
    if globals and globals[k] ~= nil then return globals[k] end
    return _G[k]
  end})
  local threads = opts.num_threads or 1
  if math.type(threads) ~= 'integer' or threads < 1 then
    error('torch.utils.benchmark.Timer: num_threads must be a positive integer, got ' .. tostring(threads), 2)
  end
  local self = setmetatable({}, Timer)
  self._stmt = compile('stmt', stmt, env)
  self._setup = opts.setup ~= nil and compile('setup', opts.setup, env) or nil
  local title = opts.label
  if title == nil then title = type(stmt) == 'string' and stmt or 'stmt (a function)' end
  if opts.sub_label then title = title .. ': ' .. opts.sub_label end
  local setup_str
  if type(opts.setup) == 'string' and opts.setup ~= '' then
    setup_str = opts.setup:find('\n') and 'setup:\n  ' .. opts.setup:gsub('\n', '\n  ') or 'setup: ' .. opts.setup
  end
  self._spec = {label = opts.label, sub_label = opts.sub_label, description = opts.description, num_threads = threads,
                title = title, setup_str = setup_str}
  return self
end
benchmark.Timer = setmetatable(Timer, {__call = new_timer,
                                       __tostring = function() return 'torch.utils.benchmark.Timer' end})
torch._help_alias(Timer, new_timer)   -- help(Timer) shows new_timer's text

-- seconds for number runs of stmt
local function run(self, number)
  local stmt = self._stmt
  sync()
  local start = clock()
  for _ = 1, number do stmt() end
  sync()
  return clock() - start
end

-- runs f with torch's threads set to the timer's, then puts them back (also on error)
local function with_threads(self, f, ...)
  local before = torch.getnumthreads()
  torch.setnumthreads(self._spec.num_threads)
  local r = table.pack(pcall(f, ...))
  torch.setnumthreads(before)
  if not r[1] then error(r[2], 0) end
  return table.unpack(r, 2, r.n)
end

local function check_self(self, name)
  if getmetatable(self) ~= Timer then
    error('torch.utils.benchmark.Timer:' .. name .. ": called with '.'; use t:" .. name .. '(...)', 3)
  end
end

-- t:timeit(number=1000000): one measurement of number runs of stmt (after setup)
function Timer:timeit(number)
  check_self(self, 'timeit')
  number = number or 1000000
  if math.type(number) ~= 'integer' or number < 1 then
    error('torch.utils.benchmark.Timer:timeit: number must be a positive integer, got ' .. tostring(number), 2)
  end
  return with_threads(self, function()
    if self._setup then self._setup() end
    run(self, math.min(number, 10))              -- warm-up
    return new_measurement(number, {run(self, number)}, self._spec)
  end)
end

-- t:blocked_autorange({min_run_time=0.2}): PyTorch's blocked_autorange: the
-- number of runs per block grows tenfold until the clock's overhead is under
-- 0.01% of a block and a block takes min_run_time/1000, then blocks run until
-- min_run_time seconds have passed; each block is one measurement.
function Timer:blocked_autorange(opts)
  check_self(self, 'blocked_autorange')
  local min_run_time = 0.2
  if type(opts) == 'number' then min_run_time = opts
  elseif type(opts) == 'table' then
    for k in pairs(opts) do
      if k ~= 'min_run_time' then
        error("torch.utils.benchmark.Timer:blocked_autorange: unknown option '" .. tostring(k) ..
              "' (options: min_run_time)", 2)
      end
    end
    min_run_time = opts.min_run_time or min_run_time
  elseif opts ~= nil then
    error('torch.utils.benchmark.Timer:blocked_autorange: expected {min_run_time=}, got ' .. torch.type(opts), 2)
  end
  if type(min_run_time) ~= 'number' or not (min_run_time > 0) then
    error('torch.utils.benchmark.Timer:blocked_autorange: min_run_time must be a number > 0, got ' ..
          tostring(min_run_time), 2)
  end
  return with_threads(self, function()
    if self._setup then self._setup() end
    local overheads = {}
    for i = 1, 5 do overheads[i] = run(self, 0) end
    table.sort(overheads)
    local overhead, number = overheads[3], 1
    while true do
      local taken = run(self, number)
      if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time then break end
      if number * 10 > 2147483647 then break end
      number = number * 10
    end
    local times, total = {}, 0
    while total < min_run_time do
      local t = run(self, number)
      times[#times + 1] = t
      total = total + t
    end
    return new_measurement(number, times, self._spec)
  end)
end

return benchmark
