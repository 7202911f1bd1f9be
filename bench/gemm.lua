-- gemm: float32 matrix products, N = 256, 1024, 2048
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
for _, n in ipairs({256, 1024, 2048}) do
  local a = torch.ones(n, n) * 0.5
  local b = torch.ones(n, n) * 0.25
  local c = a:mm(b)
  local reps = math.max(1, math.floor(2e9 / (2 * n * n * n)))
  local best = math.huge
  for _ = 1, 3 do
    local t0 = torch.clock()
    for _ = 1, reps do c = a:mm(b) end
    best = math.min(best, (torch.clock() - t0) / reps)
  end
  print(string.format('TIME %.9g n%d', best, n))
  print(string.format('CHECK n%d %.6g %.6g', n, c[1][1], c[n][n]))
end
