-- activation_memory: a deep MLP (24 layers of Linear 256->256 followed by tanh,
-- sigmoid and GELU in turn, batch 8192) called PyTorch's way, model(x), forward +
-- backward. What it measures is memory: the peak resident set (run.py) and its
-- growth above what the process held before the model was built (MEMORY); each
-- layer's activation is 8 MiB, so what autograd saves dominates both. CHECK: the
-- loss (sum of squares) and the gradient of the 16th Linear's weight (abs sum).
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local nn = require 'nn'

-- resident memory in MiB: the current set (VmRSS) or its peak (VmHWM)
local function resident(field)
  local f = assert(io.open('/proc/self/status'))
  local text = f:read('a')
  f:close()
  return tonumber(text:match(field .. ':%s+(%d+) kB')) / 1024
end
local start = resident('VmRSS')

-- n fixed values in [-scale/2, scale/2), the same on both sides, with no low-rank
-- structure (an integer hash: sin(k) laid out in rows would be rank 2)
local function values(n, mult, mod, scale)
  return ((torch.arange(0, n, {dtype = 'int64'}) * mult % mod):float() / mod - 0.5) * scale
end

local width, batch, depth = 256, 8192, 24
local acts = {nn.Tanh, nn.Sigmoid, nn.GELU}
local model = nn.Sequential()
torch.no_grad(function()
  for i = 1, depth do
    local lin = nn.Linear(width, width)      -- fixed values, the same on both sides
    lin.weight:copy_(values(width * width, 7919 + i, 1009, 0.2):reshape(width, width))
    lin.bias:copy_(values(width, 31, 101, 0.02))
    model:add(lin)
    model:add(acts[(i - 1) % 3 + 1]())
  end
end)
local x = values(batch * width, 104729, 1013, 2):reshape(batch, width)

local function step()
  model:zero_grad()
  local loss = model(x):pow(2):sum()
  loss:backward()
  return loss
end

step()
local n, loss = 3, nil
local t0 = torch.clock()
for _ = 1, n do loss = step() end
print('TIME ' .. (torch.clock() - t0) / n .. ' forward+backward')
print(string.format('CHECK forward+backward %.2f %.4f', loss:item(), model[31].weight.grad:abs():sum():item()))
print(string.format('MEMORY %.1f growth', resident('VmHWM') - start))
print(string.format('NOTE allocator peak %.0f MiB (tensor memory alone)', torch.memory_stats().peak / 2^20))
