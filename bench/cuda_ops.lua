-- gpu: float32 and bfloat16 matrix products (4096), an elementwise add, a sum and a softmax on the GPU
local function timed(case, reps, fn)
  fn()
  torch.cuda.synchronize()
  local best = math.huge
  for _ = 1, 3 do
    local t0 = torch.clock()
    for _ = 1, reps do fn() end
    torch.cuda.synchronize()
    best = math.min(best, (torch.clock() - t0) / reps)
  end
  print(string.format('TIME %.9g %s', best, case))
end

local n = 4096
local a = (torch.ones(n, n) * 0.5):cuda()
local b = (torch.ones(n, n) * 0.25):cuda()
local c
timed('mm_f32', 10, function() c = a:mm(b) end)
print(string.format('CHECK mm_f32 %.6g %.6g', c[1][1], c[n][n]))
local ah, bh = a:bfloat16(), b:bfloat16()
timed('mm_bf16', 20, function() c = ah:mm(bh) end)
print(string.format('CHECK mm_bf16 %.6g', c[n][n]))

local x = torch.ones(1 << 26):cuda()
local y = (torch.ones(1 << 26) * 2):cuda()
local z
timed('add_64M', 20, function() z = x + y end)
print(string.format('CHECK add_64M %.6g', z[1 << 26]))
local s
timed('sum_64M', 20, function() s = y:sum() end)
print(string.format('CHECK sum_64M %.6g', s:item()))
local m = (torch.ones(8192, 4096) * 0.5):cuda()
local p
timed('softmax_8192x4096', 20, function() p = m:softmax(2) end)
print(string.format('CHECK softmax_8192x4096 %.6g', p[1][1]))
