-- torch.print: tensors printed as Torch7 printed them -- one format for all
-- the values, a common scale factor above them when they are all large or
-- all small, columns split to fit 80 characters, and a footer with the type.
local torch = require 'torch.core'

-- Torch7 wrapped matrices at this many characters.
local LINE_WIDTH = 80
-- The REPL shows at most this many entries of a plain table (one level deep),
-- on one line when they fit in LINE_WIDTH, else one per line.
local TABLE_ENTRIES = 20

local is_float_dtype = {float32 = true, float64 = true, float16 = true, bfloat16 = true}

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

local function digits(a) return math.floor(math.log(a, 10)) + 1 end

-- Torch7's Storage__printformat: the format of one value, its width and the
-- scale the values are divided by (1 when none). Integer dtypes always print
-- exactly; float tensors holding only integers print without decimals.
local function number_format(values, is_float)
  if type(values[1]) == 'boolean' then return '%5s', 5, 1 end
  local int_mode, any, special = true, false, 0   -- special: width of nan/inf/-inf
  local max_abs, min_abs = 0, math.huge
  for _, v in ipairs(values) do
    if not finite(v) then
      special = math.max(special, v == -math.huge and 4 or 3)
    else
      any = true
      local a = math.abs(v)
      if a > max_abs then max_abs = a end
      if a < min_abs then min_abs = a end
      if v ~= math.floor(v) then int_mode = false end
    end
  end
  if not any then return '%d', special, 1 end
  local exp_max = max_abs ~= 0 and digits(max_abs) or 1
  local exp_min = min_abs ~= 0 and digits(min_abs) or 1
  if int_mode then
    if is_float and exp_max > 9 then return '%11.4e', 11, 1 end
    local width = math.max(exp_max + 1, special)
    return '%' .. width .. 'd', width, 1
  end
  if exp_max - exp_min > 4 then
    local width = (math.abs(exp_max) > 99 or math.abs(exp_min) > 99) and 12 or 11
    return '%' .. width .. '.4e', width, 1
  end
  if exp_max > 5 or exp_max < 0 then return '%7.4f', 7, 10.0 ^ (exp_max - 1) end
  local width = exp_max == 0 and 7 or exp_max + 6
  return '%' .. width .. '.4f', width, 1
end

