-- gemm: float32 matrix products, N = 256, 1024, 2048, 4096; bfloat16 ones, N = 1024, 2048, 4096
-- (NOTE lines: which kernel ran each dtype, and the bfloat16 rate over the float32 one)
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
if torch._gemm_kernel() == 'OpenBLAS' then
  print('NOTE gemm: every product on OpenBLAS (bfloat16 through float32 copies)')
else
  print(("NOTE gemm: float32 n256 and n1024 on moontorch's AVX-512 kernel, n2048 and n4096 (over 2^31 "
        .. 'multiply-adds) on OpenBLAS; bfloat16 on %s%s'):format(torch._gemm_kernel('bfloat16'),
        torch._gemm_kernel('bfloat16'):find('BF16') and ' (pairs of steps per vdpbf16ps)' or ' (widened as packed)'))
end
local times = {}
for _, case in ipairs({{256}, {1024}, {2048}, {4096}, {1024, 'bfloat16'}, {2048, 'bfloat16'}, {4096, 'bfloat16'}}) do
  local size, dtype = case[1], case[2]
  local name = dtype and size .. '_' .. dtype or size
  local a = (torch.ones(size, size) * 0.5):to(dtype or 'float32')
  local b = (torch.ones(size, size) * 0.25):to(dtype or 'float32')
  local c = a:mm(b)
  local reps = math.max(1, math.floor(2e9 / (2 * size * size * size)))
  local best = math.huge
  for _ = 1, size >= 1024 and 7 or 3 do           -- one product a round from 1024 up: more rounds
    local t0 = torch.clock()
    for _ = 1, reps do c = a:mm(b) end
    best = math.min(best, (torch.clock() - t0) / reps)
  end
  times[name] = best
  print(string.format('TIME %.9g n%s', best, name))
  print(string.format('CHECK n%s %.6g %.6g', name, c[1][1], c[size][size]))
end
for _, size in ipairs{1024, 2048, 4096} do
  print(('NOTE gemm n%d: bfloat16 at %.2fx the float32 rate'):format(size, times[size] / times[size .. '_bfloat16']))
end
