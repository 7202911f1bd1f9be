-- torch.print: tensors printed as Torch7 printed them -- one format for all
-- the values, a common scale factor above them when they are all large or
-- all small, columns split to fit 80 characters, and a footer with the type.
local torch = require 'torch.core'

-- Torch7 wrapped matrices at this many characters.
local LINE_WIDTH = 80
-- The REPL shows at most this many entries of a plain table, this deep.
local TABLE_ENTRIES, TABLE_DEPTH = 20, 2

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
  local values = x:_flat_values()
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

local function is_identifier(k)
  return type(k) == 'string' and k:match('^[%a_][%w_]*$') ~= nil
end

-- One-line summary of a value inside a table.
local function brief(v, depth)
  if torch.is_tensor(v) then
    local size = v:size()
    return v:type() .. (#size > 0 and ' of size ' .. size_string(size) or ' (0-dim)')
  end
  if type(v) == 'string' then return string.format('%q', v) end
  if type(v) ~= 'table' then return tostring(v) end
  local mt = getmetatable(v)
  if mt and mt.__tostring then return tostring(v) end
  if depth >= TABLE_DEPTH then return '{...}' end
  local parts, count, len = {}, 0, #v
  for i = 1, len do
    count = count + 1
    if count > TABLE_ENTRIES then break end
    parts[#parts + 1] = brief(v[i], depth + 1)
  end
  local keys = {}
  for k in pairs(v) do
    if not (math.type(k) == 'integer' and k >= 1 and k <= len) then keys[#keys + 1] = k end
  end
  table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
  for _, k in ipairs(keys) do
    count = count + 1
    if count > TABLE_ENTRIES then break end
    local name = is_identifier(k) and k or '[' .. brief(k, TABLE_DEPTH) .. ']'
    parts[#parts + 1] = name .. ' = ' .. brief(v[k], depth + 1)
  end
  if count > TABLE_ENTRIES then parts[#parts + 1] = '...' end
  return '{' .. table.concat(parts, ', ') .. '}'
end

-- Prints what a REPL line returned: as Lua's REPL does (tab-separated),
-- but tensors in full on their own lines and plain tables by content.
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
      print(tostring(v))
    elseif type(v) == 'table' then
      line[#line + 1] = brief(v, 0)
    else
      line[#line + 1] = tostring(v)
    end
  end
  flush()
end
