-- torch.progress(i, n, {text=, width=}): a progress bar like Torch7's
-- xlua.progress: rate, elapsed and ETA, and a live text (the loss). On a
-- terminal it redraws one line; otherwise it prints a plain line at every
-- tenth of the way (and at the end).
local torch = require 'torch'
local data = require 'data'

local state = {}

local function fmt_time(s)
  s = math.floor(s + 0.5)
  if s >= 3600 then return string.format('%d:%02d:%02d', s // 3600, s % 3600 // 60, s % 60) end
  return string.format('%d:%02d', s // 60, s % 60)
end

function torch.progress(i, n, opts)
  opts = opts or {}
  local now = torch.clock()
  if i <= 1 or not state.start or state.n ~= n or i < (state.i or 0) then
    state = {start = now, n = n, next_plain = 1, tty = torch._isatty(1)}
  end
  state.i = i
  local elapsed = now - state.start
  local rate = elapsed > 0 and i / elapsed or 0
  local eta = rate > 0 and (n - i) / rate or 0
  local text = opts.text and ('  ' .. opts.text) or ''
  if state.tty then
    local width = opts.width or 30
    local done = math.floor(width * i / n)
    io.write(string.format('\r [%s%s] %d/%d  %.1f it/s  %s < %s%s\27[K', string.rep('=', done),
                           string.rep('.', width - done), i, n, rate, fmt_time(elapsed), fmt_time(eta), text))
    if i >= n then io.write('\n') end
    io.flush()
  else
    local tenth = math.max(1, n // 10)
    if i >= n or i >= state.next_plain * tenth then
      print(string.format(' %d/%d (%d%%)  %.1f it/s  %s elapsed, %s left%s', i, n, math.floor(100 * i / n), rate,
                          fmt_time(elapsed), fmt_time(eta), text))
      state.next_plain = i // tenth + 1
    end
  end
end
data.progress = torch.progress
return data
