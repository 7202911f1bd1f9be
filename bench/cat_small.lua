-- cat_small: torch.cat of 1000 tensors of 64 float32 along dim 1
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local parts = {}
for i = 1, 1000 do parts[i] = torch.ones(64) * i end
local r = torch.cat(parts, 1)
local reps, best = 200, math.huge
for _ = 1, 5 do
  local t0 = torch.clock()
  for _ = 1, reps do r = torch.cat(parts, 1) end
  best = math.min(best, (torch.clock() - t0) / reps)
end
print(string.format('TIME %.9g', best))
print(string.format('CHECK cat %.6g %.6g %d', r[1], r[64000], r:size(1)))
