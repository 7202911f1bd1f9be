-- conv_layers: conv2d forward + backward for a 3x3 64->64 layer on 56x56 (batch 32) and for
-- the example CNN's two layers (1->32 on 28x28, 32->64 on 14x14, batch 64; the first layer's
-- input is data and needs no gradient), and batch_norm (training) forward + backward on
-- 64x32x28x28: the C kernels under F.conv2d and F.batch_norm
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))

local cases = dofile((arg[0]:match('(.*/)') or './') .. 'common/cases.lua')
local ramp, time, report, abs_sum = cases.ramp, cases.time, cases.report, cases.abs_sum

-- {case, batch, in channels, out channels, size, input needs a gradient, timed runs}
local CONVS = {
  {'conv3x3_64to64_56x56_b32', 32, 64, 64, 56, true, 3},
  {'cnn_conv1_1to32_28x28_b64', 64, 1, 32, 28, false, 9},
  {'cnn_conv2_32to64_14x14_b64', 64, 32, 64, 14, true, 9},
}
for _, c in ipairs(CONVS) do
  local name, n, cin, cout, size, input_grad, reps = table.unpack(c)
  local x = ramp({n, cin, size, size}, 0.37, 1)
  if input_grad then x:requires_grad_() end
  local w = ramp({cout, cin, 3, 3}, 0.71, 0.1):requires_grad_()
  local b = ramp({cout}, 0.5, 0.1):requires_grad_()
  local g = ramp({n, cout, size, size}, 0.13, 1)
  local y
  local seconds = time(reps, function()
    x.grad, w.grad, b.grad = nil, nil, nil
    y = torch._conv2d(x, w, b, 1, 1, 1, 1, 1, 1, 1, 1, 1)
    y:backward(g)
  end)
  report(name, seconds, (y * y):sum():item(), abs_sum(w.grad), abs_sum(b.grad), input_grad and abs_sum(x.grad) or 0)
end

do
  local x = ramp({64, 32, 28, 28}, 0.37, 2):add(0.5):requires_grad_()
  local w = ramp({32}, 0.9, 0.5):add(1):requires_grad_()
  local b = ramp({32}, 0.4, 0.1):requires_grad_()
  local rm, rv = torch.zeros(32), torch.ones(32)
  local g = ramp({64, 32, 28, 28}, 0.13, 1)
  local y
  local seconds = time(9, function()
    x.grad, w.grad, b.grad = nil, nil, nil
    y = torch._batch_norm(x, w, b, rm, rv, true, 0.1, 1e-5)
    y:backward(g)
  end)
  report('batch_norm2d_64x32x28x28', seconds, (y * y):sum():item(), abs_sum(w.grad), abs_sum(b.grad), abs_sum(x.grad))
end
