-- gemm_spec.lua: float32 matrix products, whichever kernel computes them (moontorch's own
-- AVX-512 kernel where the CPU has it, OpenBLAS elsewhere and under TH_GEMM=openblas):
-- the values against the float64 product (the definition, to float32's rounding), at the
-- shapes that cut the kernel's blocks unevenly, in every layout, with alpha and beta, at
-- 1 and 2 threads.
local torch = require 'torch'
local th = dofile('spec/support/th.lua')

-- largest |got - want| over the largest |want|, want the float64 product
local function rel_err(got, want)
  local scale = math.max(want:abs():max():item(), 1e-30)
  return (got:double() - want):abs():max():item() / scale
end

-- a (m x k) as stored by layout 'n' (row-major) or 't' (a transposed copy's transpose)
local function stored(rows, cols, layout, seed)
  torch.manual_seed(seed)
  local x = torch.randn(rows, cols)
  if layout == 't' then return x:t():contiguous():t() end
  return x
end

-- (m, n, k): tiles of 8 rows by 32 columns, blocks of 384 steps, 128 rows and at most 1024
-- columns (512 for blocks of 384 steps); each shape leaves a part of some block over
local SHAPES = {
  {16, 32, 16}, {17, 33, 17}, {24, 100, 383}, {64, 784, 256}, {40, 70, 769}, {20, 600, 400},
  {130, 1030, 20}, {9, 40, 1000}, {1, 64, 64}, {64, 1, 64}, {64, 10, 256}, {3, 5, 2},
}

describe('matrix products summed in float32', function()
  it('equal the float64 product in every layout of a, b and the result', function()
    for _, s in ipairs(SHAPES) do
      local m, n, k = s[1], s[2], s[3]
      for _, la in ipairs{'n', 't'} do
        for _, lb in ipairs{'n', 't'} do
          local a, b = stored(m, k, la, m + k), stored(k, n, lb, n + 2 * k)
          local want = a:double():mm(b:double())
          local what = ('%dx%d @ %dx%d, a %s, b %s'):format(m, k, k, n, la, lb)
          local err = rel_err(a:mm(b), want)
          assert.is_true(err < 1e-5, what .. ': relative error ' .. err)
          -- into a column-major result: the kernel computes the transposed product
          local c = torch.zeros(n, m):t()
          torch.mm(a, b, {out = c})
          err = rel_err(c, want)
          assert.is_true(err < 1e-5, what .. ', column-major result: relative error ' .. err)
        end
      end
    end
  end)

  it('scales by alpha and adds beta times the input, and beta 0 ignores NaN in it', function()
    for _, s in ipairs{{64, 784, 256}, {33, 65, 400}, {20, 40, 30}} do
      local m, n, k = s[1], s[2], s[3]
      local a, b = stored(m, k, 'n', 1), stored(k, n, 't', 2)
      local c = stored(m, n, 'n', 3)
      local want = a:double():mm(b:double()) * 0.5 + c:double() * -2
      local got = torch.addmm(c, a, b, {beta = -2, alpha = 0.5})
      assert.is_true(rel_err(got, want) < 1e-5, m .. 'x' .. n .. 'x' .. k)
      local nan = torch.full({m, n}, 0 / 0)
      local clean = torch.addmm(nan, a, b, {beta = 0, alpha = 3})
      assert.is_false(clean:isnan():any():item(), 'beta 0 let a NaN of the input through')
      assert.is_true(rel_err(clean, a:double():mm(b:double()) * 3) < 1e-5)
      -- in place, accumulating, as a linear layer's weight gradient
      local acc = c:clone()
      acc:addmm_(a, b)
      assert.is_true(rel_err(acc, a:double():mm(b:double()) + c:double()) < 1e-5)
    end
  end)

  it('carries NaN and infinity from an input to the rows and columns they touch', function()
    local a, b = torch.ones(20, 50), torch.ones(50, 40)
    a[3][7] = 0 / 0
    b[9][5] = math.huge
    local c = a:mm(b)
    for i = 1, 20 do
      for j = 1, 40 do
        local v = c[i][j]
        if i == 3 then assert.is_true(v ~= v, 'row 3 is NaN')
        elseif j == 5 then assert.are.equal(math.huge, v)
        else assert.are.equal(50, v) end
      end
    end
  end)

  it('gives the same bits at 1 and 2 threads, batched products too', function()
    local before = torch.getnumthreads()
    local a, b = stored(200, 700, 'n', 5), stored(700, 300, 't', 6)
    local ba, bb = torch.randn(4, 40, 90), torch.randn(4, 90, 50)
    -- a linear layer's forward (x @ w^T) and weight gradient (g^T @ x)
    local x, w, g = torch.randn(64, 784), torch.randn(256, 784), torch.randn(64, 256)
    local r = {}
    local ok, err = pcall(function()
      for i, t in ipairs{1, 2} do
        torch.setnumthreads(t)
        r[i] = {a:mm(b), ba:bmm(bb), b:t():mm(a:t()), x:mm(w:t()), g:t():mm(x)}
      end
    end)
    torch.setnumthreads(before)
    assert(ok, err)
    for j = 1, 5 do assert.is_true(torch.equal(r[1][j], r[2][j]), 'product ' .. j .. ' differs') end
  end)

  it('multiplies bfloat16 and float16 matrices summing in float32 and rounding once, in every layout', function()
    -- bfloat16 keeps 8 significant bits, float16 11: the result is the float64 product of the
    -- same inputs to half a unit in the last place (relative to the largest entry, plus the
    -- float32 sum's rounding)
    for dt, tol in pairs{bfloat16 = 2 ^ -8, float16 = 2 ^ -10} do
      for _, s in ipairs{{64, 784, 256}, {40, 70, 769}, {130, 1030, 20}, {17, 33, 40}, {9, 40, 100}} do
        local m, n, k = s[1], s[2], s[3]
        for _, la in ipairs{'n', 't'} do
          for _, lb in ipairs{'n', 't'} do
            local a, b = stored(m, k, la, m + k):to(dt), stored(k, n, lb, n + 2 * k):to(dt)
            local want = a:double():mm(b:double())
            local got = a:mm(b)
            assert.are.equal(dt, got.dtype)
            local err = rel_err(got, want)
            assert.is_true(err < tol, ('%s %dx%d @ %dx%d, a %s, b %s: relative error %g'):format(dt, m, k, k, n, la, lb, err))
          end
        end
      end
      local ba, bb = torch.randn(3, 40, 50):to(dt), torch.randn(3, 50, 64):to(dt)
      assert.is_true(rel_err(ba:bmm(bb), ba:double():bmm(bb:double())) < tol, dt .. ' bmm')
      local acc = torch.randn(40, 64):to(dt)
      local want = acc:double() * 0.5 + ba[1]:double():mm(bb[1]:double()) * 2
      assert.is_true(rel_err(torch.addmm(acc, ba[1], bb[1], {beta = 0.5, alpha = 2}), want) < tol, dt .. ' addmm')
    end
  end)

  it('multiplies bfloat16 exactly on each kernel (pairs of steps where AVX512_BF16 is, widened), alike', function()
    -- spec/support/bf16_gemm_checks.lua under each kernel: small integers multiplied exactly
    -- in every layout, across blocks of steps, odd k and addmm; the same bits at 1 and 2
    -- threads; then a random product, which the two kernels sum in different orders
    local res = {}
    for _, mode in ipairs{'native', 'widen'} do
      local ok, out = th.run_env('TH_GEMM_BF16=' .. mode, 'spec/support/bf16_gemm_checks.lua')
      assert.is_true(ok, out)
      assert.is_truthy(out:find('DONE 0\n'), mode .. ':\n' .. out)
      local vals = {}
      for v in out:match('DONE 0\n(.*)'):gmatch('%S+') do vals[#vals + 1] = tonumber(v) end
      assert.are.equal(3, #vals, out)
      res[mode] = {kernel = out:match('KERNEL ([^\n]*)'), vals = vals}
    end
    assert.is_falsy(res.widen.kernel:find('BF16'), res.widen.kernel)
    if not res.native.kernel:find('AVX512_BF16') then
      pending('this CPU has no AVX512_BF16 (' .. res.native.kernel .. '): the widening kernel alone was checked')
      return
    end
    -- each result rounded to bfloat16 (8 bits): the kernels agree to a unit in its last place
    for i = 1, 3 do
      local x, y = res.native.vals[i], res.widen.vals[i]
      assert.is_true(math.abs(x - y) <= 2 ^ -7 * math.max(1, math.abs(y)), x .. ' against ' .. y)
    end
  end)

  it('names the kernel of each dtype, the same in a fresh process, and refuses an unknown dtype', function()
    local ok, auto = th.run('-e "io.write(torch._gemm_kernel(\'bfloat16\'))"')
    assert.is_true(ok, auto)
    assert.is_truthy(auto == 'OpenBLAS' or auto:find('^moontorch '), auto)
    assert.are.equal(torch._gemm_kernel('bfloat16'), auto)
    assert.are.equal(torch._gemm_kernel(), torch._gemm_kernel('float16'))
    assert.has_error(function() torch._gemm_kernel('int8') end,
                     "torch._gemm_kernel: expected 'float32', 'bfloat16' or 'float16', got 'int8'")
  end)

  it("reads a linear layer's weight where it is (x @ w^T, few rows of x), to the bits of its contiguous copy", function()
    if torch._gemm_kernel() == 'OpenBLAS' then
      pending('this CPU has no AVX-512: OpenBLAS computes both, each its own way')
      return
    end
    -- the own kernel sums each element over k in the same order either way: with w^T read
    -- in place (a batch of at most 128 rows against at least twice as many columns) and
    -- with w^T copied contiguous (packed as it is)
    for _, s in ipairs{{64, 784, 256}, {37, 100, 300}, {128, 333, 257}, {16, 64, 32}, {33, 17, 70}, {20, 900, 41}} do
      local m, k, n = s[1], s[2], s[3]
      torch.manual_seed(m + k + n)
      local x, w, bias = torch.randn(m, k), torch.randn(n, k), torch.randn(n)
      local what = ('%dx%d @ (%dx%d)^T'):format(m, k, n, k)
      assert.is_true(torch.equal(x:mm(w:t()), x:mm(w:t():contiguous())), what)
      assert.is_true(torch.equal(torch.addmm(bias, x, w:t()), torch.addmm(bias, x, w:t():contiguous())), what .. ' + bias')
      local c = torch.randn(m, n)
      assert.is_true(torch.equal(torch.addmm(c, x, w:t(), {beta = 0.5, alpha = -2}),
                                 torch.addmm(c, x, w:t():contiguous(), {beta = 0.5, alpha = -2})), what .. ', alpha, beta')
      assert.is_true(rel_err(x:mm(w:t()), x:double():mm(w:double():t())) < 1e-5, what)
    end
  end)

  it('agrees with OpenBLAS (TH_GEMM=openblas) to float32 rounding', function()
    if torch._gemm_kernel() == 'OpenBLAS' then
      pending('this CPU has no AVX-512: every product is on OpenBLAS already')
      return
    end
    local script = os.tmpname() .. '.lua'
    local f = assert(io.open(script, 'w'))
    f:write([[
torch.manual_seed(11)
local a, b = torch.randn(64, 784), torch.randn(256, 784)
local c = a:mm(b:t())
io.write(string.format('%.9g %.9g %.9g\n', c:sum():item(), c[1][1], c[64][256]))
]])
    f:close()
    local ok1, own = th.run(script)
    local ok2, blas = th.run_env('TH_GEMM=openblas', script)
    os.remove(script)
    assert.is_true(ok1, own)
    assert.is_true(ok2, blas)
    local x, y = {}, {}
    for v in own:gmatch('%S+') do x[#x + 1] = tonumber(v) end
    for v in blas:gmatch('%S+') do y[#y + 1] = tonumber(v) end
    assert.are.equal(3, #x, own)
    for i = 1, 3 do assert.is_true(math.abs(x[i] - y[i]) <= 1e-4 * math.max(1, math.abs(y[i])), own .. blas) end
  end)
end)