local function format_value(v, fmt, width, scale)
  if type(v) == 'boolean' then return string.format(fmt, tostring(v)) end
  if not finite(v) then
    local s = v ~= v and 'nan' or (v > 0 and 'inf' or '-inf')
    return string.rep(' ', width - #s) .. s
  end
  if scale ~= 1 then v = v / scale end
  return string.format(fmt, v)
end

local function scale_line(scale) return string.format('%g *', scale) end

-- Lines of the rows x cols matrix whose first value is values[first], as
-- Torch7's Tensor__printMatrix: indented, wrapped into column blocks.
local function matrix_lines(out, values, first, rows, cols, style, indent)
  local fmt, width, scale = style.fmt, style.width, style.scale
  local per_line = math.max(1, (LINE_WIDTH - #indent) // (width + 1))
  local row_indent = scale ~= 1 and indent .. ' ' or indent
  for c0 = 1, cols, per_line do
    local c1 = math.min(c0 + per_line - 1, cols)
    if per_line < cols then
      if c0 ~= 1 then out[#out + 1] = '' end
      out[#out + 1] = indent .. 'Columns ' .. c0 .. ' to ' .. c1
    end
    if scale ~= 1 then out[#out + 1] = indent .. scale_line(scale) end
    for r = 0, rows - 1 do
      local parts, base = {}, first + r * cols - 1
      for c = c0, c1 do parts[#parts + 1] = format_value(values[base + c], fmt, width, scale) end
      out[#out + 1] = row_indent .. table.concat(parts, ' ')
    end
  end
end

local function size_string(size)
  local dims = {}
  for i = 1, #size do dims[i] = tostring(size[i]) end
  return table.concat(dims, 'x')
end

-- A 0-dim tensor prints as its value, with the format its values would get.
local function scalar_string(v, is_float)
  if type(v) == 'boolean' then return tostring(v) end
  local fmt, width, scale = number_format({v}, is_float)
  if scale ~= 1 then fmt = '%.4e' end
  return (format_value(v, fmt, width, 1):gsub('^ +', ''))
end

function torch._tensor_tostring(x)
  local typename, size = x:type(), x:size()
  local n = #size
  local values = (x.is_cuda and x:detach():cpu() or x):_flat_values()   -- a GPU's values, copied
  local is_float = is_float_dtype[x.dtype]
  if n == 0 then return scalar_string(values[1], is_float) end
  if #values == 0 then
    if n == 1 then return '[' .. typename .. ' with no dimension]' end
    return '[' .. typename .. ' of size ' .. size_string(size) .. ']'
  end
  local fmt, width, scale = number_format(values, is_float)
  local style = {fmt = fmt, width = width, scale = scale}
  local out = {}
  if n == 1 then
    if scale ~= 1 then out[1] = scale_line(scale) end
    for i = 1, #values do out[#out + 1] = format_value(values[i], fmt, width, scale) end
  elseif n == 2 then
    matrix_lines(out, values, 1, size[1], size[2], style, '')
  else
    -- (i,j,.,.) = slices over the leading dims, in row-major order
    local rows, cols = size[n - 1], size[n]
    local index = {}
    for d = 1, n - 2 do index[d] = 1 end
    for first = 1, #values, rows * cols do
      if first > 1 then out[#out + 1] = '' end
      out[#out + 1] = '(' .. table.concat(index, ',') .. ',.,.) = '
      matrix_lines(out, values, first, rows, cols, style, ' ')
      for d = n - 2, 1, -1 do
        index[d] = index[d] + 1
        if index[d] <= size[d] then break end
        index[d] = 1
      end
    end
  end
  out[#out + 1] = '[' .. typename .. ' of size ' .. size_string(size) .. ']'
  return table.concat(out, '\n')
end

torch._tensor_mt.__tostring = torch._tensor_tostring

-- ---- the REPL's printer ----

-- colour (set by th when its output is a terminal and NO_COLOR is unset)
local COLOUR = {type = '\27[36m', string = '\27[32m', number = '\27[33m', special = '\27[35m', reset = '\27[0m'}
local function paint(kind, s)
  if not torch._repl_colour then return s end
  return COLOUR[kind] .. s .. COLOUR.reset
end

local function is_identifier(k)
  return type(k) == 'string' and k:match('^[%a_][%w_]*$') ~= nil
end

-- A value inside a table, in a few words: its type more than its content.
local function brief(v)
  if torch.is_tensor(v) then
    local size = v:size()
    return paint('type', v:type() .. (#size > 0 and ' of size ' .. size_string(size) or ' (0-dim)'))
  end
  local t = type(v)
  if t == 'string' then return paint('string', string.format('%q', v)) end
  if t == 'number' then return paint('number', tostring(v)) end
  if t == 'boolean' then return paint('special', tostring(v)) end
  if t ~= 'table' then return tostring(v) end
  local class = torch.typename(v)
  if class then return paint('type', class) end
  if next(v) == nil then return '{}' end
  local mt = getmetatable(v)
  if mt and mt.__tostring then return (tostring(v):match('^[^\n]*')) end
  local n = 0
  for _ in pairs(v) do n = n + 1 end
  return paint('type', string.format('table (%d %s)', n, n == 1 and 'entry' or 'entries'))
end

local function visible_length(s) return #s:gsub('\27%[%d*m', '') end

-- A plain table by its entries, one level deep: the array part in order,
-- then the other keys sorted (in their own order for a table that orders its
-- pairs, a torch.OrderedDict). One line when it fits, else the array part
-- packed into lines and one line per key.
local function table_string(v)
  local items, len = {}, #v
  for i = 1, math.min(len, TABLE_ENTRIES) do items[#items + 1] = brief(v[i]) end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == 'integer' and k >= 1 and k <= len) then keys[#keys + 1] = k end
  end
  local mt = getmetatable(v)
  if not (type(mt) == 'table' and mt.__pairs) then
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  end
  local fields = {}
  for i = 1, math.min(#keys, TABLE_ENTRIES - #items) do
    local k = keys[i]
    fields[#fields + 1] = (is_identifier(k) and k or '[' .. brief(k) .. ']') .. ' = ' .. brief(v[k])
  end
  local hidden = len + #keys - #items - #fields
  if hidden > 0 then fields[#fields + 1] = string.format('... (%d more)', hidden) end
  local all = {table.unpack(items)}
  table.move(fields, 1, #fields, #all + 1, all)
  local line = '{' .. table.concat(all, ', ') .. '}'
  if visible_length(line) <= LINE_WIDTH then return line end
  local lines, cur = {}, nil
  for _, item in ipairs(items) do
    if cur and visible_length(cur) + 2 + visible_length(item) > LINE_WIDTH - 2 then
      lines[#lines + 1] = cur
      cur = nil
    end
    cur = cur and cur .. ', ' .. item or item
  end
  lines[#lines + 1] = cur
  table.move(fields, 1, #fields, #lines + 1, lines)
  return '{\n  ' .. table.concat(lines, ',\n  ') .. '\n}'
end

-- ---- the REPL: large tensors summarized, colour on terminals ----

-- Tensors with more elements than this print in the REPL as PyTorch's do:
-- the first and last EDGE entries of each dim, '...' for the rest.
local SUMMARY_THRESHOLD, EDGE = 1000, 3

-- The positions kept along a dim of size n (1-based), and whether a gap follows each.
local function kept(n)
  if n <= 2 * EDGE then
    local k = {}
    for i = 1, n do k[i] = i end
    return k
  end
  local k = {}
  for i = 1, EDGE do k[#k + 1] = i end
  for i = n - EDGE + 1, n do k[#k + 1] = i end
  return k
end

-- torch._tensor_summary(x): the corners of a large tensor, Torch7-style
-- columns with '...' where rows, columns or slices are left out.
function torch._tensor_summary(x)
  local size = x:size()
  local n = #size
  local corner = x.is_cuda and x:detach():cpu() or x:detach()
  local keep = {}
  for d = 1, n do
    keep[d] = kept(size[d])
    if #keep[d] < size[d] then
      corner = corner:index_select(d, torch.tensor(keep[d], {dtype = 'int64'}))
    end
  end
  local values = corner:contiguous():_flat_values()
  local fmt, width, scale = number_format(values, is_float_dtype[x.dtype])
  local out = {}
  if scale ~= 1 then out[#out + 1] = scale_line(scale) end
  local dots = string.rep(' ', math.max(0, width - 3)) .. '...'
  local csize = corner:size()
  local function row_line(base, cols, gap_after, indent)   -- values[base + 1 .. base + cols]
    local parts = {}
    for c = 1, cols do
      parts[#parts + 1] = format_value(values[base + c], fmt, width, scale)
      if gap_after and c == EDGE then parts[#parts + 1] = dots end
    end
    return indent .. table.concat(parts, ' ')
  end
  if n == 1 then
    for i = 1, #values do
      out[#out + 1] = format_value(values[i], fmt, width, scale)
      if #keep[1] < size[1] and i == EDGE then out[#out + 1] = dots end
    end
  else
    local rows, cols = csize[n - 1], csize[n]
    local col_gap, row_gap = #keep[n] < size[n], #keep[n - 1] < size[n - 1]
    local lead = {}
    for d = 1, n - 2 do lead[d] = 1 end
    local per_slice = rows * cols
    for first = 0, #values - 1, per_slice do
      local indent = ''
      if n > 2 then
        if first > 0 then out[#out + 1] = '' end
        local label = {}
        for d = 1, n - 2 do label[d] = keep[d][lead[d]] end
        out[#out + 1] = '(' .. table.concat(label, ',') .. ',.,.) = '
        indent = ' '
      end
      for r = 0, rows - 1 do
        out[#out + 1] = row_line(first + r * cols, cols, col_gap, indent)
        if row_gap and r == EDGE - 1 then out[#out + 1] = indent .. dots end
      end
      -- next slice; a '...' slice line where a leading dim skips
      for d = n - 2, 1, -1 do
        lead[d] = lead[d] + 1
        if lead[d] <= #keep[d] then
          if #keep[d] < size[d] and lead[d] == EDGE + 1 then out[#out + 1] = ''; out[#out + 1] = '...' end
          break
        end
        lead[d] = 1
      end
    end
  end
  out[#out + 1] = '[' .. x:type() .. ' of size ' .. size_string(size) .. ']'
  return table.concat(out, '\n')
end

local function repl_tensor(v)
  local text = v:numel() > SUMMARY_THRESHOLD and torch._tensor_summary(v) or tostring(v)
  if not torch._repl_colour then return text end
  return (text:gsub('(%[torch%.%w+ [^%]]*%])$', function(footer) return paint('type', footer) end))
end

local function repl_value(v)
  local t = type(v)
  if t == 'string' then return paint('string', v) end
  if t == 'number' then return paint('number', tostring(v)) end
  if t == 'nil' or t == 'boolean' then return paint('special', tostring(v)) end
  if t == 'table' then
    local mt = getmetatable(v)
    if mt and mt.__tostring then return tostring(v) end     -- nn modules print as trees
    return table_string(v)
  end
  return tostring(v)
end

-- Prints what a REPL line returned: as Lua's REPL does (tab-separated),
-- but tensors on their own lines (summarized when large) and plain tables
-- by content, one level deep with the types of what they hold.
function torch._repl_print(...)
  local n = select('#', ...)
  local line = {}
  local function flush()
    if #line > 0 then print(table.concat(line, '\t')) end
    line = {}
  end
  for i = 1, n do
    local v = select(i, ...)
    if torch.is_tensor(v) then
      flush()
      print(repl_tensor(v))
    else
      line[#line + 1] = repl_value(v)
    end
  end
  flush()
end

-- timeit aims at this many seconds of timed calls; a batch of calls that
-- takes CALIBRATE_S gives the rate to get there (one call is too short to
-- time well: the clock's overhead and a cold first call dominate it).
local TIMEIT_TARGET_S, CALIBRATE_S, MAX_REPS = 0.2, 0.02, 100000000

-- torch.timeit(fn, {repeat=n}): seconds per call of fn, and the count of
-- calls timed. One call first (a warm-up); when it takes 0.2 s or more that
-- is the answer. Else growing batches run until one lasts 0.02 s, and the
-- count is scaled from that batch's rate to take about 0.2 s in all.
function torch.timeit(fn, opts)
  if type(fn) ~= 'function' then error('timeit: expected a function, got ' .. type(fn), 2) end
  opts = opts or {}
  local clock = torch.clock
  local function run(n)
    local t0 = clock()
    for _ = 1, n do fn() end
    return clock() - t0
  end
  local once = run(1)
  local reps = opts['repeat']
  if not reps then
    if once >= TIMEIT_TARGET_S then return once, 1 end
    local batch, took = 1, once
    while took < CALIBRATE_S and batch < MAX_REPS do
      batch = math.min(MAX_REPS, math.ceil(batch * math.min(100, 1.2 * CALIBRATE_S / math.max(took, 1e-9))))
      took = run(batch)
    end
    reps = math.max(1, math.min(MAX_REPS, math.floor(TIMEIT_TARGET_S * batch / math.max(took, 1e-9) + 0.5)))
  end
  return run(reps) / reps, reps
end

local function human(seconds)
  if seconds >= 1 then return string.format('%.3f s', seconds) end
  if seconds >= 1e-3 then return string.format('%.3f ms', seconds * 1e3) end
  if seconds >= 1e-6 then return string.format('%.3f us', seconds * 1e6) end
  return string.format('%.1f ns', seconds * 1e9)
end

-- the REPL's %time <expression or statement>
function torch._repl_time(fn)
  local per, reps = torch.timeit(fn)
  print(string.format('%s per run (mean of %d run%s)', human(per), reps, reps == 1 and '' or 's'))
end
timeit = timeit or function(fn, opts)
  local per, reps = torch.timeit(fn, opts)
  print(string.format('%s per run (mean of %d run%s)', human(per), reps, reps == 1 and '' or 's'))
  return per
end
