-- torch7_step: a training step written the Torch7 way: nn.Sequential of
-- Linear(784, 256), Tanh, Linear(256, 10), LogSoftMax with ClassNLLCriterion on
-- a batch of 64 (float32), zeroGradParameters, forward, the criterion's forward
-- and backward, backward, updateParameters(0.01); against the same network and
-- step in PyTorch (nn.Sequential, nll_loss, backward, p -= lr * grad).
-- Two cases: `step`, Torch7's backward as written, which also computes the first
-- layer's gradInput (a third 64x784x256 product that PyTorch's step does not make:
-- its input does not require grad); and `step_gradInput_nil`, the same after
-- `model.modules[1].gradInput = nil`, Torch7's way to say nobody reads it (the
-- same work as PyTorch's step, which is timed again for it).
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
require 'nn'
torch.dialect('torch7')
torch.setdefaulttensortype('torch.FloatTensor')

local function fill(t, scale)        -- fixed values, the same on both sides
  torch.no_grad(function() t:copy(torch.range(0, t:nElement() - 1):sin():mul(scale):viewAs(t)) end)
end
local x = torch.range(0, 64 * 784 - 1):cos():view(64, 784)
local y = torch.range(0, 63):long():fmod(10):add(1)                  -- 1-based classes

local function run(case, skip_first_gradInput)
  local model = nn.Sequential()
  model:add(nn.Linear(784, 256)):add(nn.Tanh()):add(nn.Linear(256, 10)):add(nn.LogSoftMax())
  local criterion = nn.ClassNLLCriterion()
  fill(model.modules[1].weight, 0.05); fill(model.modules[1].bias, 0.01)
  fill(model.modules[3].weight, 0.1); fill(model.modules[3].bias, 0.01)
  if skip_first_gradInput then model.modules[1].gradInput = nil end
  local loss
  local function step()
    model:zeroGradParameters()
    local out = model:forward(x)
    loss = criterion:forward(out, y)
    local grad = criterion:backward(out, y)
    model:backward(x, grad)
    model:updateParameters(0.01)
  end
  for _ = 1, 20 do step() end
  local n = 300
  local t0 = torch.clock()
  for _ = 1, n do step() end
  print('TIME ' .. (torch.clock() - t0) / n .. ' ' .. case)
  torch.no_grad(function()
    print(string.format('CHECK %s %.5f %.6f %.6f', case, loss, model.modules[1].weight:sum(), model.modules[3].bias[1]))
  end)
end

run('step', false)
run('step_gradInput_nil', true)
