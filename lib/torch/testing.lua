-- torch.testing: assert_close, as PyTorch's torch.testing.assert_close,
-- with its per-dtype default tolerances and its mismatch report (indices
-- 1-based here). Loaded on first use of torch.testing.
local torch = require 'torch'

local testing = {}
torch.testing = testing

-- PyTorch's default (rtol, atol) per dtype; integer and bool dtypes compare exactly.
local default_tol = {
  float16 = {1e-3, 1e-5}, bfloat16 = {1.6e-2, 1e-5}, float32 = {1.3e-6, 1e-5}, float64 = {1e-7, 1e-7},
}
local function tolerances(dtype)
  local t = default_tol[dtype]
  if t then return t[1], t[2] end
  return 0, 0
end

local known_options = {rtol = true, atol = true, equal_nan = true, check_dtype = true, check_device = true, msg = true}

-- A number as Python's repr writes it (the shortest form that reads back,
-- 1.0 for an integral float), so the report reads as PyTorch's.
local function repr(v)
  if math.type(v) == 'integer' then return tostring(v) end
  if v ~= v then return 'nan' end
  if v == math.huge then return 'inf' end
  if v == -math.huge then return '-inf' end
  if v == math.floor(v) and math.abs(v) < 1e16 then return string.format('%.1f', v) end
  for digits = 1, 17 do
    local s = string.format('%.' .. digits .. 'g', v)
    if tonumber(s) == v then
      s = s:gsub('e([+-])0*(%d%d)', 'e%1%2')
      return s
    end
  end
  return string.format('%.17g', v)
end

local function fail(msg, user_msg)
  error('assert_close: ' .. (user_msg or msg), 3)
end

-- the 1-based index, as (i, j, ...), of flat position k (1-based) in sizes
local function index_of(k, sizes)
  local idx, rest = {}, k - 1
  for d = #sizes, 1, -1 do
    idx[d] = rest % sizes[d] + 1
    rest = rest // sizes[d]
  end
  return '(' .. table.concat(idx, ', ') .. ')'
end

local function size_repr(s) return 'torch.Size([' .. table.concat(s:totable(), ', ') .. '])' end

