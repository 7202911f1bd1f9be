-- mlp_step: a 784-256-256-10 MLP (ReLU, cross-entropy) on a batch of 64:
-- backward alone, and forward + backward
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local function param(n, m, scale)    -- fixed values, the same on both sides
  return (torch.arange(0, n * m):sin() * scale):reshape(n, m):requires_grad_()
end
local w1, b1 = param(784, 256, 0.05), param(1, 256, 0.01)
local w2, b2 = param(256, 256, 0.06), param(1, 256, 0.01)
local w3, b3 = param(256, 10, 0.1), param(1, 10, 0.01)
local x = (torch.arange(0, 64 * 784):cos()):reshape(64, 784)
local y = (torch.arange(0, 64, {dtype = 'int64'}) % 10 + 1):view(64, 1)   -- 1-based classes
local params = {w1, b1, w2, b2, w3, b3}

local function forward()
  local h = (x:mm(w1) + b1):relu()
  h = (h:mm(w2) + b2):relu()
  local logits = h:mm(w3) + b3
  return -logits:log_softmax(2):gather(2, y):mean()
end
local function zero() for _, p in ipairs(params) do p.grad = nil end end

for _ = 1, 20 do zero(); forward():backward() end
local n, bwd, step = 300, 0, 0
local loss
for _ = 1, n do
  zero()
  loss = forward()
  local t0 = torch.clock()
  loss:backward()
  bwd = bwd + torch.clock() - t0
end
print('TIME ' .. bwd / n .. ' backward')
local t0 = torch.clock()
for _ = 1, n do zero(); loss = forward(); loss:backward() end
step = (torch.clock() - t0) / n
print('TIME ' .. step .. ' forward+backward')
local check = string.format('%.5f %.6f %.6f', loss:item(), w1.grad:sum():item(), w3.grad[1][1])
print('CHECK backward ' .. check)
print('CHECK forward+backward ' .. check)
