-- torch.print: tensors printed as Torch7 did -- aligned columns, a common
-- scale factor when magnitudes differ widely, and a footer with the type.
local torch = require 'torch.core'

-- How to write every number of a tensor: a format, the width of a column
-- and a scale factor shown above the values (1 when none).
local function number_format(values, is_float)
  local max_abs, min_abs, all_int = 0, math.huge, true
  local finite = 0
  for _, v in ipairs(values) do
    if type(v) == 'boolean' then return '%s', 5, 1 end
    if v == v and v ~= math.huge and v ~= -math.huge then
      local a = math.abs(v)
      if a > max_abs then max_abs = a end
      if a < min_abs and a ~= 0 then min_abs = a end
      if v ~= math.floor(v) then all_int = false end
      finite = finite + 1
    end
  end
  if finite == 0 then return '%g', 4, 1 end
  if not is_float or all_int then
    local width = #string.format('%.0f', max_abs) + 1
    if is_float and max_abs >= 1e8 then
      local exp = math.floor(math.log(max_abs, 10))
      return '%.4f', 7, 10 ^ exp
    end
    return is_float and '%.0f' or '%d', math.max(width, 3), 1
  end
  local exp_max = max_abs > 0 and math.floor(math.log(max_abs, 10)) or 0
  local exp_min = min_abs < math.huge and math.floor(math.log(min_abs, 10)) or 0
  if exp_max >= 5 or exp_max <= -5 or exp_max - exp_min > 4 then
    if exp_max - exp_min > 4 and exp_max < 5 and exp_max > -5 then
      return '%.4e', 12, 1
    end
    return '%.4f', 7, 10 ^ exp_max
  end
  local int_digits = math.max(exp_max + 1, 1)
  return '%.4f', int_digits + 6, 1
end

local function fmt_value(v, fmt, width, scale)
  local s
  if type(v) == 'boolean' then s = tostring(v)
  elseif v ~= v then s = 'nan'
  elseif v == math.huge then s = 'inf'
  elseif v == -math.huge then s = '-inf'
  elseif fmt == '%d' then s = string.format('%d', v)
  else s = string.format(fmt, v / scale) end
  return string.rep(' ', width - #s) .. s
end

local function scale_line(scale)
  if scale == 1 then return '' end
  return string.format('%g *\n', scale)
end

-- Rows of a matrix (values flat, row-major) as lines.
local function matrix_lines(values, offset, rows, cols, fmt, width, scale, out)
  for r = 0, rows - 1 do
    local parts = {}
    for c = 0, cols - 1 do parts[#parts + 1] = fmt_value(values[offset + r * cols + c + 1], fmt, width, scale) end
    out[#out + 1] = table.concat(parts, ' ')
  end
end

local function footer(x)
  local size = x:size()
  local dims = {}
  for i = 1, #size do dims[i] = tostring(size[i]) end
  return string.format('[%s of size %s]', x:type(), #dims > 0 and table.concat(dims, 'x') or '[]')
end

function torch._tensor_tostring(x)
  local values = x:_flat_values()
  local is_float = x.dtype == 'float32' or x.dtype == 'float64' or x.dtype == 'float16' or x.dtype == 'bfloat16'
  local n = x:dim()
  if n == 0 then
    local v = values[1]
    if type(v) == 'boolean' then return tostring(v) end
    if not is_float then return string.format('%d', v) end
    return string.format('%.4f', v)
  end
  if #values == 0 then return '[' .. x:type() .. ' with no dimension]' end
  local fmt, width, scale = number_format(values, is_float)
  local out = {}
  local size = x:size()
  if n == 1 then
    if scale ~= 1 then out[#out + 1] = scale_line(scale):sub(1, -2) end
    for i = 1, size[1] do out[#out + 1] = fmt_value(values[i], fmt, width, scale) end
  elseif n == 2 then
    if scale ~= 1 then out[#out + 1] = scale_line(scale):sub(1, -2) end
    matrix_lines(values, 0, size[1], size[2], fmt, width, scale, out)
  else
    local rows, cols = size[n - 1], size[n]
    local nslices = #values // (rows * cols)
    local idx = {}
    for d = 1, n - 2 do idx[d] = 1 end
    for s = 0, nslices - 1 do
      local label = {}
      for d = 1, n - 2 do label[d] = tostring(idx[d]) end
      out[#out + 1] = '(' .. table.concat(label, ',') .. ',.,.) = '
      if scale ~= 1 then out[#out + 1] = scale_line(scale):sub(1, -2) end
      matrix_lines(values, s * rows * cols, rows, cols, fmt, width, scale, out)
      out[#out + 1] = ''
      for d = n - 2, 1, -1 do
        idx[d] = idx[d] + 1
        if idx[d] <= size[d] then break end
        idx[d] = 1
      end
    end
    out[#out] = nil
  end
  out[#out + 1] = footer(x)
  return table.concat(out, '\n')
end

torch._tensor_mt.__tostring = torch._tensor_tostring

-- The REPL prints each value: tensors in full, others with tostring.
function torch._repl_print(...)
  local n = select('#', ...)
  for i = 1, n do
    local v = select(i, ...)
    print(tostring(v))
  end
end
