-- gemm: float32 matrix products, N = 256, 1024, 2048; bfloat16 ones, N = 1024, 2048
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
if torch._gemm_kernel() == 'OpenBLAS' then
  print('NOTE gemm: every product on OpenBLAS (bfloat16 through float32 copies)')
else
  print("NOTE gemm: n256, n1024 and the bfloat16 products on moontorch's AVX-512 kernel; float32 n2048 "
        .. '(over 2^31 multiply-adds) on OpenBLAS')
end
for _, case in ipairs({{256}, {1024}, {2048}, {1024, 'bfloat16'}, {2048, 'bfloat16'}}) do
  local size, dtype = case[1], case[2]
  local name = dtype and size .. '_' .. dtype or size
  local a = (torch.ones(size, size) * 0.5):to(dtype or 'float32')
  local b = (torch.ones(size, size) * 0.25):to(dtype or 'float32')
  local c = a:mm(b)
  local reps = math.max(1, math.floor(2e9 / (2 * size * size * size)))
  local best = math.huge
  for _ = 1, 3 do
    local t0 = torch.clock()
    for _ = 1, reps do c = a:mm(b) end
    best = math.min(best, (torch.clock() - t0) / reps)
  end
  print(string.format('TIME %.9g n%s', best, name))
  print(string.format('CHECK n%s %.6g %.6g', name, c[1][1], c[size][size]))
end