-- a tensor, or a table of numbers as one (of like's dtype where like is a tensor)
local function as_tensor(v, which, like)
  if torch.is_tensor(v) then return v end
  if type(v) == 'table' and getmetatable(v) == nil then
    return torch.is_tensor(like) and torch.tensor(v, {dtype = like.dtype}) or torch.tensor(v)
  end
  error(string.format('assert_close: %s must be a tensor, a number or a table of numbers, got %s', which,
                      torch.type(v)), 3)
end

local function scalar_report(actual, expected, rtol, atol, equal_nan, user_msg)
  if actual == expected or (equal_nan and actual ~= actual and expected ~= expected) then return end
  local abs = math.abs(actual - expected)
  if abs <= atol + rtol * math.abs(expected) then return end
  local rel = abs / math.abs(expected)
  local exact = rtol == 0 and atol == 0
  local lines = {exact and 'Scalars are not equal!' or 'Scalars are not close!', '',
                 'Expected ' .. repr(expected) .. ' but got ' .. repr(actual) .. '.'}
  if exact then
    lines[#lines + 1] = 'Absolute difference: ' .. repr(abs)
    lines[#lines + 1] = 'Relative difference: ' .. repr(rel)
  else
    lines[#lines + 1] = 'Absolute difference: ' .. repr(abs) .. ' (up to ' .. repr(atol) .. ' allowed)'
    lines[#lines + 1] = 'Relative difference: ' .. repr(rel) .. ' (up to ' .. repr(rtol) .. ' allowed)'
  end
  fail(table.concat(lines, '\n'), user_msg)
end

-- torch.testing.assert_close(actual, expected, {rtol=, atol=, equal_nan=false,
-- check_dtype=true, check_device=true, msg=}): raises unless every element
-- satisfies |actual - expected| <= atol + rtol * |expected| (equal values,
-- infinities included, always pass; NaN only with equal_nan). rtol and atol
-- default by dtype as PyTorch's: float32 1.3e-6 and 1e-5, float64 1e-7 and
-- 1e-7, float16 1e-3 and 1e-5, bfloat16 1.6e-2 and 1e-5, integers and bool
-- exact (the larger of the two dtypes' when check_dtype=false lets them
-- differ); give both or neither. Shapes must match; dtypes and devices too
-- unless check_dtype / check_device is false. The error reports the number
-- and percentage of mismatched elements and the greatest absolute and
-- relative differences with their (1-based) indices. actual and expected may
-- be tensors, numbers, or tables of numbers.
function testing.assert_close(actual, expected, opts)
  opts = opts or {}
  if type(opts) ~= 'table' then
    error('assert_close: options must be a table {rtol=, atol=, equal_nan=, check_dtype=, check_device=, msg=}, got ' ..
          torch.type(opts), 2)
  end
  for k in pairs(opts) do
    if not known_options[k] then
      error("assert_close: unknown option '" .. tostring(k) ..
            "' (options: rtol, atol, equal_nan, check_dtype, check_device, msg)", 2)
    end
  end
  local rtol, atol = opts.rtol, opts.atol
  if (rtol == nil) ~= (atol == nil) then
    error("assert_close: both 'rtol' and 'atol' must be given or omitted, but got no " ..
          (rtol == nil and 'rtol' or 'atol'), 2)
  end
  local equal_nan, user_msg = opts.equal_nan == true, opts.msg
  if type(actual) == 'number' and type(expected) == 'number' then
    if rtol == nil then
      local both_int = math.type(actual) == 'integer' and math.type(expected) == 'integer'
      if both_int then rtol, atol = 0, 0 else rtol, atol = tolerances('float64') end
      if not both_int and (math.type(actual) == 'integer' or math.type(expected) == 'integer') and
         opts.check_dtype ~= false then
        fail("The values for attribute 'type' do not match: " .. math.type(actual) .. ' != ' .. math.type(expected) .. '.',
             user_msg)
      end
    end
    return scalar_report(actual, expected, rtol, atol, equal_nan, user_msg)
  end
  actual, expected = as_tensor(actual, 'actual', expected), as_tensor(expected, 'expected', actual)
  if actual:size() ~= expected:size() then
    fail("The values for attribute 'shape' do not match: " .. size_repr(actual:size()) .. ' != ' ..
         size_repr(expected:size()) .. '.', user_msg)
  end
  if opts.check_device ~= false and actual.device ~= expected.device then
    fail("The values for attribute 'device' do not match: " .. actual.device .. ' != ' .. expected.device .. '.', user_msg)
  end
  if opts.check_dtype ~= false and actual.dtype ~= expected.dtype then
    fail("The values for attribute 'dtype' do not match: torch." .. actual.dtype .. ' != torch.' .. expected.dtype .. '.',
         user_msg)
  end
  if rtol == nil then
    local r1, a1 = tolerances(actual.dtype)
    local r2, a2 = tolerances(expected.dtype)
    rtol, atol = math.max(r1, r2), math.max(a1, a2)
  end
  if actual:dim() == 0 then
    return scalar_report(actual:item(), expected:item(), rtol, atol, equal_nan, user_msg)
  end
  local n = actual:numel()
  if n == 0 then return end
  -- the differences in the inputs' floating dtype, as PyTorch computes them (float64 otherwise)
  local common = 'float64'
  if actual.dtype == expected.dtype and actual:is_floating_point() then common = actual.dtype end
  local a, e = actual:cpu():to(common), expected:cpu():to(common)
  local close = a:eq(e)
  if equal_nan then close = close:logical_or(a:isnan():logical_and(e:isnan())) end
  local abs_diff = (a - e):abs()
  close = close:logical_or(abs_diff:le(e:abs():mul(rtol):add(atol)))
  local mismatched = n - close:sum():item()
  if mismatched == 0 then return end
  local rel_diff = abs_diff / e:abs()
  abs_diff = abs_diff:masked_fill(close, 0):reshape(-1)
  rel_diff = rel_diff:masked_fill(close, 0):reshape(-1)
  local max_abs, abs_at = abs_diff:max(1)
  local max_rel, rel_at = rel_diff:max(1)
  max_abs, abs_at = max_abs:item(), abs_at:item()
  max_rel, rel_at = max_rel:item(), rel_at:item()
  local int_abs = not actual:is_floating_point() and not expected:is_floating_point()
  if int_abs then max_abs = math.tointeger(max_abs) or max_abs end
  local sizes = actual:size()
  local exact = rtol == 0 and atol == 0
  local lines = {exact and 'Tensor-likes are not equal!' or 'Tensor-likes are not close!', '',
                 string.format('Mismatched elements: %d / %d (%.1f%%)', mismatched, n, 100 * mismatched / n)}
  local abs_line = 'Greatest absolute difference: ' .. repr(max_abs) .. ' at index ' .. index_of(abs_at, sizes)
  local rel_line = 'Greatest relative difference: ' .. repr(max_rel) .. ' at index ' .. index_of(rel_at, sizes)
  if not exact then
    abs_line = abs_line .. ' (up to ' .. repr(atol) .. ' allowed)'
    rel_line = rel_line .. ' (up to ' .. repr(rtol) .. ' allowed)'
  end
  lines[#lines + 1] = abs_line
  lines[#lines + 1] = rel_line
  fail(table.concat(lines, '\n'), user_msg)
end

return testing
