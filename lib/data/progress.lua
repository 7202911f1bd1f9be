-- torch.progress: a progress bar like Torch7's xlua.progress: rate, elapsed
-- and ETA, and a live text (the loss). On a terminal it redraws one line (at
-- most REDRAWS_PER_S times a second); otherwise it prints a plain line at
-- every tenth of the way (and at the end), so logs stay readable.
local torch = require 'torch'
local data = require 'data'

-- terminal redraws per second at most: drawing every step of a fast loop costs more than the step
local REDRAWS_PER_S = 10

local state = {}

local function fmt_time(s)
  s = math.floor(s + 0.5)
  if s >= 3600 then return string.format('%d:%02d:%02d', s // 3600, s % 3600 // 60, s % 60) end
  return string.format('%d:%02d', s // 60, s % 60)
end

-- draws step i of n (a new bar starts when n changes, i goes back, or 0 or 1 comes
-- again). The rate counts the steps done since the bar's first call over the time
-- since then: the steps up to that call were not timed, so they are not counted.
local function draw(i, n, opts)
  local now = torch.clock()
  if state.n ~= n or i < state.i or (i == state.i and i <= 1) then
    state = {n = n, i_first = i, t_first = now, next_plain = 1, last_draw = -math.huge, tty = torch._isatty(1)}
  end
  state.i = i
  local elapsed = now - state.t_first
  local rate = elapsed > 0 and (i - state.i_first) / elapsed or 0
  local eta = rate > 0 and fmt_time((n - i) / rate) or '?'
  local text = opts.text and ('  ' .. opts.text) or ''
  if state.tty then
    if i < n and now - state.last_draw < 1 / REDRAWS_PER_S then return end
    state.last_draw = now
    local width = opts.width or 30
    local done = math.floor(width * i / n)
    io.write(string.format('\r [%s%s] %d/%d  %.1f it/s  %s < %s%s\27[K', string.rep('=', done),
                           string.rep('.', width - done), i, n, rate, fmt_time(elapsed), eta, text))
    if i >= n then io.write('\n') end
    io.flush()
  else
    local tenth = math.max(1, n // 10)
    if i >= n or i >= state.next_plain * tenth then
      print(string.format(' %d/%d (%d%%)  %.1f it/s  %s elapsed, %s left%s', i, n, math.floor(100 * i / n), rate,
                          fmt_time(elapsed), eta, text))
      state.next_plain = i // tenth + 1
    end
  end
end

-- wraps an iterable: yields what it yields, drawing the bar as steps complete (step 0
-- when the first item is asked for, which starts the clock)
local function wrap(source, n, opts)
  local it
  if type(source) == 'function' then it = source
  elseif type(source) == 'table' and type(source.iter) == 'function' then
    it, n = source:iter(), n or data.len(source)
  else
    error('torch.progress: expected (i, n), an iterator function with n, or a DataLoader', 3)
  end
  if math.type(n) ~= 'integer' or n < 1 then error('torch.progress: give the number of steps n', 3) end
  local step = 0
  local function text() return type(opts.text) == 'function' and opts.text() or opts.text end
  return function()
    draw(math.min(step, n), n, {text = step > 0 and text() or nil, width = opts.width})
    local a, b = it()
    if a == nil then return nil end
    step = step + 1
    return a, b
  end
end

-- torch.progress(i, n, {text=, width=}): draws step i of n with a live text.
-- torch.progress(loader or iterator, [n], {text=function or string}): an iterator
-- yielding what the loader's iter() (or the iterator) yields, drawing the bar after
-- each step; text (a function) is called then, e.g. to show the running loss.
function torch.progress(i, n, opts)
  if type(i) == 'number' then
    if type(n) ~= 'number' or n < 1 then error('torch.progress: n must be a positive number of steps', 2) end
    return draw(i, n, opts or {})
  end
  if type(n) == 'table' then n, opts = nil, n end
  return wrap(i, n, opts or {})
end
data.progress = torch.progress
return data
