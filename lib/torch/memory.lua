-- torch.memory: which tensor storages are live, how large, and which Lua line
-- allocated them -- PyTorch's memory snapshot and summary for moontorch's
-- storages (the CPU's and the GPUs'). docs/profiling.md (Memory) hunts a leak with it.
local torch = require 'torch.core'

local memory = {}
torch.memory = memory

-- The source prefix of lib/ ("@./lib/", this file being lib/torch/memory.lua):
-- frames there are the library's, left out of an entry's frames.
local LIB_PREFIX = debug.getinfo(1, 'S').source:gsub('torch/memory%.lua$', '')
-- The site of the storages that have no traceback (allocated while not
-- recording, or by a worker thread).
local NO_TRACEBACK = '(no traceback)'

-- The most full collections a snapshot runs: a finalizer that drops the last
-- reference to more tensors (an autograd node's hook, a custom Function's
-- context) frees them only at the next collection, so a chain of them takes one
-- collection a link.
local MAX_COLLECTIONS = 100

-- Collects until a collection frees no tensor memory (or MAX_COLLECTIONS).
local function collect()
  local before = torch.memory_stats().allocated
  for _ = 1, MAX_COLLECTIONS do
    collectgarbage('collect')
    local now = torch.memory_stats().allocated
    if now >= before then return end
    before = now
  end
end

local function describe(v)
  return type(v) == 'string' and ("'" .. v .. "'") or tostring(v)
end

-- torch.memory._record_history([enabled]): starts or stops recording, for every
-- tensor storage allocated from then on, the Lua traceback of the code that
-- allocated it (the frames of torch.memory_snapshot). enabled as PyTorch's
-- torch.cuda.memory._record_history: true, 'all' or 'state' (or no argument)
-- start; false or nil stop. Storages stay recorded after it stops, until freed.
-- Only the calling thread records: storages that worker threads allocate get no
-- frames, and code in a coroutine shows as the frames that resumed it. Off, it
-- costs one branch per allocation.
function memory._record_history(...)
  local n, enabled = select('#', ...), ...
  if n > 1 then error('torch.memory._record_history: takes one argument (enabled), got ' .. n, 2) end
  if n == 0 or enabled == true or enabled == 'all' or enabled == 'state' then
    torch._memory_record(true, LIB_PREFIX)
  elseif enabled == false or enabled == nil then
    torch._memory_record(false)
  else
    error("torch.memory._record_history: enabled must be true, false, nil, 'all' or 'state', got " ..
          describe(enabled), 2)
  end
end

