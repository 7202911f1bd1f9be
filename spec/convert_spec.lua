-- convert_spec.lua: float32 <-> bfloat16 and float16 conversions (copies, :to, casts) on
-- contiguous runs (vector loops) and strided ones (one element at a time), against the
-- definitions: bfloat16 is a float32's top 16 bits rounded to nearest even, a NaN stays a
-- quiet NaN; float16 is IEEE binary16, rounded to nearest even, overflowing to infinity.
local torch = require 'torch'

-- the float32 of bit pattern u, and the pattern of a float32 value x
local function f32(u) return (string.unpack('<f', string.pack('<I4', u))) end
local function bits(x) return (string.unpack('<I4', string.pack('<f', x))) end

-- float32 bit pattern u rounded to bfloat16, as the float32 it widens back to
local function bf16_of(u)
  if u & 0x7fffffff > 0x7f800000 then return 0 / 0 end
  local r = ((u + 0x7fff + ((u >> 16) & 1)) >> 16) & 0xffff
  return f32(r << 16)
end

-- float32 x rounded to the nearest binary16 (ties to even), as a number
local function f16_of(x)
  if x ~= x then return 0 / 0 end
  local a = math.abs(x)
  if a >= 65520 then return x > 0 and math.huge or -math.huge end     -- past the largest, 65504, by half a step
  local e = a == 0 and -14 or math.max(-14, math.floor(math.log(a, 2)))
  if a > 0 and 2 ^ (e + 1) <= a then e = e + 1 end                       -- log's rounding
  if a > 0 and 2 ^ e > a and e > -14 then e = e - 1 end
  local step = 2 ^ (e - 10)
  local q = a / step
  local n = math.floor(q)
  if q - n > 0.5 or (q - n == 0.5 and n % 2 == 1) then n = n + 1 end
  local v = n * step
  return x < 0 and -v or (x == 0 and x or v)
end

local function same(a, b) return (a ~= a and b ~= b) or a == b end

