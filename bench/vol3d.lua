-- vol3d: forward + backward of the 3-D layers, float32: conv3d (4x8x8x32x32 -> 16 channels,
-- 3x3x3, padding 1), max_pool3d and avg_pool3d on 4x16x8x32x32 (kernel 2 stride 2, and kernel
-- 3 stride 1 padding 1): F.conv3d, F.max_pool3d and F.avg_pool3d
local nn = require 'nn'
local F = nn.functional
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))

local cases = dofile((arg[0]:match('(.*/)') or './') .. 'common/cases.lua')
local ramp, time, report, abs_sum = cases.ramp, cases.time, cases.report, cases.abs_sum

do
  local x = ramp({4, 8, 8, 32, 32}, 0.37, 1):requires_grad_()
  local w = ramp({16, 8, 3, 3, 3}, 0.71, 0.1):requires_grad_()
  local b = ramp({16}, 0.5, 0.1):requires_grad_()
  local g = ramp({4, 16, 8, 32, 32}, 0.13, 1)
  local y
  local seconds = time(9, function()
    x.grad, w.grad, b.grad = nil, nil, nil
    y = F.conv3d(x, w, b, {padding = 1})
    y:backward(g)
  end)
  report('conv3d_8to16_k3_4x8x32x32', seconds, (y * y):sum():item(), abs_sum(w.grad), abs_sum(b.grad), abs_sum(x.grad))
end

-- {case, function, kernel, stride, padding}
local POOLS = {
  {'max_pool3d_k2s2', F.max_pool3d, 2, 2, 0},
  {'max_pool3d_k3s1p1', F.max_pool3d, 3, 1, 1},
  {'avg_pool3d_k2s2', F.avg_pool3d, 2, 2, 0},
  {'avg_pool3d_k3s1p1', F.avg_pool3d, 3, 1, 1},
}
for _, c in ipairs(POOLS) do
  local name, fn, k, s, p = table.unpack(c)
  local x = ramp({4, 16, 8, 32, 32}, 0.37, 1):requires_grad_()
  local y = fn(x, k, {stride = s, padding = p})
  local g = ramp(y:size():totable(), 0.13, 1)
  local seconds = time(9, function()
    x.grad = nil
    y = fn(x, k, {stride = s, padding = p})
    y:backward(g)
  end)
  report(name, seconds, (y * y):sum():item(), abs_sum(x.grad), (x.grad * x):sum():item())
end
