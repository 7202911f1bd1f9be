-- reduce_softmax: sum and softmax along the last dim of 4096x4096 float32
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local x = torch.arange(0, 4096 * 4096):float():remainder(97):view(4096, 4096) * 0.01
local ops = {
  sum = function() return x:sum(2) end,
  softmax = function() return x:softmax(2) end,
}
for _, name in ipairs({'sum', 'softmax'}) do
  local r = ops[name]()
  local best = math.huge
  for _ = 1, 5 do
    local t0 = torch.clock()
    r = ops[name]()
    best = math.min(best, torch.clock() - t0)
  end
  print(string.format('TIME %.9g %s', best, name))
  local flat = r:view(-1)
  print(string.format('CHECK %s %.6g %.6g', name, flat[1], flat[flat:size(1)]))
end