-- random float32 patterns of every kind: normal, denormal, near ties, infinities, NaNs
local function patterns(count, seed)
  math.randomseed(seed)
  local us = {0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0x7f7fffff,
              0xff7fffff, 0x00000001, 0x807fffff, 0x3f808000, 0x3f818000, 0x3f808001, 0x3f817fff, 0x7f7f8000,
              0x477fe000, 0x477ff000, 0x477fefff, 0x33000000, 0x33000001, 0x38800000, 0x387fc000}
  while #us < count do
    local u = math.random(0, 0xffffffff)
    if #us % 3 == 0 then u = (u & 0xffff0000) | 0x8000 end              -- exact ties for bfloat16
    us[#us + 1] = u
  end
  return us
end

describe('float32 to bfloat16 and float16', function()
  it('rounds every kind of float32 to bfloat16 as the definition, at every run length', function()
    local us = patterns(4000, 1)
    local xs = {}
    for i, u in ipairs(us) do xs[i] = f32(u) end
    local t = torch.tensor(xs, {dtype = 'float32'})
    for _, n in ipairs{#xs, 1, 15, 16, 17, 33} do
      local part = t:narrow(1, 1, n)
      local got = part:to('bfloat16'):float()
      for i = 1, n do
        assert.is_true(same(got[i], bf16_of(us[i])), ('%08x: got %s, want %s'):format(us[i], got[i], bf16_of(us[i])))
      end
    end
    -- a NaN stays a NaN, quiet, with the top of its payload
    local nan = torch.tensor({f32(0x7f800001), f32(0xffa00000)}):to('bfloat16'):float()
    assert.are.equal(0x7fc00000, bits(nan[1]))
    assert.are.equal(0xffe00000, bits(nan[2]))
  end)

  it('rounds to float16 as binary16 does, with overflow to infinity and denormals', function()
    local xs = {0, -0.0, 1, 1 + 2 ^ -11, 1 + 3 * 2 ^ -11, 65504, 65519.99, 65520, -70000, 2 ^ -24, 2 ^ -25,
                3 * 2 ^ -26, 2 ^ -14 - 2 ^ -25, 0.1, -1 / 3, math.huge, -math.huge, 0 / 0}
    math.randomseed(2)
    for _ = 1, 2000 do xs[#xs + 1] = f32(bits((math.random() - 0.5) * 2 ^ math.random(-30, 17))) end
    local t = torch.tensor(xs, {dtype = 'float32'})
    local want = {}
    for i = 1, #xs do want[i] = f16_of(t[i]) end
    for _, n in ipairs{#xs, 7, 8, 9} do
      local got = t:narrow(1, 1, n):to('float16'):float()
      for i = 1, n do
        assert.is_true(same(got[i], want[i]), ('%.9g: got %.9g, want %.9g'):format(t[i], got[i], want[i]))
      end
    end
  end)

  it('widens back exactly, and strided copies give what contiguous ones give', function()
    local us = patterns(999, 3)
    local xs = {}
    for i, u in ipairs(us) do xs[i] = f32(u) end
    local t = torch.tensor(xs, {dtype = 'float32'})
    for _, dt in ipairs{'bfloat16', 'float16'} do
      local low = t:to(dt)
      local wide = low:float()
      -- a 16-bit value widened and narrowed again is itself
      assert.is_true(torch.equal(wide:to(dt):float():isnan(), wide:isnan()), dt)
      local finite = wide:isnan():logical_not()
      assert.is_true(torch.equal(wide:to(dt):float()[finite], wide[finite]), dt .. ' round trip')
      -- every other element: the strided path
      local every2 = t:narrow(1, 1, 998):view(499, 2):select(2, 1)
      local s = every2:to(dt):float()
      local c = every2:contiguous():to(dt):float()
      assert.is_true(torch.equal(s:isnan(), c:isnan()), dt .. ' strided NaNs')
      local ok = s:isnan():logical_not()
      assert.is_true(torch.equal(s[ok], c[ok]), dt .. ' strided')
      local into = torch.zeros(499, 2):to(dt)
      into:select(2, 2):copy(every2)
      assert.is_true(torch.equal(into:select(2, 2):float()[ok], c[ok]), dt .. ' copy into a strided tensor')
      local back = torch.zeros(499, 2)
      back:select(2, 1):copy(low:narrow(1, 1, 998):view(499, 2):select(2, 1))
      assert.is_true(torch.equal(back:select(2, 1)[ok], c[ok]), dt .. ' widened into a strided tensor')
    end
  end)
end)

-- float16 elementwise ops run in float on blocks of 256 widened elements (src/tensor/
-- mt_pointwise.c): each result is the float32 result rounded once to binary16, as PyTorch's
-- CPU float16 ops compute; the reference here rounds the exact sum, product or quotient of
-- two halves to float32 (string.pack) and then to float16 (f16_of above).
describe('float16 elementwise ops', function()
  local function fl32(x) return (string.unpack('<f', string.pack('<f', x))) end
  -- n halves spread over several binades, some negative, with zeros and ties of the sum
  local function halves(n, seed)
    math.randomseed(seed)
    local xs = {}
    for i = 1, n do xs[i] = f16_of((math.random() - 0.4) * 2 ^ math.random(-16, 9)) end
    xs[1] = 0
    return xs
  end
  local OPS = {
    {'add', function(a, b) return a + b end, function(x, y) return x + y end},
    {'sub', function(a, b) return a - b end, function(x, y) return x - y end},
    {'mul', function(a, b) return a * b end, function(x, y) return x * y end},
    {'div', function(a, b) return a / b end, function(x, y) return x / y end},
  }

  it('give the float32 result rounded once, across blocks, with scalar operands and in place', function()
    for _, n in ipairs{1, 255, 256, 257, 1000} do
      local xs, ys = halves(n, n), halves(n, n + 1)
      for i = 1, n do if ys[i] == 0 then ys[i] = 0.5 end end
      local a = torch.tensor(xs, {dtype = 'float16'})
      local b = torch.tensor(ys, {dtype = 'float16'})
      for _, op in ipairs(OPS) do
        local name, f, g = op[1], op[2], op[3]
        local got, left, right = f(a, b):float(), f(a, 1.5):float(), f(3, b):float()
        local inplace = a:clone()
        inplace[name .. '_'](inplace, b)
        inplace = inplace:float()
        for i = 1, n do
          local want = f16_of(fl32(g(xs[i], ys[i])))
          assert.is_true(same(got[i], want), ('%s n=%d: %s, %s gave %.9g, want %.9g'):format(name, n, xs[i], ys[i], got[i], want))
          assert.is_true(same(inplace[i], want), ('%s_ in place n=%d at %d'):format(name, n, i))
          assert.is_true(same(left[i], f16_of(fl32(g(xs[i], 1.5)))), ('%s with a scalar n=%d at %d'):format(name, n, i))
          assert.is_true(same(right[i], f16_of(fl32(g(3, ys[i])))), ('%s of a scalar n=%d at %d'):format(name, n, i))
        end
      end
      -- comparisons give bools of the halves' order
      local lt = a:lt(b)
      assert.are.equal('bool', lt.dtype)
      for i = 1, n do assert.are.equal(xs[i] < ys[i], lt[i]) end
      -- unary ops: float32's result, rounded once
      for _, name in ipairs{'exp', 'tanh', 'sigmoid', 'sqrt', 'neg', 'abs'} do
        local src = name == 'sqrt' and a:abs() or a
        local got, want = src[name](src), src:float()[name](src:float()):half()
        assert.is_true(torch.equal(got, want), ('%s n=%d'):format(name, n))
      end
    end
  end)

  it('give the same results on strided operands as on contiguous ones', function()
    local xs, ys = halves(600, 7), halves(600, 8)
    local a = torch.tensor(xs, {dtype = 'float16'}):view(300, 2):select(2, 1)
    local b = torch.tensor(ys, {dtype = 'float16'}):view(2, 300):select(1, 2)
    assert.is_true(torch.equal(a + b, a:contiguous() + b:contiguous()))
    assert.is_true(torch.equal(a:exp(), a:contiguous():exp()))
    assert.is_true(torch.equal(a:lt(b), a:contiguous():lt(b:contiguous())))
  end)
end)
