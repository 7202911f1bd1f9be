-- torch.print: tensors printed as Torch7 printed them -- one format for all
-- the values, a common scale factor above them when they are all large or
-- all small, columns split to fit the line width, and a footer with the type
-- and size (and, outside the Torch7 dialect, requires_grad or grad_fn).
-- Tensors of more than `threshold` elements print summarized, as PyTorch's
-- do: the first and last `edgeitems` entries of each long dim, '...' for the
-- rest. torch.set_printoptions sets the options; scripts and the REPL print
-- through the same code.
local torch = require 'torch.core'

-- The REPL shows at most this many entries of a plain table (one level deep),
-- on one line when they fit in TABLE_WIDTH, else one per line.
local TABLE_WIDTH, TABLE_ENTRIES = 80, 20

-- PyTorch's three profiles; 'default' is Torch7's format (4 decimals, 80
-- characters) with PyTorch's summary of large tensors.
local PROFILES = {
  default = {precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80},
  full = {precision = 4, threshold = math.huge, edgeitems = 3, linewidth = 80},
  short = {precision = 2, threshold = 1000, edgeitems = 2, linewidth = 80},
}
local OPTION_NAMES = {'precision', 'threshold', 'edgeitems', 'linewidth', 'sci_mode', 'profile'}
local options = {precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80, sci_mode = nil}
-- whether the user chose a threshold: the Torch7 dialect prints tensors in
-- full, as Torch7 did, until then
local threshold_chosen = false

local function option_error(msg)
  error('torch.set_printoptions: ' .. msg .. "; e.g. torch.set_printoptions{precision=4, threshold=1000, " ..
        "edgeitems=3, linewidth=80, sci_mode=nil} or torch.set_printoptions{profile='full'}", 3)
end

local function whole(v, least)
  return type(v) == 'number' and (math.type(v) == 'integer' or v == math.floor(v)) and v >= least
end

-- torch.set_printoptions{precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=nil, profile=nil}:
--   how tensors print, in scripts and the REPL alike; only the options given change.
--   precision: decimals of floating-point values. threshold: tensors of more
--   elements print summarized (math.huge: never). edgeitems: the entries kept
--   at each end of a summarized dim. linewidth: the characters of a line
--   before the columns wrap. sci_mode: true always scientific, false never,
--   nil Torch7's choice (scientific when the magnitudes span more than 4
--   decimal orders, else fixed with a common scale factor when needed).
--   profile: 'default', 'full' (threshold math.huge: every element) or
--   'short' (precision 2, edgeitems 2) sets the first four and sci_mode nil,
--   which the other options given then override. The Torch7 dialect prints
--   in full, as Torch7 did, until a threshold or profile is set.
function torch.set_printoptions(opts)
  if type(opts) ~= 'table' or torch.is_tensor(opts) then
    option_error('expects a table of options, got ' .. torch.type(opts))
  end
  for k in pairs(opts) do
    local known = false
    for _, name in ipairs(OPTION_NAMES) do known = known or k == name end
    if not known then
      option_error(string.format('unknown option %s (the options are %s)', tostring(k), table.concat(OPTION_NAMES, ', ')))
    end
  end
  local p = opts.profile
  if p ~= nil and not PROFILES[p] then
    option_error(string.format("profile must be 'default', 'full' or 'short', got %s", tostring(p)))
  end
  local checks = {precision = 0, threshold = 0, edgeitems = 1, linewidth = 1}
  for name, least in pairs(checks) do
    local v = opts[name]
    if v ~= nil and not (whole(v, least) or (name == 'threshold' and v == math.huge)) then
      option_error(string.format('%s must be an integer >= %d%s, got %s', name, least,
                                 name == 'threshold' and ' or math.huge' or '', tostring(v)))
    end
  end
  if opts.precision and opts.precision > 30 then
    option_error('precision must be at most 30, got ' .. tostring(opts.precision))
  end
  if opts.sci_mode ~= nil and type(opts.sci_mode) ~= 'boolean' then
    option_error('sci_mode must be true, false or nil, got ' .. tostring(opts.sci_mode))
  end
  if p then
    for k, v in pairs(PROFILES[p]) do options[k] = v end
    options.sci_mode = nil
  end
  for name in pairs(checks) do
    local v = opts[name]
    if v ~= nil then options[name] = v == math.huge and v or math.tointeger(v) end
  end
  if opts.sci_mode ~= nil then options.sci_mode = opts.sci_mode end
  if p or opts.threshold ~= nil then threshold_chosen = true end
end

