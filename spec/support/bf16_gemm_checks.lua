-- spec/support/bf16_gemm_checks.lua: bfloat16 matrix products checked against their
-- definition, run by gemm_spec under each bfloat16 kernel (TH_GEMM_BF16=native: pairs of
-- steps on AVX512_BF16's vdpbf16ps; widen: the float32 kernel on widened values). Prints
-- the kernel, then one line per failure, then 'DONE' and three sums of a random product.
local failures = 0
local function fail(what)
  failures = failures + 1
  print('FAIL ' .. what)
end

print('KERNEL ' .. torch._gemm_kernel('bfloat16'))

-- products of bfloat16 integers in [-8, 8] and their float32 sums (under 2^24) are exact:
-- the result is the exact product rounded to bfloat16 once; k = 1537 crosses two blocks of
-- 768 steps with one step over, an odd k leaves half a pair
for _, s in ipairs{{16, 32, 1}, {17, 33, 3}, {24, 100, 383}, {9, 40, 1537}, {130, 70, 769}, {64, 784, 256},
                   {33, 1030, 31}} do
  local m, n, k = s[1], s[2], s[3]
  for _, la in ipairs{'n', 't'} do
    for _, lb in ipairs{'n', 't'} do
      torch.manual_seed(m * n + k)
      local function ints(r, c, layout)
        local x = torch.randint(-8, 9, {r, c}):float()
        if layout == 't' then x = x:t():contiguous():t() end
        return x:bfloat16()
      end
      local a, b = ints(m, k, la), ints(k, n, lb)
      local want = a:double():mm(b:double()):bfloat16()
      local what = ('%dx%d @ %dx%d, a %s, b %s'):format(m, k, k, n, la, lb)
      if not torch.equal(a:mm(b), want) then fail(what) end
      local c = torch.zeros(n, m):bfloat16():t()
      torch.mm(a, b, {out = c})
      if not torch.equal(c, want) then fail(what .. ', column-major result') end
      local acc = torch.randint(-8, 9, {m, n}):bfloat16()
      local want2 = (acc:double() * 2 + a:double():mm(b:double()) * -1):bfloat16()
      if not torch.equal(torch.addmm(acc, a, b, {beta = 2, alpha = -1}), want2) then fail(what .. ', addmm') end
    end
  end
end

-- the same bits at 1 and 2 threads (every block of columns on one kernel)
local before = torch.getnumthreads()
torch.manual_seed(21)
local a, b = torch.randn(200, 701):bfloat16(), torch.randn(701, 300):bfloat16()
local x, w = torch.randn(64, 784):bfloat16(), torch.randn(256, 784):bfloat16()
local r = {}
for i, t in ipairs{1, 2} do
  torch.setnumthreads(t)
  r[i] = {a:mm(b), x:mm(w:t()), b:t():mm(a:t())}
end
torch.setnumthreads(before)
for j = 1, 3 do
  if not torch.equal(r[1][j], r[2][j]) then fail('product ' .. j .. ' differs between 1 and 2 threads') end
end

-- a random product, for the two kernels to be compared
torch.manual_seed(12)
local ra, rb = torch.randn(96, 1000):bfloat16(), torch.randn(1000, 200):bfloat16()
local d = ra:mm(rb):float()
print('DONE ' .. failures)
print(('%.9g %.9g %.9g'):format(d:sum():item(), d[1][1], d[96][200]))
