-- tiny_add: c = a + b on 1-element tensors, per-op cost from a Lua loop
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local a, b = torch.tensor({1.5}), torch.tensor({2.25})
local n = 200000
local c
for _ = 1, 10000 do c = a + b end
local t0 = torch.clock()
for _ = 1, n do c = a + b end
print('TIME ' .. (torch.clock() - t0) / n)
print('CHECK value ' .. c[1])
