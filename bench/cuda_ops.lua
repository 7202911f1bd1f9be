-- gpu: float32 and bfloat16 matrix products (4096), an elementwise add, a sum, a softmax and a
-- 3-D convolution layer (forward and backward) with its poolings on the GPU
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

-- a 3-D convolution layer of a video network, float32 without TF32: forward, then the input
-- and weight gradients; max and average pooling over its output volumes
local F = require('nn').F
local v = torch.linspace(-1, 1, 8 * 32 * 16 * 28 * 28):view(8, 32, 16, 28, 28):cuda()
local k = (torch.linspace(-1, 1, 64 * 32 * 27):view(64, 32, 3, 3, 3) * 0.05):cuda()
local vr, kr = v:clone():requires_grad_(), k:clone():requires_grad_()
local o
timed('conv3d_fwd', 10, function() o = F.conv3d(v, k, nil, {padding = 1}) end)
print(string.format('CHECK conv3d_fwd %.6g', o:abs():sum():item() / o:numel()))
timed('conv3d_fwd_bwd', 5, function()
  vr.grad, kr.grad = nil, nil
  F.conv3d(vr, kr, nil, {padding = 1}):sum():backward()
end)
print(string.format('CHECK conv3d_fwd_bwd %.6g', kr.grad:abs():sum():item() / kr.grad:numel()))
timed('max_pool3d', 20, function() p = F.max_pool3d(o, 2) end)
print(string.format('CHECK max_pool3d %.6g', p:sum():item() / p:numel()))
timed('avg_pool3d', 20, function() p = F.avg_pool3d(o, 3, {stride = 2, padding = 1}) end)
print(string.format('CHECK avg_pool3d %.6g', p:sum():item() / p:numel()))
