-- tiny_step: a tiny forward+backward step (4x4 linear, tanh, sum), per-step cost
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local w = torch.tensor({{0.1, -0.2, 0.3, 0.05}, {0.2, 0.1, -0.1, 0.3}, {-0.3, 0.2, 0.1, 0.1}, {0.05, 0.05, 0.2, -0.2}},
                       {requires_grad = true})
local b = torch.tensor({{0.01, 0.02, 0.03, 0.04}}, {requires_grad = true})
local x = torch.tensor({{1.0, 2.0, 3.0, 4.0}, {0.5, -1.0, 2.0, 0.0}})
local function step()
  w.grad, b.grad = nil, nil
  local loss = (x:mm(w) + b):tanh():sum()
  loss:backward()
  return loss
end
local loss
for _ = 1, 2000 do loss = step() end
local n = 20000
local t0 = torch.clock()
for _ = 1, n do loss = step() end
print('TIME ' .. (torch.clock() - t0) / n)
print(string.format('CHECK step %.6f %.6f %.6f', loss:item(), w.grad[1][1], b.grad[1][4]))
