-- transpose_copy: x:t():contiguous() on 4096x4096 float32
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local n = 4096
local x = torch.arange(0, n * n):float():view(n, n)
local r = x:t():contiguous()
local best = math.huge
for _ = 1, 5 do
  local t0 = torch.clock()
  r = x:t():contiguous()
  best = math.min(best, torch.clock() - t0)
end
print(string.format('TIME %.9g', best))
print(string.format('CHECK t %.6g %.6g', r[1][2], r[n][n - 1]))