-- torch.get_printoptions(): the print options as a table {precision=, threshold=,
--   edgeitems=, linewidth=, sci_mode=} (sci_mode absent when nil, Torch7's choice).
function torch.get_printoptions()
  return {precision = options.precision, threshold = options.threshold, edgeitems = options.edgeitems,
          linewidth = options.linewidth, sci_mode = options.sci_mode}
end

local is_float_dtype = {float32 = true, float64 = true, float16 = true, bfloat16 = true}

local function finite(v) return v == v and v ~= math.huge and v ~= -math.huge end

local function digits(a) return math.floor(math.log(a, 10)) + 1 end

-- Torch7's Storage__printformat with `p` decimals: the format of one value,
-- its width and the scale the values are divided by (1 when none). Integer
-- dtypes always print exactly; float tensors holding only integers print
-- without decimals. sci: true always scientific (floats), false never, nil
-- Torch7's choice.
local function number_format(values, is_float, p, sci)
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
  local function sci_format()
    local width = p + ((math.abs(exp_max) > 99 or math.abs(exp_min) > 99) and 8 or 7)
    return '%' .. width .. '.' .. p .. 'e', width, 1
  end
  if is_float and sci == true then return sci_format() end
  if int_mode then
    local width = math.max(exp_max + 1, special)
    if is_float and exp_max > 9 then
      if sci == false then return '%' .. width .. '.0f', width, 1 end
      return sci_format()
    end
    return '%' .. width .. 'd', width, 1
  end
  local fixed = math.max(exp_max, 1) + p + 2
  if sci == false then return '%' .. math.max(fixed, special) .. '.' .. p .. 'f', math.max(fixed, special), 1 end
  if exp_max - exp_min > 4 then return sci_format() end
  if exp_max > 5 or exp_max < 0 then return '%' .. (p + 3) .. '.' .. p .. 'f', p + 3, 10.0 ^ (exp_max - 1) end
  return '%' .. fixed .. '.' .. p .. 'f', fixed, 1
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

local function size_string(size)
  local dims = {}
  for i = 1, #size do dims[i] = tostring(size[i]) end
  return table.concat(dims, 'x')
end

-- The positions kept along a dim of size n (1-based): all of them, or the
-- first and last `edge` when the tensor is summarized and the dim longer.
local function kept(n, summarize, edge)
  local k = {}
  if not summarize or n <= 2 * edge then
    for i = 1, n do k[i] = i end
  else
    for i = 1, edge do k[#k + 1] = i end
    for i = n - edge + 1, n do k[#k + 1] = i end
  end
  return k
end

-- Lines of one matrix of the kept rows x kept columns whose values start
-- after values[base], as Torch7's Tensor__printMatrix: indented, wrapped
-- into column blocks of the line width, '...' where rows or columns are
-- left out.
local function matrix_lines(out, values, base, rows, cols, style, indent)
  local fmt, width, scale, edge = style.fmt, style.width, style.scale, style.edge
  local dots = string.rep(' ', math.max(0, width - 3)) .. '...'
  -- the cells of a row: a column's position in the kept ones, or false for '...' (the
  -- columns left out: as wide as a value, or three characters when that is what makes
  -- a summary of 3 + 3 columns fit the line)
  local cells = {}
  for j = 1, #cols do
    cells[#cells + 1] = j
    if #cols < style.ncols and j == edge then cells[#cells + 1] = false end
  end
  local room = style.linewidth - #indent
  local gap = dots
  if #cells * (width + 1) > room then gap = '...' end
  -- the blocks of cells that fit the line width, each [c0, c1] (a cell and its space
  -- counted together, as Torch7 counts them)
  local blocks = {}
  local c0, used = 1, 0
  for c = 1, #cells do
    local w = (cells[c] and width or #gap) + 1
    if used + w > room and c > c0 then
      blocks[#blocks + 1] = {c0, c - 1}
      c0, used = c, 0
    end
    used = used + w
  end
  blocks[#blocks + 1] = {c0, #cells}
  local row_indent = scale ~= 1 and indent .. ' ' or indent
  for _, block in ipairs(blocks) do
    local c0, c1 = block[1], block[2]
    if #blocks > 1 then
      if c0 ~= 1 then out[#out + 1] = '' end
      local first, last
      for c = c0, c1 do
        if cells[c] then first = first or cols[cells[c]]; last = cols[cells[c]] end
      end
      out[#out + 1] = indent .. (first and 'Columns ' .. first .. ' to ' .. last or 'Columns ...')
    end
    if scale ~= 1 then out[#out + 1] = indent .. scale_line(scale) end
    for r = 1, #rows do
      local parts, row = {}, base + (r - 1) * #cols
      for c = c0, c1 do
        parts[#parts + 1] = cells[c] and format_value(values[row + cells[c]], fmt, width, scale) or gap
      end
      out[#out + 1] = row_indent .. table.concat(parts, ' ')
      if #rows < style.nrows and r == edge then out[#out + 1] = row_indent .. dots end
    end
  end
end

-- A 0-dim tensor's value, with the format its values would get.
local function scalar_string(v, is_float, p, sci)
  if type(v) == 'boolean' then return tostring(v) end
  local fmt, width, scale = number_format({v}, is_float, p, sci)
  if scale ~= 1 then fmt = '%.' .. p .. 'e' end
  return (format_value(v, fmt, width, 1):gsub('^ +', ''))
end

-- The footer: [torch.FloatTensor of size 2x3], [torch.FloatTensor of size
-- [] (0-dim)], with ', grad_fn=<MeanBackward>' or ', requires_grad=true'.
-- The Torch7 dialect keeps Torch7's footers for what Torch7 had (no autograd
-- part; an empty tensor, whose dim() is 0 there, is [torch.DoubleTensor with
-- no dimension]); a 0-dim tensor, which Torch7 had not, prints in full.
local function footer(x, size, torch7)
  local typename = x:type()
  if torch7 then
    if x:numel() == 0 then return '[' .. typename .. ' with no dimension]' end
    if #size > 0 then return '[' .. typename .. ' of size ' .. size_string(size) .. ']' end
  end
  local grad = ''
  local fn = x.grad_fn
  if fn then
    grad = ', grad_fn=<' .. fn:name() .. '>'
  elseif x.requires_grad then
    grad = ', requires_grad=true'
  end
  return '[' .. typename .. ' of size ' .. (#size == 0 and '[] (0-dim)' or size_string(size)) .. grad .. ']'
end

-- x as text, summarized when it has more than `threshold` elements.
local function tensor_string(x, threshold, torch7)
  local size = x:size()
  local n = #size
  local numel = x:numel()
  local p, edge = options.precision, options.edgeitems
  local is_float = is_float_dtype[x.dtype]
  local out = {}
  if n == 0 then
    out[1] = scalar_string(x:item(), is_float, p, options.sci_mode)
  elseif numel > 0 then
    local summarize = numel > threshold
    local corner, keep = x, {}
    for d = 1, n do
      keep[d] = kept(size[d], summarize, edge)
      if #keep[d] < size[d] then
        local index = torch.tensor(keep[d], {dtype = 'int64'})
        if x.is_cuda then index = index:to(x.device) end   -- the corner taken on the GPU
        corner = corner:detach():index_select(d, index)
      end
    end
    if corner.is_cuda then corner = corner:detach():cpu() end   -- the values shown, copied
    local values = corner:_flat_values()
    local fmt, width, scale = number_format(values, is_float, p, options.sci_mode)
    local style = {fmt = fmt, width = width, scale = scale, edge = edge, linewidth = options.linewidth}
    if n == 1 then
      if scale ~= 1 then out[1] = scale_line(scale) end
      local dots = string.rep(' ', math.max(0, width - 3)) .. '...'
      for i = 1, #values do
        out[#out + 1] = format_value(values[i], fmt, width, scale)
        if #keep[1] < size[1] and i == edge then out[#out + 1] = dots end
      end
    else
      -- (i,j,.,.) = slices over the leading dims, in row-major order, by
      -- their positions in x; '...' where a leading dim skips
      local rows, cols = keep[n - 1], keep[n]
      style.nrows, style.ncols = size[n - 1], size[n]
      local lead = {}
      for d = 1, n - 2 do lead[d] = 1 end
      for base = 0, #values - 1, #rows * #cols do
        local indent = ''
        if n > 2 then
          if base > 0 then out[#out + 1] = '' end
          local label = {}
          for d = 1, n - 2 do label[d] = keep[d][lead[d]] end
          out[#out + 1] = '(' .. table.concat(label, ',') .. ',.,.) = '
          indent = ' '
        end
        matrix_lines(out, values, base, rows, cols, style, indent)
        for d = n - 2, 1, -1 do
          lead[d] = lead[d] + 1
          if lead[d] <= #keep[d] then
            if #keep[d] < size[d] and lead[d] == edge + 1 then out[#out + 1] = ''; out[#out + 1] = '...' end
            break
          end
          lead[d] = 1
        end
      end
    end
  end
  out[#out + 1] = footer(x, size, torch7)
  return table.concat(out, '\n')
end

local function in_torch7_dialect() return torch.dialect ~= nil and torch.dialect() == 'torch7' end

-- tostring(x), print(x): summarized past the threshold; in the Torch7
-- dialect Torch7's footers, and every element until the user sets a threshold.
function torch._tensor_tostring(x)
  local torch7 = in_torch7_dialect()
  return tensor_string(x, (torch7 and not threshold_chosen) and math.huge or options.threshold, torch7)
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
  if visible_length(line) <= TABLE_WIDTH then return line end
  local lines, cur = {}, nil
  for _, item in ipairs(items) do
    if cur and visible_length(cur) + 2 + visible_length(item) > TABLE_WIDTH - 2 then
      lines[#lines + 1] = cur
      cur = nil
    end
    cur = cur and cur .. ', ' .. item or item
  end
  lines[#lines + 1] = cur
  table.move(fields, 1, #fields, #lines + 1, lines)
  return '{\n  ' .. table.concat(lines, ',\n  ') .. '\n}'
end

-- ---- the REPL: tensors through the same options, colour on terminals ----

-- The REPL summarizes past the threshold in both dialects (a Torch7 script's
-- output is not at stake there).
local function repl_tensor(v)
  local text = tensor_string(v, options.threshold, in_torch7_dialect())
  if not torch._repl_colour then return text end
  local body, foot = text:match('^(.*\n)([^\n]*)$')     -- the footer is the last line
  if not body then body, foot = '', text end
  return body .. paint('type', foot)
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
