-- random_spec.lua: the Philox generator (seeding, state, generator objects,
-- thread-count independence), the samplers, and the rule-made tensors
-- (eye, arange, range, linspace, logspace). Statistics are plain Lua loops.
local torch = require 'torch'

local N = 100000   -- draws for statistics; also above the parallel grain

local function values(t) return t:_flat_values() end

local function mean_std(t)
  local v, sum, sq = values(t), 0.0, 0.0
  for i = 1, #v do sum = sum + v[i] end
  local mean = sum / #v
  for i = 1, #v do sq = sq + (v[i] - mean) ^ 2 end
  return mean, math.sqrt(sq / (#v - 1))
end

local function same(a, b)
  local x, y = values(a), values(b)
  if #x ~= #y then return false end
  for i = 1, #x do if x[i] ~= y[i] then return false end end
  return true
end

local function all(t, pred)
  for _, v in ipairs(values(t)) do if not pred(v) then return false end end
  return true
end

local function assert_values(expected, t, tol)
  local v = values(t)
  assert.are.equal(#expected, #v)
  for i = 1, #expected do
    if tol then
      assert.is_true(math.abs(v[i] - expected[i]) <= tol * math.max(1, math.abs(expected[i])),
                     ('value %d: %s vs %s'):format(i, tostring(v[i]), tostring(expected[i])))
    else
      assert.are.equal(expected[i], v[i])
    end
  end
end

local function assert_error(fn, text)
  local ok, err = pcall(fn)
  assert.is_false(ok, 'expected an error mentioning ' .. text)
  assert.truthy(tostring(err):find(text, 1, true), 'error "' .. tostring(err) .. '" lacks "' .. text .. '"')
end

-- words of block `counter` of `seed` (seed below 2^32)
local function block(seed, counter)
  return torch._philox({counter, 0, 0, 0}, {seed, 0})
end

local function with_threads(n, fn)
  local saved = torch.getnumthreads()
  torch.setnumthreads(n)
  local ok, r = pcall(fn)
  torch.setnumthreads(saved)
  assert(ok, r)
  return r
end

describe('Philox 4x32-10', function()
  it('matches the Random123 known-answer vectors', function()
    assert.are.same({0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}, torch._philox({0, 0, 0, 0}, {0, 0}))
    local ones = 0xffffffff
    assert.are.same({0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd},
                    torch._philox({ones, ones, ones, ones}, {ones, ones}))
    assert.are.same({0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1},
                    torch._philox({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}))
  end)

  it('lays float32 draws four to a block: value i is lane i % 4 of block i // 4', function()
    torch.manual_seed(1234)
    local x = torch.rand(10)
    for i = 0, 9 do
      local w = block(1234, i // 4)
      assert.are.equal((w[i % 4 + 1] >> 8) * 2.0 ^ -24, x[i + 1])
    end
    assert.are.equal(3, torch.get_rng_state()[9])       -- 3 blocks used, offset 3
    local y = torch.rand(1)                              -- the next draw starts at block 3
    assert.are.equal((block(1234, 3)[1] >> 8) * 2.0 ^ -24, y[1])
  end)

  it('lays float64 and integer draws two to a block', function()
    torch.manual_seed(99)
    local x = torch.rand(4, {dtype = 'float64'})
    for i = 0, 3 do
      local w = block(99, i // 2)
      local lo, hi = w[2 * (i % 2) + 1], w[2 * (i % 2) + 2]
      assert.are.equal(((hi << 21) | (lo >> 11)) * 2.0 ^ -53, x[i + 1])
    end
    torch.manual_seed(7)
    local r = torch.randint(0, 16, {6})                  -- a power-of-two range: the top bits
    for i = 0, 5 do
      assert.are.equal(block(7, i // 2)[2 * (i % 2) + 2] >> 28, r[i + 1])
    end
  end)
end)

describe('seeding and state', function()
  it('gives the same numbers for the same seed', function()
    local function draw()
      return {torch.rand(7), torch.randn(3, 4), torch.randint(-5, 5, {9}), torch.randperm(20),
              torch.multinomial(torch.tensor({0.1, 0.5, 0.4}), 6, true), torch.bernoulli(torch.full({8}, 0.5))}
    end
    torch.manual_seed(2024)
    local a = draw()
    torch.manual_seed(2024)
    local b = draw()
    for i = 1, #a do assert.is_true(same(a[i], b[i])) end
    torch.manual_seed(2025)
    assert.is_false(same(a[1], torch.rand(7)))
  end)

  it('reports and reseeds', function()
    local g = torch.manual_seed(31)
    assert.are.equal(torch.default_generator, g)
    assert.are.equal('torch.Generator', torch.type(g))
    assert.are.equal(31, torch.initial_seed())
    local s = torch.seed()
    assert.are.equal('integer', math.type(s))
    assert.is_true(s >= 0)
    assert.are.equal(s, torch.initial_seed())
    assert.are.not_equal(s, torch.seed())             -- non-deterministic
    torch.manual_seed(-1)                               -- any 64-bit pattern
    assert.are.equal(-1, torch.initial_seed())
  end)

  it('restores a stream with get_rng_state / set_rng_state', function()
    torch.manual_seed(5)
    torch.rand(3)
    local state = torch.get_rng_state()
    assert.are.equal('uint8', state.dtype)
    assert.are.equal(16, state:numel())
    local a = torch.randn(11)
    local b = torch.randint(100, {4})
    torch.set_rng_state(state)
    assert.is_true(same(a, torch.randn(11)))
    assert.is_true(same(b, torch.randint(100, {4})))
    assert_error(function() torch.set_rng_state(torch.zeros(16)) end, 'set_rng_state')
    assert_error(function() torch.set_rng_state(torch.zeros(3, {dtype = 'uint8'})) end, '16 bytes')
  end)

  it('keeps Generator objects independent of the global one', function()
    local g = torch.Generator()
    assert.are.equal(67280421310721, g:initial_seed())
    assert.are.equal(g, g:manual_seed(11))
    torch.manual_seed(11)
    local global = torch.rand(5)
    local a = torch.rand(5, {generator = g})
    assert.is_true(same(global, a))                   -- same seed, same stream
    torch.rand(100)                                    -- advancing the global one...
    local b = torch.rand(5, {generator = g})
    torch.manual_seed(11)
    torch.rand(5)
    local expected = torch.rand(5)
    assert.is_true(same(expected, b))                  -- ...does not move g
    local h = torch.Generator():manual_seed(11)
    torch.rand(5, {generator = h})
    assert.is_true(same(b, torch.rand(5, {generator = h})))
    assert.is_true(g:seed() >= 0)
  end)

  it('restores a Generator with get_state / set_state', function()
    local g = torch.Generator():manual_seed(3)
    local s = g:get_state()
    local a = torch.zeros(4, 5):normal_(0, 1, {generator = g})
    assert.are.equal(g, g:set_state(s))
    assert.is_true(same(a, torch.randn(4, 5, {generator = g})))
    assert_error(function() g:set_state(torch.zeros(2)) end, 'set_state')
    assert_error(function() torch.rand(2, {generator = 5}) end, 'torch.Generator')
  end)

  it('takes {generator=} in every sampler', function()
    local g = torch.Generator()
    local function run()
      g:manual_seed(8)
      return {torch.rand(3, {generator = g}), torch.randn(3, {generator = g}),
              torch.randint(9, {3}, {generator = g}), torch.randperm(5, {generator = g}),
              torch.bernoulli(torch.full({4}, 0.3), {generator = g}),
              torch.multinomial(torch.ones(6), 3, {generator = g}),
              torch.normal(torch.zeros(3), 1, {generator = g}),
              torch.zeros(3):uniform_(0, 1, {generator = g}), torch.zeros(3):random_(10, {generator = g}),
              torch.zeros(3):bernoulli_(0.5, {generator = g}), torch.zeros(3):exponential_(1, {generator = g}),
              torch.rand_like(torch.zeros(2), {generator = g}), torch.randint_like(torch.zeros(2), 5, {generator = g})}
    end
    torch.manual_seed(1)
    local a = run()
    torch.manual_seed(2)
    local b = run()
    for i = 1, #a do assert.is_true(same(a[i], b[i]), 'sampler ' .. i) end
  end)
end)

describe('thread-count independence', function()
  it('gives identical draws on 1 and 2 threads', function()
    local function draws()
      torch.manual_seed(77)
      local strided = torch.zeros(301, 333)
      strided:t():normal_(1, 2)
      return {torch.rand(N + 1), torch.randn(N + 3), torch.randn(N + 1, {dtype = 'float64'}),
              torch.randint(-1000, 1000, {N}), torch.zeros(N):bernoulli_(0.3),
              torch.zeros(N):exponential_(2), torch.normal(torch.zeros(N), torch.ones(N)),
              torch.multinomial(torch.rand(100, 200), 50), torch.multinomial(torch.rand(100, 200), 50, true),
              torch.randperm(N), torch.arange(0, N, 0.5), torch.linspace(-3, 7, N + 1), strided}
    end
    local one = with_threads(1, draws)
    local two = with_threads(2, draws)
    for i = 1, #one do assert.is_true(same(one[i], two[i]), 'draw ' .. i) end
  end)
end)

describe('distributions', function()
  before_each(function() torch.manual_seed(123) end)

  it('rand is uniform on [0, 1)', function()
    local x = torch.rand(N)
    assert.are.equal('float32', x.dtype)
    assert.is_true(all(x, function(v) return v >= 0 and v < 1 end))
    local m, s = mean_std(x)
    assert.is_true(math.abs(m - 0.5) < 0.005)
    assert.is_true(math.abs(s - math.sqrt(1 / 12)) < 0.005)
    assert.are.same({2, 3}, torch.rand(2, 3):size():totable())
    assert.are.same({2, 3}, torch.rand({2, 3}):size():totable())
    assert.are.equal('float64', torch.rand(2, {dtype = 'float64'}).dtype)
    for _, dt in ipairs({'float16', 'bfloat16'}) do
      local h = torch.rand(1000, {dtype = dt})
      assert.is_true(all(h, function(v) return v >= 0 and v < 1 end), dt)
    end
  end)

  it('uniform_ fills [a, b) in any layout', function()
    local x = torch.zeros(300, 400):t():uniform_(-2, 3)
    assert.is_true(all(x, function(v) return v >= -2 and v < 3 end))
    local m = mean_std(x)
    assert.is_true(math.abs(m - 0.5) < 0.03)
    local narrow = torch.zeros(1000, {dtype = 'float64'}):uniform_(1, 1 + 1e-15)
    assert.is_true(all(narrow, function(v) return v >= 1 and v < 1 + 1e-15 end))
    assert.is_true(all(torch.zeros(5):uniform_(2, 2), function(v) return v == 2 end))
  end)

  it('randn and normal_ have the right mean and spread', function()
    for _, dt in ipairs({'float32', 'float64'}) do
      local x = torch.randn(N, {dtype = dt})
      assert.are.equal(dt, x.dtype)
      local m, s = mean_std(x)
      assert.is_true(math.abs(m) < 0.01, dt)
      assert.is_true(math.abs(s - 1) < 0.01, dt)
      local tails = 0
      for _, v in ipairs(values(x)) do if math.abs(v) > 2 then tails = tails + 1 end end
      assert.is_true(math.abs(tails / N - 0.0455) < 0.003, dt)
    end
    local y = torch.zeros(N):normal_(3, 0.5)
    local m, s = mean_std(y)
    assert.is_true(math.abs(m - 3) < 0.01 and math.abs(s - 0.5) < 0.01)
    assert.is_true(all(torch.zeros(4):normal_(5, 0), function(v) return v == 5 end))
    local odd = torch.randn(7)                           -- odd sizes finish their last pair
    assert.are.equal(7, odd:numel())
  end)

  it('torch.normal takes tensors or numbers', function()
    local mean = torch.tensor({0, 10, 100}, {dtype = 'float64'})
    local x = torch.normal(mean:view(3, 1):expand(3, N // 3), 1)
    assert.are.equal('float64', x.dtype)
    assert.are.same({3, N // 3}, x:size():totable())
    local row_means = {}
    for r = 1, 3 do row_means[r] = (mean_std(x[r])) end
    assert.is_true(math.abs(row_means[1]) < 0.05 and math.abs(row_means[2] - 10) < 0.05
                   and math.abs(row_means[3] - 100) < 0.05)
    local spread = torch.normal(0, torch.tensor({0., 0, 1}))
    assert.are.equal(0, spread[1])
    assert.are.equal(0, spread[2])
    local both = torch.normal(torch.zeros(2, 1), torch.ones(4))
    assert.are.same({2, 4}, both:size():totable())
    local sized = torch.normal(2, 3, {1000})
    assert.are.equal('float32', sized.dtype)
    assert.are.equal(1000, sized:numel())
    assert.are.equal('number', type(torch.normal(0, 1)))   -- Torch7: one number
    local u = torch.uniform(5, 6)
    assert.is_true(u >= 5 and u < 6)
  end)

  it('randint gives values in [low, high), int64 by default', function()
    local x = torch.randint(-3, 4, {N})
    assert.are.equal('int64', x.dtype)
    local counts = {}
    for _, v in ipairs(values(x)) do
      assert.is_true(math.type(v) == 'integer' and v >= -3 and v < 4)
      counts[v] = (counts[v] or 0) + 1
    end
    for v = -3, 3 do assert.is_true(math.abs(counts[v] / N - 1 / 7) < 0.01) end
    local y = torch.randint(5, {2, 3})
    assert.are.same({2, 3}, y:size():totable())
    assert.is_true(all(y, function(v) return v >= 0 and v < 5 end))
    local f = torch.randint(0, 3, {100}, {dtype = 'float32'})
    assert.are.equal('float32', f.dtype)
    assert.is_true(all(f, function(v) return v == 0 or v == 1 or v == 2 end))
    local big = torch.randint(0, 1 << 62, {1000})
    local m = mean_std(big)
    assert.is_true(math.abs(m / 2 ^ 61 - 1) < 0.1)
    assert.are.equal(0, torch.randint(3, {}):dim())
  end)

  it('random_ follows PyTorch: [0, to), [from, to), or the whole exact range', function()
    assert.is_true(all(torch.zeros(1000):random_(10), function(v) return v >= 0 and v < 10 and v == math.floor(v) end))
    assert.is_true(all(torch.zeros(1000, {dtype = 'int16'}):random_(-5, 5), function(v) return v >= -5 and v < 5 end))
    local b = torch.zeros(1000, {dtype = 'uint8'}):random_()
    local top = 0
    for _, v in ipairs(values(b)) do top = math.max(top, v) end
    assert.is_true(top > 240 and top <= 255)
    assert.is_true(all(torch.zeros(100, {dtype = 'float16'}):random_(), function(v) return v >= 0 and v <= 2048 end))
    local flags = torch.zeros(100, {dtype = 'bool'}):random_()
    local trues = 0
    for _, v in ipairs(values(flags)) do if v then trues = trues + 1 end end
    assert.is_true(trues > 20 and trues < 80)
    assert.is_true(all(torch.zeros(100, {dtype = 'int64'}):random_(), function(v) return v >= 0 end))
  end)

  it('randperm is a permutation of 1..n', function()
    local p = torch.randperm(1000)
    assert.are.equal('int64', p.dtype)
    local seen = {}
    for _, v in ipairs(values(p)) do
      assert.is_true(v >= 1 and v <= 1000 and not seen[v])
      seen[v] = true
    end
    local moved = 0
    for i, v in ipairs(values(p)) do if v ~= i then moved = moved + 1 end end
    assert.is_true(moved > 900)
    assert.are.equal(0, torch.randperm(0):numel())
    assert.are.equal(1, torch.randperm(1)[1])
    local f = torch.randperm(10, {dtype = 'float32'})
    assert.are.equal('float32', f.dtype)
    local sum = 0
    for _, v in ipairs(values(f)) do sum = sum + v end
    assert.are.equal(55, sum)
  end)

  it('bernoulli draws 0/1 with probability p', function()
    local x = torch.bernoulli(torch.full({N}, 0.3))
    assert.are.equal('float32', x.dtype)
    assert.is_true(all(x, function(v) return v == 0 or v == 1 end))
    assert.is_true(math.abs(mean_std(x) - 0.3) < 0.01)
    assert.is_true(same(torch.tensor({0., 1, 1, 0}), torch.bernoulli(torch.tensor({0., 1, 1, 0}))))
    local y = torch.zeros(N, {dtype = 'int8'}):bernoulli_(0.8)
    assert.is_true(math.abs(mean_std(y) - 0.8) < 0.01)
    local z = torch.zeros(2, 3):bernoulli_(torch.tensor({0., 1, 0}))   -- broadcast probabilities
    assert.is_true(same(torch.tensor({{0., 1, 0}, {0, 1, 0}}), z))
    assert.is_true(math.abs(mean_std(torch.zeros(N):bernoulli_()) - 0.5) < 0.01)
    local w = torch.bernoulli(torch.zeros(5, {dtype = 'float64'}), 1)
    assert.are.equal('float64', w.dtype)
    assert.is_true(all(w, function(v) return v == 1 end))
    assert.is_true(all(torch.full({10}, 1.0):bernoulli(), function(v) return v == 1 end))
  end)

  it('bernoulli with one p draws what a tensor of that p draws, value for value', function()
    for _, dtype in ipairs({'float32', 'float64', 'uint8'}) do
      for _, p in ipairs({0, 0.2, 0.5, 0.999, 1}) do
        torch.manual_seed(11)
        local a = torch.empty(1003, {dtype = dtype}):bernoulli_(p)
        torch.manual_seed(11)
        local b = torch.empty(1003, {dtype = dtype}):bernoulli_(torch.full({1003}, p, {dtype = 'float64'}))
        assert.is_true(same(a, b), dtype .. ' p=' .. p)
        if p == 0 then assert.is_true(all(a, function(v) return v == 0 end)) end
        if p == 1 then assert.is_true(all(a, function(v) return v == 1 end)) end
      end
    end
  end)

  it('multinomial returns 1-based categories', function()
    local probs = torch.tensor({0.1, 0.2, 0.3, 0.4})
    local x = torch.multinomial(probs, N, true)
    assert.are.equal('int64', x.dtype)
    local counts = {0, 0, 0, 0}
    for _, v in ipairs(values(x)) do counts[v] = counts[v] + 1 end
    for k = 1, 4 do assert.is_true(math.abs(counts[k] / N - k / 10) < 0.01) end
    local never = torch.multinomial(torch.tensor({1., 0, 1}), 1000, {replacement = true})
    assert.is_true(all(never, function(v) return v == 1 or v == 3 end))
    for _ = 1, 20 do
      local d = torch.multinomial(torch.rand(50), 50)
      local seen = {}
      for _, v in ipairs(values(d)) do
        assert.is_true(v >= 1 and v <= 50 and not seen[v])
        seen[v] = true
      end
    end
    local last = torch.multinomial(torch.tensor({1., 0, 1}), 3)
    assert.are.equal(2, last[3])                       -- zero probability comes last
    local rows = torch.multinomial(torch.tensor({{0., 0, 1}, {1, 0, 0}}), 2, true)
    assert.are.same({2, 2}, rows:size():totable())
    assert.is_true(same(torch.tensor({{3, 3}, {1, 1}}), rows))
    local first = 0                                    -- without replacement, first pick ~ p
    for _ = 1, 2000 do
      if torch.multinomial(torch.tensor({0.8, 0.1, 0.1}), 2)[1] == 1 then first = first + 1 end
    end
    assert.is_true(math.abs(first / 2000 - 0.8) < 0.04)
    assert.are.equal(3, probs:multinomial(3):numel())
  end)

  it('exponential_, geometric_, cauchy_, log_normal_', function()
    local e = torch.zeros(N):exponential_(4)
    assert.is_true(all(e, function(v) return v > 0 end))
    assert.is_true(math.abs(mean_std(e) - 0.25) < 0.005)
    local g = torch.zeros(N):geometric_(0.25)
    assert.is_true(all(g, function(v) return v >= 1 and v == math.floor(v) end))
    assert.is_true(math.abs(mean_std(g) - 4) < 0.05)
    local gi = torch.zeros(100, {dtype = 'int64'}):geometric_(0.5)
    assert.is_true(all(gi, function(v) return math.type(v) == 'integer' and v >= 1 end))
    local c = values(torch.zeros(N):cauchy_(2, 1))
    table.sort(c)
    assert.is_true(math.abs(c[N // 2] - 2) < 0.03)
    assert.is_true(math.abs(c[3 * N // 4] - 3) < 0.05)          -- quartiles at median +- sigma
    local l = values(torch.zeros(N, {dtype = 'float64'}):log_normal_(1, 0.5))
    table.sort(l)
    assert.is_true(math.abs(l[N // 2] - math.exp(1)) < 0.03)
  end)

  it('rand_like, randn_like, randint_like keep the shape', function()
    local x = torch.zeros(3, 4, {dtype = 'float64'})
    assert.are.equal('float64', torch.rand_like(x).dtype)
    assert.are.same({3, 4}, torch.randn_like(x):size():totable())
    assert.are.equal('float32', torch.randn_like(x, {dtype = 'float32'}).dtype)
    local r = torch.randint_like(x, 5, 9)
    assert.are.equal('float64', r.dtype)
    assert.is_true(all(r, function(v) return v >= 5 and v < 9 end))
    assert.is_true(all(torch.randint_like(torch.zeros(10, {dtype = 'int32'}), 2), function(v) return v == 0 or v == 1 end))
  end)

  it('handles empty and 0-dim tensors', function()
    assert.are.equal(0, torch.rand(0, 3):numel())
    assert.are.equal(0, torch.randn(0):numel())
    local s = torch.rand({})
    assert.are.equal(0, s:dim())
    assert.is_true(s:item() >= 0 and s:item() < 1)
    assert.are.equal(0, torch.zeros(0):bernoulli_(0.5):numel())
  end)
end)

describe('random errors', function()
  it('refuses bad dtypes', function()
    assert_error(function() torch.rand(2, {dtype = 'int64'}) end, 'rand: expects a floating-point dtype, got int64')
    assert_error(function() torch.randn(2, {dtype = 'bool'}) end, 'randn')
    assert_error(function() torch.rand_like(torch.zeros(2, {dtype = 'int32'})) end, 'rand_like')
    assert_error(function() torch.zeros(2, {dtype = 'int64'}):uniform_() end, 'uniform_: expects a floating-point tensor')
    assert_error(function() torch.zeros(2, {dtype = 'int64'}):normal_() end, 'normal_')
    assert_error(function() torch.zeros(2, {dtype = 'int64'}):exponential_() end, 'exponential_')
    assert_error(function() torch.bernoulli(torch.tensor({1, 0})) end, 'bernoulli: expects a floating-point tensor')
    assert_error(function() torch.multinomial(torch.tensor({1, 2}), 1) end, 'floating-point')
    assert_error(function() torch.normal(torch.tensor({0, 1}), 1) end, 'normal: expects floating-point')
  end)

  it('refuses bad parameters', function()
    assert_error(function() torch.rand(2, -1) end, 'rand: negative size -1 in dim 2')
    assert_error(function() torch.randn({-3}) end, 'randn: negative size')
    assert_error(function() torch.randint(4, {-1}) end, 'randint: negative size')
    assert_error(function() torch.rand(2, 'a') end, 'rand')
    assert_error(function() torch.randint(5, 3, {2}) end, 'randint: expects low < high, got low=5, high=3')
    assert_error(function() torch.randint(5) end, 'randint: expects (high, size)')
    assert_error(function() torch.randint(0, 300, {2}, {dtype = 'uint8'}) end, 'does not fit uint8')
    assert_error(function() torch.zeros(3):uniform_(2, 1) end, 'uniform_')
    assert_error(function() torch.zeros(3):normal_(0, -1) end, 'normal_: expects std >= 0.0, got std=-1')
    assert_error(function() torch.zeros(3):exponential_(0) end, 'exponential_: expects lambda > 0.0')
    assert_error(function() torch.zeros(3):geometric_(1) end, 'geometric_: expects p in (0, 1)')
    assert_error(function() torch.zeros(3):geometric_() end, 'geometric_')
    assert_error(function() torch.zeros(3):cauchy_(0, 0) end, 'cauchy_')
    assert_error(function() torch.zeros(3):log_normal_(0, 0) end, 'log_normal_')
    assert_error(function() torch.zeros(3):bernoulli_(2) end, 'bernoulli_: expects p in [0, 1], got p=2')
    assert_error(function() torch.bernoulli(torch.tensor({0.5, 1.5})) end, 'bernoulli: expects every probability in [0, 1]')
    assert_error(function() torch.zeros(3):bernoulli_(torch.tensor({0 / 0})) end, 'bernoulli')
    assert_error(function() torch.zeros(3):random_(5, 5) end, "random_: expects low < high")
    assert_error(function() torch.zeros(3, {dtype = 'int8'}):random_(0, 200) end, 'does not fit int8')
    assert_error(function() torch.randperm(-1) end, 'randperm: n must be non-negative')
    assert_error(function() torch.randperm(300, {dtype = 'uint8'}) end, 'randperm: n=300 is too large for uint8')
    assert_error(function() torch.normal(0, -1, {2}) end, 'normal_: expects std >= 0.0')
    assert_error(function() torch.normal(torch.zeros(2), torch.tensor({1, -1.})) end, 'normal: expects all elements of std >= 0.0')
    assert_error(function() torch.normal(torch.zeros(2), torch.ones(3)) end, 'normal')
  end)

  it('refuses bad multinomial distributions', function()
    assert_error(function() torch.multinomial(torch.tensor({0.5, -1}), 1) end, 'inf, nan or element < 0')
    assert_error(function() torch.multinomial(torch.tensor({1, 0 / 0}), 1) end, 'inf, nan or element < 0')
    assert_error(function() torch.multinomial(torch.tensor({1, math.huge}), 1) end, 'inf, nan or element < 0')
    assert_error(function() torch.multinomial(torch.tensor({0., 0}), 1) end, 'sum of probabilities <= 0')
    assert_error(function() torch.multinomial(torch.tensor({1., 1}), 3) end, 'cannot sample n_sample > prob_dist.size(-1)')
    assert_error(function() torch.multinomial(torch.tensor({1., 1}), 0) end, 'cannot sample n_sample <= 0')
    assert_error(function() torch.multinomial(torch.ones(2, 2, 2), 1) end, 'prob_dist must be 1 or 2 dim, got 2x2x2')
    assert_error(function() torch.multinomial(torch.tensor(1.0), 1) end, 'prob_dist must be 1 or 2 dim')
  end)
end)

describe('rule-made tensors', function()
  -- expected values computed with PyTorch 2.x
  it('arange: end excluded, int64 from integers, default float otherwise', function()
    local a = torch.arange(5)
    assert.are.equal('int64', a.dtype)
    assert_values({0, 1, 2, 3, 4}, a)
    local f = torch.arange(0.5, 3)
    assert.are.equal('float32', f.dtype)
    assert_values({0.5, 1.5, 2.5}, f)
    assert_values({10, 7, 4, 1}, torch.arange(10, 0, -3))
    assert_values({-3, -1, 1, 3, 5}, torch.arange(-3, 7, 2))
    assert_values({0.0, 0.1, 0.2, 0.30000000000000004, 0.4, 0.5, 0.6000000000000001, 0.7000000000000001, 0.8, 0.9},
                  torch.arange(0, 1, 0.1, {dtype = 'float64'}))
    assert_values({0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5,
                   0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421},
                  torch.arange(0, 1, 0.1), 1e-7)
    assert_values({0, 0, 0, 0}, torch.arange(0, 2, 0.5, {dtype = 'int64'}))   -- PyTorch truncates the step
    assert.are.equal(0, torch.arange(5, 5):numel())
    assert.are.equal('float64', torch.arange(3, {dtype = 'float64'}).dtype)
    local big = torch.arange(N)
    assert.are.equal(N - 1, big[N])
  end)

  it('range: end included, default float dtype (Torch7)', function()
    local r = torch.range(1, 5)
    assert.are.equal('float32', r.dtype)
    assert_values({1, 2, 3, 4, 5}, r)
    assert_values({0, 0.25, 0.5, 0.75, 1}, torch.range(0, 1, 0.25))
    assert_values({5, 3, 1}, torch.range(5, 1, -2))
    assert_values({1, 3}, torch.range(1, 4, 2, {dtype = 'int64'}))
    assert.are.equal(1, torch.range(2, 2):numel())
  end)

  it('linspace: both ends exact', function()
    assert_values({-1.0, -0.6666666269302368, -0.3333333134651184, -2.9802322387695312e-08, 0.3333333134651184,
                   0.6666666269302368, 1.0}, torch.linspace(-1, 1, 7))
    assert_values({-1.0, -0.6666666666666667, -0.33333333333333337, 5.551115123125783e-17, 0.33333333333333337,
                   0.6666666666666667, 1.0}, torch.linspace(-1, 1, 7, {dtype = 'float64'}))
    assert_values({0.10000000149011612, 0.3444444537162781, 0.5888888835906982, 0.8333333134651184,
                   1.0777777433395386, 1.3222222328186035, 1.566666603088379, 1.8111110925674438,
                   2.055555582046509, 2.299999952316284}, torch.linspace(0.1, 2.3, 10))
    assert_values({0, 3, 6, 10}, torch.linspace(0, 10, 4, {dtype = 'int64'}))
    assert_values({-7, -3, 1, 5, 9, 13}, torch.linspace(-7, 13, 6, {dtype = 'int32'}))
    assert_values({3}, torch.linspace(3, 5, 1))
    assert.are.equal(0, torch.linspace(0, 1, 0):numel())
    assert.are.equal(100, torch.linspace(0, 1):numel())            -- Torch7's default steps
    assert_values({0, 0.25, 0.5, 0.75, 1}, torch.linspace(0, 1, 5, {dtype = 'float16'}))
  end)

  it('logspace: base ^ linspace', function()
    assert_values({1, 2, 4, 8}, torch.logspace(0, 3, 4, 2))
    assert_values({1, 2, 4, 8}, torch.logspace(0, 3, 4, {base = 2}))
    assert_values({0.1, 0.31622776601683794, 1.0, 3.1622776601683795, 10.0},
                  torch.logspace(-1, 1, 5, {dtype = 'float64'}), 1e-15)
    assert_values({0.10000000149011612, 0.3162277638912201, 1.0, 3.1622776985168457, 10.0},
                  torch.logspace(-1, 1, 5), 1e-7)
    assert_values({1, 10, 100, 1000}, torch.logspace(0, 3, 4, {dtype = 'int64'}))
    assert_values({1, 1, 3, 5, 9}, torch.logspace(0, 2, 5, 3, {dtype = 'int64'}))
  end)

  it('eye', function()
    local e = torch.eye(2, 3)
    assert.are.equal('float32', e.dtype)
    assert.are.same({2, 3}, e:size():totable())
    assert_values({1, 0, 0, 0, 1, 0}, e)
    assert_values({1, 0, 0, 1, 0, 0}, torch.eye(3, 2, {dtype = 'int64'}))
    assert_values({1, 0, 0, 0, 1, 0, 0, 0, 1}, torch.eye(3))
    assert.are.equal('int32', torch.eye(2, {dtype = 'int32'}).dtype)
    assert.are.same({0, 0}, torch.eye(0):size():totable())
  end)

  it('raises on bad ranges', function()
    assert_error(function() torch.arange(0, 5, 0) end, 'arange: step must be nonzero')
    assert_error(function() torch.arange(0, -5, 1) end, 'arange: upper bound and lower bound inconsistent with step sign')
    assert_error(function() torch.arange(0, math.huge) end, 'arange: unsupported range')
    assert_error(function() torch.arange() end, 'arange: expects')
    assert_error(function() torch.arange(1 << 60, (1 << 60) + 3) end, 'beyond 2^53')
    assert_error(function() torch.range(5, 1) end, 'range: upper bound and lower bound inconsistent')
    assert_error(function() torch.linspace(0, 1, -1) end, 'linspace: number of steps must be non-negative')
    assert_error(function() torch.logspace(0, 1, -2) end, 'logspace: number of steps must be non-negative')
    assert_error(function() torch.eye(-1) end, 'eye: sizes must be non-negative, got n=-1')
    assert_error(function() torch.eye(2, -3) end, 'm=-3')
  end)
end)