-- Groups a snapshot's entries by site: {site=, frames=, bytes=, count=, storages=}
-- per site, the most bytes first.
local function by_site(list)
  local groups, of_site = {}, {}
  for _, e in ipairs(list) do
    local site = e.site or NO_TRACEBACK
    local g = of_site[site]
    if not g then
      g = {site = site, frames = e.frames, bytes = 0, count = 0, storages = {}}
      of_site[site] = g
      groups[#groups + 1] = g
    end
    g.bytes, g.count = g.bytes + e.bytes, g.count + 1
    g.storages[g.count] = e
  end
  table.sort(groups, function(a, b)
    if a.bytes ~= b.bytes then return a.bytes > b.bytes end
    if a.count ~= b.count then return a.count > b.count end
    return a.site < b.site
  end)
  return groups
end

-- torch.memory_snapshot([opts]), torch.memory.snapshot([opts]): every live tensor
-- storage, on the CPU and on GPUs, the largest first, each as {bytes=, dtype=,
-- shape=, device=, site=, frames=, full_frames=}: bytes its size, dtype and shape
-- those of the tensor it was allocated for (a storage has no shape: unrecorded
-- ones give {element count}), device 'cpu' or 'cuda:0', and for storages allocated
-- while torch.memory._record_history was on, frames (the Lua traceback, innermost
-- first, as "file:line in function 'f'", without lib/'s frames when the user's
-- code has any), full_frames (every Lua frame) and site (frames[1]); others have
-- frames = nil. Mapped files have mapped = true. Entries of one site share their
-- frames tables. opts: group_by='site' returns groups instead, {site=, frames=,
-- bytes=, count=, storages=} the most bytes first (site '(no traceback)' for the
-- rest); collect=false skips the full garbage collections that run first (until
-- one frees no tensor memory: tensors no longer reachable are not listed).
function torch.memory_snapshot(opts)
  opts = torch._check_options('torch.memory_snapshot', opts, {group_by = 'string', collect = 'boolean'}, 2)
  if opts.group_by ~= nil and opts.group_by ~= 'site' then
    error("torch.memory_snapshot: group_by must be 'site', got " .. describe(opts.group_by), 2)
  end
  if opts.collect ~= false then collect() end
  local list = torch._memory_live()
  for _, e in ipairs(list) do e.site = e.frames and e.frames[1] end
  table.sort(list, function(a, b)
    if a.bytes ~= b.bytes then return a.bytes > b.bytes end
    return (a.site or '') < (b.site or '')
  end)
  if opts.group_by == 'site' then return by_site(list) end
  return list
end
memory.snapshot = torch.memory_snapshot

-- "1.50 MiB": bytes in the largest binary unit that keeps them at least 1
local function format_bytes(n)
  local units, u = {'B', 'KiB', 'MiB', 'GiB', 'TiB'}, 1
  local v = n
  while v >= 1024 and u < #units do v, u = v / 1024, u + 1 end
  return u == 1 and ('%d B'):format(n) or ('%.2f %s'):format(v, units[u])
end

-- torch.memory.summary([opts]), torch.memory_summary([opts]): the live tensor
-- memory as a printable table (a string; th's prompt prints it): the live
-- storages' count and bytes, the allocator's counters (torch.memory_stats), whether
-- tracebacks are being recorded, and the allocation sites holding the most bytes
-- with their storage counts (site as in torch.memory_snapshot). opts: row_limit
-- (sites shown, 10), collect (as memory_snapshot's, true).
function memory.summary(opts)
  opts = torch._check_options('torch.memory.summary', opts, {row_limit = 'number', collect = 'boolean'}, 2)
  local row_limit = opts.row_limit or 10
  if row_limit < 0 or row_limit ~= math.floor(row_limit) then
    error('torch.memory.summary: row_limit must be a non-negative integer, got ' .. row_limit, 2)
  end
  local groups = torch.memory_snapshot({group_by = 'site', collect = opts.collect})
  local bytes, count = 0, 0
  for _, g in ipairs(groups) do bytes, count = bytes + g.bytes, count + g.count end
  local stats = torch.memory_stats()
  local lines = {
    'moontorch memory summary',
    ('  live tensor storages: %d, %s'):format(count, format_bytes(bytes)),
    ('  CPU allocator: %s allocated, %s peak, %s cached'):format(format_bytes(stats.allocated),
      format_bytes(stats.peak), format_bytes(stats.cached)),
    '  recording tracebacks: ' .. (torch._memory_recording() and 'on' or 'off') ..
      ' (torch.memory._record_history)',
    '',
    ('  %12s  %8s  %s'):format('bytes', 'count', 'allocation site (largest first)'),
  }
  for i = 1, math.min(row_limit, #groups) do
    local g = groups[i]
    lines[#lines + 1] = ('  %12s  %8d  %s'):format(format_bytes(g.bytes), g.count, g.site)
  end
  if #groups > row_limit then
    local rest_bytes, rest_count = 0, 0
    for i = row_limit + 1, #groups do rest_bytes, rest_count = rest_bytes + groups[i].bytes, rest_count + groups[i].count end
    local more = #groups - row_limit
    lines[#lines + 1] = ('  %12s  %8d  (%d more site%s)'):format(format_bytes(rest_bytes), rest_count, more,
                                                                 more == 1 and '' or 's')
  end
  return table.concat(lines, '\n')
end
torch.memory_summary = memory.summary

return memory
