-- torch.progress: a progress bar like Torch7's xlua.progress: rate, elapsed
-- and ETA, and a live text (the loss). On a terminal it redraws one line (at
-- most REDRAWS_PER_S times a second); otherwise it prints a plain line at
-- every tenth of the way (and at the end), so logs stay readable.
local torch = require 'torch'
local data = require 'data'

-- terminal redraws per second at most: drawing every step of a fast loop costs more than the step
local REDRAWS_PER_S = 10
-- the bar's width in characters, unless opts.width says
local WIDTH = 30

local function fmt_time(s)
  s = math.floor(s + 0.5)
  if s >= 3600 then return string.format('%d:%02d:%02d', s // 3600, s % 3600 // 60, s % 60) end
  return string.format('%d:%02d', s // 60, s % 60)
end

-- a bar of n steps (nil: unknown) whose clock starts now at step i0: the
-- steps up to i0 were not timed, so the rate counts those after it
local function new_bar(n, i0, opts)
  local clock = opts.clock or torch.clock
  return {n = n, i = i0, i_first = i0, clock = clock, t_first = clock(), tenths = 0, next_plain = 1,
          last_draw = -math.huge, tty = opts.tty == nil and torch._isatty(1) or opts.tty, width = opts.width or WIDTH}
end

-- draws step i of bar (final: the last step, whatever n says)
local function draw(bar, i, text, final)
  local now = bar.clock()
  bar.i = i
  local n = bar.n
  final = final or (n ~= nil and i >= n)
  local elapsed = now - bar.t_first
  local rate = elapsed > 0 and (i - bar.i_first) / elapsed or 0
  text = text and ('  ' .. text) or ''
  if bar.tty then
    if not final and now - bar.last_draw < 1 / REDRAWS_PER_S then return end
    bar.last_draw = now
    local line
    if n then
      local done = math.max(0, math.min(bar.width, math.floor(bar.width * i / n)))
      local eta = rate > 0 and fmt_time((n - i) / rate) or '?'
      line = string.format('\r [%s%s] %d/%d  %.1f it/s  %s < %s%s\27[K', string.rep('=', done),
                           string.rep('.', bar.width - done), i, n, rate, fmt_time(elapsed), eta, text)
    else
      line = string.format('\r %d it  %.1f it/s  %s%s\27[K', i, rate, fmt_time(elapsed), text)
    end
    io.write(line)
    if final then io.write('\n') end
    io.flush()
  elseif n then
    -- a line as each tenth is reached: steps ceil(n/10), ceil(2n/10), ..., n
    local tenths = math.min(10, 10 * i // n)
    if final or tenths > bar.tenths then
      bar.tenths = tenths
      local eta = rate > 0 and fmt_time((n - i) / rate) or '?'
      print(string.format(' %d/%d (%d%%)  %.1f it/s  %s elapsed, %s left%s', i, n, math.floor(100 * i / n), rate,
                          fmt_time(elapsed), eta, text))
    end
  else
    -- no length: a line at steps 1, 2, 5, 10, 20, 50, ... and at the end
    if final or i >= bar.next_plain then
      while bar.next_plain <= i do
        local d = bar.next_plain // 10 ^ math.floor(math.log(bar.next_plain, 10) + 1e-9)
        bar.next_plain = math.tointeger(bar.next_plain * (d == 2 and 2.5 or 2)) or bar.next_plain * 2
      end
      print(string.format(' %d  %.1f it/s  %s elapsed%s', i, rate, fmt_time(elapsed), text))
    end
  end
end

-- the bar of the (i, n) form: one at a time; a new one starts when n changes,
-- i goes back, or 0 or 1 comes again
local current

-- the iterator and length of what progress wraps: what x:iter() yields for a
-- loader, a sampler or an iterable dataset; (i, item) for a map-style dataset
-- or a Lua array; i for a number of steps; a function's own values
local function source_of(x, n)
  if type(x) == 'number' then
    if math.type(x) ~= 'integer' or x < 0 then
      error('torch.progress: a number of steps must be a non-negative integer, got ' .. tostring(x), 4)
    end
    local i = 0
    return function()
      i = i + 1
      if i <= x then return i end
    end, n or x
  end
  if type(x) == 'function' then return x, n end
  if type(x) == 'table' then
    local len = n
    if len == nil then
      local ok, l = pcall(data.len, x)
      len = ok and math.type(l) == 'integer' and l or nil
    end
    if type(x.iter) == 'function' then return x:iter(), len end
    if type(x.get) == 'function' or getmetatable(x) == nil then   -- a map-style dataset, a Lua array
      local i, size = 0, data.len(x)
      return function()
        i = i + 1
        if i <= size then return i, x[i] end
      end, len
    end
  end
  error('torch.progress: expected (i, n), a loader, dataset, sampler, Lua array, number of steps or iterator ' ..
        'function, got ' .. torch.type(x), 4)
end

-- wraps an iterable: yields what it yields, drawing step k when item k + 1 is
-- asked for (step k is done then); the clock starts before anything is drawn
-- from the iterable (a loader's first batch and its workers' start count)
local function wrap(x, n, opts)
  if n ~= nil and (math.type(n) ~= 'integer' or n < 0) then
    error('torch.progress: n must be a non-negative integer number of steps, got ' .. tostring(n), 3)
  end
  local it, len = source_of(x, n)
  if opts.disable then                  -- the steps without a bar (tqdm's disable=True)
    local step = 0
    return function()
      if n ~= nil and step >= n then return nil end
      step = step + 1
      return it()
    end
  end
  local bar = new_bar(n, 0, opts)
  bar.n = len
  local step, finished = 0, false
  local function text() if type(opts.text) == 'function' then return opts.text() end return opts.text end
  return function()
    if finished then return nil end
    if step > 0 then draw(bar, step, text()) end  -- (the last step of a known length draws the end)
    if n ~= nil and step >= n then                -- n steps asked for: the rest is left
      finished = true
      return nil
    end
    local a, b, c = it()
    if a == nil then
      finished = true
      if step > 0 and (len == nil or step < len) then draw(bar, step, text(), true) end
      return nil
    end
    step = step + 1
    return a, b, c
  end
end

-- torch.progress(i, n, {text=, width=, clock=}): draws step i of n with a live
-- text; torch.progress(0, n) before a loop starts the clock at its start (else
-- it starts at the first call, and elapsed leaves out the steps before it).
-- torch.progress(x, [n], {text=function or string, width=, clock=}): an
-- iterator yielding what x yields -- a loader (i, batch, as loader:iter()), a
-- dataset or Lua array (i, item), a sampler (idx), a number of steps (i), an
-- iterator function -- drawing the bar as each step completes, timed from the
-- loop's start; text (a function) is called then, e.g. to show the running
-- loss. With n, the first n steps of x. clock= replaces torch.clock (tests);
-- tty=false or true: plain lines or the redrawn bar whatever stdout is;
-- disable=true: the steps alone, no bar (all ranks but one, say).
function torch.progress(i, n, opts)
  if type(i) == 'number' and type(n) == 'number' then
    opts = opts or {}
    if n < 1 then error('torch.progress: n must be a positive number of steps, got ' .. tostring(n), 2) end
    local bar = current
    if not bar or bar.n ~= n or i < bar.i or (i == bar.i and i <= 1) then
      bar = new_bar(n, i, opts)
      current = bar
    end
    if opts.clock then bar.clock = opts.clock end
    if opts.width then bar.width = opts.width end
    return draw(bar, i, opts.text)
  end
  if type(n) == 'table' then n, opts = nil, n end
  local it = wrap(i, n, opts or {})           -- (no tail call: wrap's errors name the caller's line)
  return it
end
data.progress = torch.progress
return data
