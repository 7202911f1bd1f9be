-- pointwise_spec.lua: every elementwise op of the op registry (src/ops/registry.h: unary
-- float, rounding, unary same, unary bool, binary, binary float, compare,
-- rounded division through div's rounding_mode and floor_divide)
-- against values computed with PyTorch: all float dtypes and the integer and
-- bool dtypes where the op applies; contiguous, transposed and strided
-- inputs; in-place forms; broadcasting; Lua numbers on either side; 0-dim
-- and empty tensors; PyTorch's type promotion; `==` as identity and `<`
-- between 0-dim tensors and numbers.
--
-- REF (spec/ref/pointwise_ref.lua, written by spec/ref/gen_pointwise.py) was computed with PyTorch (torch.<op> on the same inputs, in
-- the same dtypes; torch.result_type for the promotion tables). ERR marks a
-- case where PyTorch raises.
local torch = require 'torch'

local NAN, INF, ERR = 0 / 0, math.huge, false
local REF = dofile('spec/ref/pointwise_ref.lua')

-- ---- helpers ----

local FLOAT_DTYPES = {float32 = true, float64 = true, float16 = true, bfloat16 = true}
-- A result may differ from PyTorch's by rounding: two units in the last place.
local ULP = {float32 = 2 ^ -23, float64 = 2 ^ -52, float16 = 2 ^ -10, bfloat16 = 2 ^ -7}

local function close(got, want, dtype)
  if type(want) == 'boolean' or not FLOAT_DTYPES[dtype] then return got == want end
  if want ~= want then return got ~= got end
  if want == math.huge or want == -math.huge then return got == want end
  local tol = 2 * ULP[dtype] * math.max(math.abs(want), 1e-6)
  return math.abs(got - want) <= tol
end

-- expected is {dtype, flat values}
local function check(t, expected, what)
  assert(torch.is_tensor(t), what .. ': not a tensor')
  assert.are.equal(expected[1], t.dtype, what .. ': dtype')
  local got, want = t:_flat_values(), expected[2]
  assert.are.equal(#want, #got, what .. ': element count')
  for i = 1, #want do
    if not close(got[i], want[i], expected[1]) then
      error(string.format('%s: element %d is %s, PyTorch gives %s', what, i, tostring(got[i]),
                          tostring(want[i])), 2)
    end
  end
end

local function raises(fn, what, ...)
  local ok = pcall(fn, ...)
  assert(not ok, what .. ': PyTorch raises, but this did not')
end

local function transpose_values(values, rows, cols)
  local out = {}
  for c = 1, cols do for r = 1, rows do out[#out + 1] = values[(r - 1) * cols + c] end end
  return out
end

-- The same rows x cols values three ways: contiguous, a transposed view, and
-- a strided view (every other element of a larger tensor).
local function layouts(values, dtype, rows, cols)
  local contiguous = torch.tensor(values, {dtype = dtype}):view(rows, cols)
  local transposed = torch.tensor(transpose_values(values, rows, cols), {dtype = dtype}):view(cols, rows):t()
  local parent = torch.zeros(rows, cols, 2, {dtype = dtype})
  local strided = parent:select(3, 2)
  strided:copy_(contiguous)
  return {contiguous = contiguous, transposed = transposed, strided = strided}, parent
end

local function input_values(dtype, inputs)
  if FLOAT_DTYPES[dtype] then return inputs.float end
  if dtype == 'uint8' or dtype == 'bool' then return inputs[dtype] end
  return inputs.int
end

-- expected values written into a tensor of dtype (what an in-place op keeps)
local function cast_expected(expected, dtype)
  local vals = {}
  for i, v in ipairs(expected[2]) do
    if dtype == 'bool' then vals[i] = v ~= 0 and v ~= false
    elseif type(v) == 'boolean' then vals[i] = v and 1 or 0
    else vals[i] = v end
  end
  return {dtype, vals}
end

local KIND = {float32 = 2, float64 = 2, float16 = 2, bfloat16 = 2, bool = 0}
local function kind(dtype) return KIND[dtype] or 1 end

local UNARY_BOOL = {isnan = true, isinf = true, isfinite = true, logical_not = true}
local COMPARE = {eq = true, ne = true, lt = true, le = true, gt = true, ge = true,
                 logical_and = true, logical_or = true, logical_xor = true}
local METAMETHOD = {add = function(a, b) return a + b end, sub = function(a, b) return a - b end,
                    mul = function(a, b) return a * b end, div = function(a, b) return a / b end,
                    pow = function(a, b) return a ^ b end, remainder = function(a, b) return a % b end}

-- the ops of MT_BINARY_DIV_OPS: div with this rounding_mode
local ROUNDING_MODE = {div_floor = 'floor', div_trunc = 'trunc'}

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys)
  return keys
end

-- ---- coverage: every elementwise op of the registry has reference values ----

describe('the op registry', function()
  it('has reference values for every elementwise op, and each is bound under its names', function()
    local count = 0
    for _, op in ipairs(torch._ops()) do
      if op.signature then goto continue end   -- reductions and ops along a dim: reduce_spec.lua
      count = count + 1
      local name = op.name
      local mode = ROUNDING_MODE[name]     -- rounded division is reached through div
      local covered = op.arity == 1 and REF.unary[name] or mode and REF.rounded_div[mode]
                      or (REF.binary[name] and REF.broadcast[name] and REF.scalar[name])
      assert(covered, name .. ' (' .. op.family .. ') has no reference values')
      local names = {table.unpack(op.aliases)}
      if op.lua_name then names[#names + 1] = name end
      assert.is_true(#names > 0 or mode ~= nil, name .. ' has no Lua name (nor a rounding mode of div)')
      for _, n in ipairs(names) do
        assert.is_function(torch[n], 'torch.' .. n)
        assert.is_function(torch._methods[n], 'x:' .. n)
        if op.inplace then assert.is_function(torch._methods[n .. '_'], 'x:' .. n .. '_') end
      end
      ::continue::
    end
    assert.is_true(count >= 56, count .. ' ops found')
  end)
end)

-- ---- unary ops ----

describe('unary ops against PyTorch', function()
  for _, op in ipairs(sorted_keys(REF.unary)) do
    it(op, function()
      for _, dtype in ipairs(sorted_keys(REF.unary[op])) do
        local expected = REF.unary[op][dtype]
        local values = input_values(dtype, REF.unary_input)
        local cols = #values // 2
        local inputs, parent = layouts(values, dtype, 2, cols)
        local what = op .. ' on ' .. dtype
        if expected == ERR then
          raises(function() return inputs.contiguous[op](inputs.contiguous) end, what)
          raises(torch[op], what .. ' (torch.' .. op .. ')', inputs.contiguous)
        else
          for name, x in pairs(inputs) do check(x[op](x), expected, what .. ', ' .. name) end
          check(torch[op](inputs.transposed), expected, what .. ', torch.' .. op)
          -- in place: same dtype results, through a strided view too
          local inplace = op .. '_'
          if not UNARY_BOOL[op] or op == 'logical_not' then
            local y = inputs.contiguous:clone()
            if expected[1] == dtype or (UNARY_BOOL[op]) then
              assert.is_true(rawequal(y, y[inplace](y)), what .. ': in place returns self')
              check(y, cast_expected(expected, dtype), what .. ', in place')
              inputs.strided[inplace](inputs.strided)
              check(inputs.strided, cast_expected(expected, dtype), what .. ', in place on a strided view')
              local untouched = parent:select(3, 1):_flat_values()
              for i = 1, #untouched do
                assert.is_true(untouched[i] == 0 or untouched[i] == false, what .. ': wrote outside the view')
              end
            else
              raises(y[inplace], what .. ', in place into ' .. dtype, y)
            end
          end
        end
      end
    end)
  end

  it('has no in-place form for isnan, isinf and isfinite', function()
    local x = torch.zeros(2)
    assert.is_nil(x.isnan_)
    assert.is_nil(x.isinf_)
    assert.is_nil(x.isfinite_)
  end)

  it('keeps integer dtypes through floor, ceil, round and trunc', function()
    local x = torch.tensor({-3, 7}, {dtype = 'int32'})
    local r = x:floor()
    assert.are.equal('int32', r.dtype)
    assert.is_false(rawequal(r, x))
    x:round_()
    assert.are.same({-3, 7}, x:_flat_values())
  end)

  it('negates with unary minus', function()
    check(-torch.tensor({1.5, -2}), {'float32', {-1.5, 2}}, '-x float32')
    check(-torch.tensor({1, 200}, {dtype = 'uint8'}), {'uint8', {255, 56}}, '-x uint8')
    raises(function() return -torch.tensor({true}) end, '-x on bool')
  end)

  -- float32 tanh, log, log2, log1p and expm1 compute in float (polynomials written to
  -- vectorise), sin, cos, atan, acos, sinh, cosh and erfc in the C library's vector
  -- forms: every value within 2.5 ulp of the C library's double result over a dense
  -- sweep, and the C library's values at the edges
  local function max_ulp(name, x32)
    local got = x32[name](x32):double()
    local want = x32:double()[name](x32:double())
    local finite = want:isfinite()
    local ulp = want:abs():float():double():mul(2 ^ -23):clamp(2 ^ -149, math.huge)
    return ((got - want):abs() / ulp):masked_fill(finite:logical_not(), 0):max():item()
  end
  it('gives float32 transcendentals within 2.5 ulp of double, and their edge values', function()
    local sweeps = {
      tanh = torch.linspace(-12, 12, 200001),
      log = torch.logspace(-44, 38, 200001), log2 = torch.logspace(-44, 38, 200001),
      log1p = torch.cat({torch.linspace(-0.999, 1, 100001), torch.logspace(-30, 30, 100001)}),
      expm1 = torch.linspace(-20, 80, 200001),
      sin = torch.cat({torch.linspace(-1000, 1000, 200001), torch.logspace(-30, 30, 20001)}),
      cos = torch.cat({torch.linspace(-1000, 1000, 200001), torch.logspace(-30, 30, 20001)}),
      atan = torch.cat({torch.logspace(-30, 30, 100001), -torch.logspace(-30, 30, 100001)}),
      acos = torch.linspace(-1, 1, 200001),
      sinh = torch.linspace(-89, 89, 200001), cosh = torch.linspace(-89, 89, 200001),
      erfc = torch.linspace(-10, 10, 200001),
    }
    for name, x in pairs(sweeps) do
      local err = max_ulp(name, x)
      assert.is_true(err <= 2.5, name .. ' float32: ' .. err .. ' ulp')
    end
    local inf, nan = math.huge, 0 / 0
    local function same_values(name, xs, want)
      local r = torch.tensor(xs)[name](torch.tensor(xs))
      for i, w in ipairs(want) do
        local v = r[i]
        w = torch.tensor({w})[1]                          -- the expected value rounded to float32
        if w ~= w then assert.is_true(v ~= v, name .. '(' .. xs[i] .. ') should be NaN')
        else assert.are.equal(w, v, name .. '(' .. tostring(xs[i]) .. ')')
             if w == 0 then assert.are.equal(1 / w, 1 / v, name .. ': sign of zero') end end
      end
    end
    same_values('tanh', {-0.0, 0.0, inf, -inf, nan, 1e-30, 9}, {-0.0, 0.0, 1, -1, nan, 1e-30, 1 - 2 ^ -24})
    same_values('log', {0.0, -0.0, -1, inf, -inf, nan, 1, 2 ^ -149}, {-inf, -inf, nan, inf, nan, nan, 0, -149 * math.log(2)})
    same_values('log2', {0.0, -1, inf, nan, 1, 2 ^ -149, 2 ^ 100}, {-inf, nan, inf, nan, 0, -149, 100})
    same_values('log1p', {0.0, -0.0, -1, -2, inf, nan, 2 ^ -100}, {0.0, -0.0, -inf, nan, inf, nan, 2 ^ -100})
    same_values('expm1', {0.0, -0.0, inf, -inf, nan, 100, 2 ^ -100}, {0.0, -0.0, inf, -1, nan, inf, 2 ^ -100})
    same_values('sin', {0.0, -0.0, inf, nan, 2 ^ -100}, {0.0, -0.0, nan, nan, 2 ^ -100})
    same_values('cos', {0.0, inf, nan}, {1, nan, nan})
    same_values('atan', {0.0, -0.0, inf, -inf, nan}, {0.0, -0.0, math.pi / 2, -math.pi / 2, nan})
    same_values('acos', {1, -1, 2, nan}, {0.0, math.pi, nan, nan})
    same_values('sinh', {0.0, -0.0, 100, -100, nan}, {0.0, -0.0, inf, -inf, nan})
    same_values('cosh', {0.0, 100, -inf, nan}, {1, inf, inf, nan})
    same_values('erfc', {0.0, inf, -inf, 20, nan}, {1, 0.0, 2, 0.0, nan})
  end)
end)

-- ---- binary ops ----

describe('binary ops against PyTorch', function()
  for _, op in ipairs(sorted_keys(REF.binary)) do
    it(op, function()
      for _, dtype in ipairs(sorted_keys(REF.binary[op])) do
        local expected = REF.binary[op][dtype]
        local pair = input_values(dtype, REF.binary_input)
        local a_in = layouts(pair[1], dtype, 2, 3)
        local b_in = layouts(pair[2], dtype, 2, 3)
        local what = op .. ' on ' .. dtype
        local a, b = a_in.contiguous, b_in.contiguous
        if expected == ERR then
          raises(function() return a[op](a, b) end, what)
          raises(torch[op], what .. ' (torch.' .. op .. ')', a, b)
          raises(function() return a:clone()[op .. '_'](a:clone(), b) end, what .. ' in place')
        else
          check(a[op](a, b), expected, what)
          check(torch[op](a, b), expected, what .. ', torch.' .. op)
          check(a_in.transposed[op](a_in.transposed, b_in.strided), expected, what .. ', transposed with strided')
          check(a_in.strided[op](a_in.strided, b_in.transposed), expected, what .. ', strided with transposed')
          if METAMETHOD[op] then check(METAMETHOD[op](a, b), expected, what .. ', operator') end
          local y = a:clone()
          if COMPARE[op] or expected[1] == dtype then
            assert.is_true(rawequal(y, y[op .. '_'](y, b)), what .. ': in place returns self')
            check(y, cast_expected(expected, dtype), what .. ', in place')
            local s = a_in.strided
            s[op .. '_'](s, b_in.transposed)
            check(s, cast_expected(expected, dtype), what .. ', in place on a strided view')
          elseif kind(expected[1]) > kind(dtype) then
            raises(y[op .. '_'], what .. ', in place into ' .. dtype, y, b)
          end
        end
      end
    end)
  end
end)

describe('broadcasting against PyTorch', function()
  for _, op in ipairs(sorted_keys(REF.broadcast)) do
    it(op, function()
      for _, dtype in ipairs(sorted_keys(REF.broadcast[op])) do
        local cases = REF.broadcast[op][dtype]
        local pair = input_values(dtype, REF.binary_input)
        local a = torch.tensor(pair[1], {dtype = dtype}):view(2, 3)
        local b = torch.tensor(pair[2], {dtype = dtype}):view(2, 3)
        local row, col = b:select(1, 1), b:narrow(2, 1, 1)
        local what = op .. ' on ' .. dtype
        local forms = {
          row = function() return a[op](a, row) end,
          col = function() return a[op](a, col) end,
          row_left = function() return torch[op](row, a) end,
        }
        for name, fn in pairs(forms) do
          if cases[name] == ERR then raises(fn, what .. ' ' .. name)
          else check(fn(), cases[name], what .. ', ' .. name) end
        end
      end
    end)
  end

  it('raises on shapes that cannot broadcast, naming them', function()
    local ok, err = pcall(function() return torch.zeros(2, 3):mul(torch.zeros(2)) end)
    assert.is_false(ok)
    assert.truthy(err:find('mul: shapes 2x3 and 2 cannot broadcast', 1, true), err)
  end)

  it('broadcasts both operands (3x1 with 1x4)', function()
    local r = torch.tensor({{1}, {2}, {3}}) * torch.tensor({{10, 20, 30, 40}})
    assert.are.same({3, 4}, {r:size(1), r:size(2)})
    assert.are.same({10, 20, 30, 40, 20, 40, 60, 80, 30, 60, 90, 120}, r:_flat_values())
  end)
end)

describe('Lua numbers as operands, against PyTorch', function()
  for _, op in ipairs(sorted_keys(REF.scalar)) do
    it(op, function()
      for _, dtype in ipairs(sorted_keys(REF.scalar[op])) do
        local cases = REF.scalar[op][dtype]
        local x = torch.tensor(input_values(dtype, REF.binary_input)[1], {dtype = dtype}):view(2, 3)
        local what = op .. ' on ' .. dtype
        local forms = {
          int = function() return x[op](x, 2) end,
          float = function() return x[op](x, 2.5) end,
          int_left = function() return torch[op](2, x) end,
          float_left = function() return torch[op](2.5, x) end,
        }
        local meta = METAMETHOD[op]
        for name, fn in pairs(forms) do
          if cases[name] == ERR then raises(fn, what .. ' ' .. name)
          else
            check(fn(), cases[name], what .. ', ' .. name)
            if meta then
              local s = name:find('float') and 2.5 or 2
              local r = name:find('left') and meta(s, x) or meta(x, s)
              check(r, cases[name], what .. ', operator ' .. name)
            end
          end
        end
      end
    end)
  end

  it('treats Lua booleans as bool scalars', function()
    check(torch.tensor({true, false}) + true, {'bool', {true, true}}, 'bool + true')
    check(torch.tensor({1, 2}) + true, {'int64', {2, 3}}, 'int64 + true')
    check(torch.tensor({1.5}) * false, {'float32', {0}}, 'float32 * false')
  end)
end)

-- ---- the rules around the ops ----

describe('type promotion (PyTorch result_type)', function()
  local function make(dtype, zero_dim)
    if zero_dim then return torch.zeros({}, {dtype = dtype}) end
    return torch.zeros(2, {dtype = dtype})
  end

  local function table_check(name, rows, zero_a, zero_b)
    for _, da in ipairs(REF.dtypes) do
      for j, db in ipairs(REF.dtypes) do
        local r = torch.add(make(da, zero_a), make(db, zero_b))
        assert.are.equal(rows[da][j], r.dtype, name .. ': ' .. da .. ' with ' .. db)
      end
    end
  end

  it('between dimensioned tensors', function() table_check('dim/dim', REF.promote_dim_dim, false, false) end)
  it('between a tensor and a 0-dim tensor', function()
    table_check('dim/0-dim', REF.promote_dim_zero, false, true)
    -- and the other way round: the same rule
    for _, da in ipairs(REF.dtypes) do
      for j, db in ipairs(REF.dtypes) do
        assert.are.equal(REF.promote_dim_zero[da][j], torch.add(make(db, true), make(da, false)).dtype)
      end
    end
  end)
  it('between 0-dim tensors', function() table_check('0-dim/0-dim', REF.promote_zero_zero, true, true) end)

  it('with Lua numbers (integers, floats, booleans) as Python numbers', function()
    for _, key in ipairs({'dim', 'zero'}) do
      local rows = REF['promote_' .. key .. '_scalar']
      for _, da in ipairs(REF.dtypes) do
        local x = make(da, key == 'zero')
        assert.are.equal(rows[da].int, torch.add(x, 2).dtype, key .. ' ' .. da .. ' + 2')
        assert.are.equal(rows[da].float, torch.add(x, 2.5).dtype, key .. ' ' .. da .. ' + 2.5')
        assert.are.equal(rows[da].bool, torch.add(x, true).dtype, key .. ' ' .. da .. ' + true')
        assert.are.equal(rows[da].int, torch.add(2, x).dtype, key .. ' 2 + ' .. da)
      end
    end
    -- 2.0 is a float in Lua 5.4, as in Python
    assert.are.equal('float32', (torch.tensor({1}) + 2.0).dtype)
  end)

  it('follows the default dtype for float results', function()
    local f32 = torch.zeros(2)
    torch.set_default_dtype('float64')
    local ok, err = pcall(function()
      assert.are.equal('float64', (torch.tensor({1}) / 2).dtype)
      assert.are.equal('float64', torch.tensor({1}):exp().dtype)
      assert.are.equal('float32', (f32 + 2.5).dtype)
    end)
    torch.set_default_dtype('float32')
    assert(ok, err)
  end)

  it('compares in the promoted dtype', function()
    -- 16777217 is 16777216 in float32, as PyTorch compares
    check(torch.tensor({16777217}):eq(torch.tensor({16777216.0})), {'bool', {true}}, 'int64 eq float32')
    check(torch.tensor({1, 2}):lt(1.5), {'bool', {true, false}}, 'int64 lt 1.5')
    check(torch.tensor({1, 2}, {dtype = 'uint8'}):gt(torch.tensor({-1, 3}, {dtype = 'int8'})),
          {'bool', {true, false}}, 'uint8 gt int8 (in int16)')
  end)
end)

describe('in-place ops', function()
  it('refuse results they cannot hold', function()
    local x = torch.tensor({1, 2})
    local ok, err = pcall(x.add_, x, 1.5)
    assert.is_false(ok)
    assert.truthy(err:find("add_: result type float32 can't be cast to the desired output type int64", 1, true), err)
    assert.is_false(pcall(x.div_, x, 2))
    assert.is_false(pcall(x.exp_, x))
    assert.is_false(pcall(torch.tensor({true}).add_, torch.tensor({true}), 1))
    assert.are.same({1, 2}, x:_flat_values())
  end)

  it('refuse outputs smaller than the broadcast shape', function()
    local x = torch.zeros(3)
    local ok, err = pcall(x.add_, x, torch.zeros(2, 3))
    assert.is_false(ok)
    assert.truthy(err:find('add_: output of shape 3 cannot hold', 1, true), err)
  end)

  it('refuse expanded outputs, whose elements share memory', function()
    local x = torch.zeros(1):expand(3)
    local ok, err = pcall(x.add_, x, torch.tensor({1.0, 2, 3}))
    assert.is_false(ok)
    assert.truthy(err:find('more than one element of the written-to tensor', 1, true), err)
    assert.is_false(pcall(x.neg_, x))
    assert.are.same({0, 0, 0}, x:_flat_values())
  end)

  it('read inputs that overlap the output as they were', function()
    local x = torch.tensor({{1, 2}, {3, 4}})
    x:add_(x:t())
    assert.are.same({2, 5, 5, 8}, x:_flat_values())
    local y = torch.tensor({{1, 2}, {3, 4}})
    y:add_(y[1])
    assert.are.same({2, 4, 4, 6}, y:_flat_values())
    local z = torch.tensor({1, 2, 3})
    z:mul_(z)
    assert.are.same({1, 4, 9}, z:_flat_values())
  end)

  it('compute in the promoted dtype, then cast (one rounding)', function()
    -- 1 + (2^-11 + 2^-22) in float32 rounds up in float16 (PyTorch: 1.0009765625);
    -- rounding the operand to float16 first would give 1
    local h = torch.tensor({1}, {dtype = 'float16'})
    h:add_(torch.tensor({2 ^ -11 + 2 ^ -22}, {dtype = 'float32'}))
    assert.are.equal(1.0009765625, h[1])
    local i = torch.tensor({250}, {dtype = 'uint8'})
    i:add_(torch.tensor({10}))
    assert.are.equal(4, i[1])
  end)
end)

-- ---- rounded division: div's rounding_mode, floor_divide, // ----

describe('div with rounding_mode, against PyTorch', function()
  -- every way of asking for it, each a function of (a, b)
  local function forms(mode)
    local f = {
      ['x:div(y, mode)'] = function(a, b) return a:div(b, mode) end,
      ['x:div(y, {rounding_mode})'] = function(a, b) return a:div(b, {rounding_mode = mode}) end,
      ['torch.div'] = function(a, b) return torch.div(a, b, {rounding_mode = mode}) end,
      ['torch.divide'] = function(a, b) return torch.divide(a, b, mode) end,
    }
    if mode == 'floor' then
      f['x:floor_divide(y)'] = function(a, b) return a:floor_divide(b) end
      f['torch.floor_divide'] = function(a, b) return torch.floor_divide(a, b) end
      f['//'] = function(a, b) return a // b end
    end
    return f
  end

  for _, mode in ipairs({'floor', 'trunc'}) do
    local ref = REF.rounded_div[mode]
    it(mode .. ': every dtype, contiguous and strided, in place', function()
      for _, dtype in ipairs(sorted_keys(ref.binary)) do
        local expected = ref.binary[dtype]
        local pair = input_values(dtype, REF.binary_input)
        local a_in, b_in = layouts(pair[1], dtype, 2, 3), layouts(pair[2], dtype, 2, 3)
        local a, b = a_in.contiguous, b_in.contiguous
        local what = mode .. ' on ' .. dtype
        for name, f in pairs(forms(mode)) do
          if expected == ERR then raises(f, what .. ', ' .. name, a, b)
          else
            check(f(a, b), expected, what .. ', ' .. name)
            check(f(a_in.transposed, b_in.strided), expected, what .. ', ' .. name .. ', transposed with strided')
          end
        end
        if expected ~= ERR then
          local y = a:clone()
          assert.is_true(rawequal(y, y:div_(b, mode)), what .. ': in place returns self')
          check(y, expected, what .. ', in place')
          local st = a_in.strided
          st:div_(b_in.transposed, {rounding_mode = mode})
          check(st, expected, what .. ', in place on a strided view')
          if mode == 'floor' then check(a:clone():floor_divide_(b), expected, what .. ', floor_divide_') end
        end
      end
    end)

    it(mode .. ': broadcasting and Lua numbers on either side', function()
      for _, dtype in ipairs(sorted_keys(ref.broadcast)) do
        local cases = ref.broadcast[dtype]
        local pair = input_values(dtype, REF.binary_input)
        local a = torch.tensor(pair[1], {dtype = dtype}):view(2, 3)
        local b = torch.tensor(pair[2], {dtype = dtype}):view(2, 3)
        local row, col = b:select(1, 1), b:narrow(2, 1, 1)
        local got = {row = function() return a:div(row, mode) end, col = function() return a:div(col, mode) end,
                     row_left = function() return torch.div(row, a, mode) end}
        for name, fn in pairs(got) do
          if cases[name] == ERR then raises(fn, mode .. ' on ' .. dtype .. ' ' .. name)
          else check(fn(), cases[name], mode .. ' on ' .. dtype .. ', ' .. name) end
        end
      end
      for _, dtype in ipairs(sorted_keys(ref.scalar)) do
        local cases = ref.scalar[dtype]
        local x = torch.tensor(input_values(dtype, REF.binary_input)[1], {dtype = dtype}):view(2, 3)
        local got = {int = function() return x:div(2, mode) end, float = function() return x:div(2.5, mode) end,
                     int_left = function() return torch.div(2, x, mode) end,
                     float_left = function() return torch.div(2.5, x, {rounding_mode = mode}) end}
        if mode == 'floor' then
          got.int_op, got.float_left_op = function() return x // 2 end, function() return 2.5 // x end
          cases = setmetatable({int_op = cases.int, float_left_op = cases.float_left}, {__index = cases})
        end
        for name, fn in pairs(got) do
          if cases[name] == ERR then raises(fn, mode .. ' on ' .. dtype .. ' ' .. name)
          else check(fn(), cases[name], mode .. ' on ' .. dtype .. ', ' .. name) end
        end
      end
    end)
  end

  it('floor rebuilds the quotient from the remainder, as Python and PyTorch', function()
    -- 0.1 is a little above a tenth: 1 // 0.1 is 9, though 1 / 0.1 rounds to 10
    check(torch.tensor({1.0}):div(0.1, 'floor'), {'float32', {9}}, 'float32 1 // 0.1')
    check(torch.tensor({1.0}, {dtype = 'float64'}):div(0.1, 'floor'), {'float64', {9}}, 'float64 1 // 0.1')
    check(torch.tensor({1.0}) / 0.1, {'float32', {10}}, 'true division')
    -- zero quotients keep their sign; division by zero gives inf and nan
    local function sign_of_zero(t) return 1 / t:_flat_values()[1] end
    assert.are.equal(-math.huge, sign_of_zero(torch.tensor({-0.5}):div(2, 'trunc')))
    assert.are.equal(-math.huge, sign_of_zero(torch.tensor({-0.0}):div(3, 'floor')))
    check(torch.tensor({0.5}):div(-2, 'floor'), {'float32', {-1}}, '0.5 // -2')
    for _, mode in ipairs({'floor', 'trunc'}) do
      check(torch.tensor({5.0, -5, 0}):div(0, mode), {'float32', {INF, -INF, NAN}}, mode .. ' by zero')
    end
  end)

  it('integer division by zero raises; by -1 wraps as PyTorch', function()
    local x = torch.tensor({5, 7})
    for _, mode in ipairs({'floor', 'trunc'}) do
      local ok, err = pcall(x.div, x, torch.tensor({1, 0}), mode)
      assert.is_false(ok)
      assert.truthy(err:find('ZeroDivisionError', 1, true), err)
      assert.is_false(pcall(x.div, x, 0, {rounding_mode = mode}))
      local m = torch.tensor({-128}, {dtype = 'int8'})
      check(m:div(torch.tensor({-1}, {dtype = 'int8'}), mode), {'int8', {-128}}, 'int8 -128 by -1, ' .. mode)
      -- PyTorch traps (SIGFPE) on int64's most negative value over -1; here it wraps
      check(torch.tensor({math.mininteger}):div(-1, mode), {'int64', {math.mininteger}}, 'int64 min by -1, ' .. mode)
    end
    assert.is_false(pcall(function() return x // 0 end))
  end)

  it('refuses unknown modes, bool tensors and results its self cannot hold', function()
    local x = torch.tensor({7, -7})
    local ok, err = pcall(x.div, x, 2, 'banana')
    assert.is_false(ok)
    assert.truthy(err:find("div: rounding_mode must be 'trunc', 'floor' or nil, got 'banana'", 1, true), err)
    assert.is_false(pcall(x.div, x, 2, {rounding_mode = 3}))
    local b = torch.tensor({true})
    assert.is_false(pcall(b.div, b, b, 'floor'))
    ok, err = pcall(x.div_, x, 2.5, 'floor')
    assert.is_false(ok)
    assert.truthy(err:find("can't be cast to the desired output type int64", 1, true), err)
    check(x:div(2, {rounding_mode = nil}), {'float32', {3.5, -3.5}}, 'no mode: true division')
  end)

  it('has a zero gradient, as PyTorch', function()
    local x = torch.tensor({1.5, -2.5, 3}, {requires_grad = true})
    local d = torch.tensor({2.0, 2, -2}, {requires_grad = true})
    local y = x:div(d, 'floor')
    check(y, {'float32', {0, -2, -2}}, 'values')
    assert.is_not_nil(y.grad_fn)
    y:sum():backward()
    check(x.grad, {'float32', {0, 0, 0}}, 'x.grad')
    check(d.grad, {'float32', {0, 0, 0}}, 'd.grad')
    local w = x * 1
    w:div_(2, 'trunc')
    check(w, {'float32', {0, -1, 1}}, 'in place')
    assert.is_not_nil(w.grad_fn)
    assert.is_true((x // 2).requires_grad)
  end)
end)

describe('round with decimals, against PyTorch', function()
  local input = {1.2345, -2.5551, 0.125, 1234.5678, 2.675}
  local REF_ROUND = {   -- torch.round(x, decimals=d) in each dtype, PyTorch 2.15
    float32 = {[2] = {1.2300000190734863, -2.559999942779541, 0.11999999731779099, 1234.5699462890625, 2.680000066757202},
               [1] = {1.2000000476837158, -2.5999999046325684, 0.10000000149011612, 1234.5999755859375, 2.700000047683716},
               [-2] = {0, -0.0, 0, 1200, 0}},
    float64 = {[2] = {1.23, -2.56, 0.12, 1234.57, 2.68}, [1] = {1.2, -2.6, 0.1, 1234.6, 2.7}, [-2] = {0, -0.0, 0, 1200, 0}},
    float16 = {[2] = {1.23046875, -2.55078125, 0.1199951171875, 1235, 2.6796875},
               [1] = {1.2001953125, -2.599609375, 0.0999755859375, 1235, 2.69921875}, [-2] = {0, -0.0, 0, 1200, 0}},
  }

  it('rounds to decimals in every float dtype, negative decimals too', function()
    for dtype, by_decimals in pairs(REF_ROUND) do
      local x = torch.tensor(input, {dtype = dtype})
      for decimals, want in pairs(by_decimals) do
        check(x:round({decimals = decimals}), {dtype, want}, dtype .. ' decimals ' .. decimals)
        check(torch.round(x, {decimals = decimals}), {dtype, want}, dtype .. ' torch.round decimals ' .. decimals)
      end
    end
    -- ties go to even, as round itself; decimals 0 is round
    check(torch.tensor({0.05, 0.15, 0.25, 0.35}, {dtype = 'float64'}):round({decimals = 1}),
          {'float64', {0, 0.2, 0.2, 0.4}}, 'ties')
    check(torch.tensor({0.5, 1.5, 2.5}):round({decimals = 0}), {'float32', {0, 2, 2}}, 'decimals 0')
    check(torch.tensor({123.456}):round({decimals = -1}), {'float32', {120}}, 'decimals -1')
  end)

  it('works on views and in place', function()
    local t = torch.tensor({{1.25, 2.5}, {-0.125, 3.75}}):t()
    check(t:round({decimals = 1}), {'float32', {1.2000000476837158, -0.10000000149011612, 2.5, 3.799999952316284}}, 'transposed')
    local y = torch.tensor(input)
    assert.is_true(rawequal(y, y:round_({decimals = 1})))
    check(y, {'float32', REF_ROUND.float32[1]}, 'round_')
    assert.is_false(pcall(function() torch.tensor({1.0}):expand(3):round_({decimals = 1}) end))
  end)

  it('refuses integer tensors and fractional decimals; its gradient is zero', function()
    local ok, err = pcall(function() return torch.tensor({123, 456}):round({decimals = -1}) end)
    assert.is_false(ok)
    assert.truthy(err:find('round: decimals are not supported for int64 tensors', 1, true), err)
    assert.is_false(pcall(function() return torch.tensor({1.5}):round({decimals = 0.5}) end))
    local w = torch.tensor({1.25, 2.5}, {requires_grad = true})
    local r = w:round({decimals = 1})
    assert.is_not_nil(r.grad_fn)
    r:sum():backward()
    check(w.grad, {'float32', {0, 0}}, 'gradient')
  end)
end)

describe('values with a defined error', function()
  it('integer fmod and remainder by zero raise (ZeroDivisionError)', function()
    local x = torch.tensor({5, 7})
    for _, op in ipairs({'fmod', 'remainder'}) do
      local ok, err = pcall(x[op], x, torch.tensor({1, 0}))
      assert.is_false(ok)
      assert.truthy(err:find('ZeroDivisionError', 1, true), err)
      assert.is_false(pcall(x[op], x, 0))
    end
    assert.is_false(pcall(function() return x % 0 end))
    check(torch.tensor({5.0}):fmod(0), {'float32', {NAN}}, 'float fmod by zero')
  end)

  it('integers to negative integer powers raise for a number exponent', function()
    local x = torch.tensor({2, 4})
    local ok, err = pcall(x.pow, x, -1)
    assert.is_false(ok)
    assert.truthy(err:find('negative integer powers', 1, true), err)
    check(x:pow(-1.0), {'float32', {0.5, 0.25}}, 'int64 ^ -1.0')
    check(x:pow(torch.tensor({-1, 2})), {'int64', {0, 16}}, 'int64 ^ tensor with -1')
  end)

  it('alpha must be integral for integer tensors', function()
    local x, y = torch.tensor({5, 7}), torch.tensor({1, 2})
    check(x:add(y, {alpha = 3}), {'int64', {8, 13}}, 'add alpha 3')
    check(x:sub(y, {alpha = 2}), {'int64', {3, 3}}, 'sub alpha 2')
    check(x:add(3, y), {'int64', {8, 13}}, 'Torch7 add(value, y)')
    assert.is_false(pcall(x.add, x, y, {alpha = 0.5}))
    check(x:float():add(y, {alpha = 0.5}), {'float32', {5.5, 8}}, 'float add alpha 0.5')
  end)

  it('bool tensors refuse arithmetic PyTorch refuses', function()
    local b = torch.tensor({true, false})
    for _, op in ipairs({'sub', 'fmod', 'remainder', 'pow'}) do
      assert.is_false(pcall(b[op], b, b), op)
    end
    for _, op in ipairs({'neg', 'abs', 'relu', 'floor'}) do assert.is_false(pcall(b[op], b), op) end
    check(b:add(b), {'bool', {true, false}}, 'bool add')
    check(b:mul(torch.tensor({false, false})), {'bool', {false, false}}, 'bool mul')
  end)
end)

describe('0-dim and empty tensors', function()
  it('0-dim tensors give 0-dim results', function()
    local s = torch.tensor(2.5)
    local r = s:exp()
    assert.are.equal(0, r:dim())
    assert.is_true(math.abs(r:item() - 12.182494) < 1e-5)
    local t = s * 2
    assert.are.equal(0, t:dim())
    assert.are.equal(5, t:item())
    assert.are.equal(0, (torch.tensor(3) - torch.tensor(1)):dim())
  end)

  it('0-dim tensors broadcast with dimensioned ones, which keep their dtype', function()
    check(torch.tensor(2) + torch.tensor({1, 2}), {'int64', {3, 4}}, '0-dim int64 + int64')
    check(torch.tensor(2.5, {dtype = 'float64'}) + torch.tensor({1, 2}, {dtype = 'float32'}),
          {'float32', {3.5, 4.5}}, '0-dim float64 + float32')
    check(torch.tensor({1, 2}) * torch.tensor(0.5, {dtype = 'float64'}), {'float64', {0.5, 1}},
          'int64 * 0-dim float64')
    check(torch.tensor({1, 2}, {dtype = 'uint8'}) + torch.tensor(300), {'uint8', {45, 46}}, 'uint8 + 0-dim int64')
  end)

  it('compare with numbers and each other through <, <=, >, >=', function()
    local s = torch.tensor(2.5)
    assert.is_true(s < 3)
    assert.is_false(3 < s)
    assert.is_true(s > 2)
    assert.is_true(s >= 2.5)
    assert.is_true(s <= 2.5)
    assert.is_true(torch.tensor(1) <= torch.tensor(1))
    assert.is_false(torch.tensor(1) < torch.tensor(1))
    assert.is_true(torch.tensor(true) > 0)
    local ok, err = pcall(function() return torch.zeros(2) < 1 end)
    assert.is_false(ok)
    assert.truthy(err:find('one-element', 1, true), err)
  end)

  it('empty tensors give empty results of the right shape and dtype', function()
    local e = torch.zeros(0, 3)
    local r = e:exp()
    assert.are.same({0, 3}, {r:size(1), r:size(2)})
    local s = e + torch.zeros(3)
    assert.are.same({0, 3}, {s:size(1), s:size(2)})
    assert.are.equal('float32', s.dtype)
    assert.are.equal(0, (torch.zeros(0) + 1):numel())
    assert.are.equal('bool', torch.zeros(0, {dtype = 'int64'}):lt(1).dtype)
    local b = torch.zeros(0, 1) * torch.zeros(1, 4)
    assert.are.same({0, 4}, {b:size(1), b:size(2)})
    e:add_(1)
    assert.is_false(pcall(function() return torch.zeros(0, 3) + torch.zeros(2) end))
  end)
end)

describe('== and eq', function()
  it('== is identity, eq compares elements', function()
    local x = torch.tensor({1, 2, 3})
    local y = x:clone()
    assert.is_true(x == x)
    assert.is_false(x == y)
    assert.is_false(x == x:view(3))
    assert.is_false(torch.tensor(1) == 1)
    check(x:eq(y), {'bool', {true, true, true}}, 'eq')
    check(x:eq(2), {'bool', {false, true, false}}, 'eq number')
    check(x:ne(y), {'bool', {false, false, false}}, 'ne')
    local set = {[x] = 'x'}
    assert.are.equal('x', set[x])
    assert.is_nil(set[y])
  end)
end)

describe('float32 erf and gelu, vectorised', function()
  -- within a few ulp of the exact value: |err| <= atol + rtol |ref|
  local function near(got, ref, atol, rtol, what)
    local g, r = got:double(), ref:double()
    local bad = ((g - r):abs() - (r:abs() * rtol + atol)):max():item()
    assert.is_true(bad <= 0, string.format('%s: off by %g beyond the tolerance', what, bad))
  end

  it('erf is within 2 ulp of float64 erf from -6 to 6, and exact at the ends', function()
    local x64 = torch.linspace(-6, 6, 24001, {dtype = 'float64'})
    local x = x64:float()
    near(x:erf(), x:double():erf(), 0, 2.4e-7, 'erf on [-6, 6]')
    local tiny = torch.tensor({1e-30, -1e-20, 1e-8, 0}, {dtype = 'float32'})
    near(tiny:erf(), tiny:double():erf(), 0, 1.2e-7, 'erf near zero')
    local ends = torch.tensor({math.huge, -math.huge, 10, -10, 0 / 0}):erf()
    assert.are.same({1, -1, 1, -1}, {ends[1], ends[2], ends[3], ends[4]})
    assert.is_true(ends[5] ~= ends[5])
  end)

  -- reference gradients computed with PyTorch 2.15: (gelu(x) * w).sum() for
  -- x = linspace(-5, 5, 11), w = linspace(0.5, 1.5, 11), float32; and gelu(x).sum()
  -- for x = (arange(12):view(4, 3) * 0.5 - 3):t() (a transposed input)
  local REF_GELU = {-3.56137753e-06, -0.000302177679, -0.00836192351, -0.0681855008, -0.0749838874, 0.5,
                    1.19164693, 1.30227828, 1.31552923, 1.4007051, 1.50001073}
  local REF_GELU_TANH = {-1.00543787e-06, -0.000200983253, -0.00810900796, -0.0688793808, -0.0746676847, 0.5,
                         1.19126046, 1.30331922, 1.31505954, 1.40046895, 1.5000031}
  local REF_TRANSPOSED = {-0.0119456491, -0.127469182, 0.5, 1.12746918, -0.0376110822, -0.0833154768,
                          0.86749512, 1.08523178, -0.0852317959, 0.13250488, 1.08331549, 1.03761113}

  it('backward matches PyTorch, exact and tanh forms, on a transposed input too', function()
    local w = torch.linspace(0.5, 1.5, 11)
    for _, case in ipairs({{'none', REF_GELU}, {'tanh', REF_GELU_TANH}}) do
      local x = torch.linspace(-5, 5, 11):requires_grad_()
      ;(x:gelu({approximate = case[1]}) * w):sum():backward()
      near(x.grad, torch.tensor(case[2]), 1e-7, 1e-6, 'gelu backward ' .. case[1])
    end
    local xt = (torch.arange(0, 12):view(4, 3) * 0.5 - 3):t():requires_grad_()
    assert.is_false(xt:is_contiguous())
    xt:gelu():sum():backward()                    -- the gradient arrives expanded (stride 0)
    near(xt.grad:reshape(12), torch.tensor(REF_TRANSPOSED), 1e-7, 1e-6, 'gelu backward, transposed')
  end)

  it('backward in one kernel agrees with the recorded formula create_graph uses', function()
    for _, approximate in ipairs({'none', 'tanh'}) do
      for _, dtype in ipairs({'float64', 'float32'}) do
        local x = torch.linspace(-4, 4, 33, {dtype = dtype}):requires_grad_()
        local g = torch.linspace(-1, 2, 33, {dtype = dtype})
        local plain = torch.autograd.grad(x:gelu({approximate = approximate}), x, {grad_outputs = g})[1]
        local recorded = torch.autograd.grad(x:gelu({approximate = approximate}), x,
                                             {grad_outputs = g, create_graph = true})[1]
        near(plain, recorded:detach(), dtype == 'float64' and 1e-15 or 1e-7, dtype == 'float64' and 1e-13 or 1e-6,
             'gelu ' .. approximate .. ' ' .. dtype)
      end
    end
  end)
end)
