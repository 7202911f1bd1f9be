-- reduce_softmax: sum, mean and max along dim 1 and dim 2 (the last) of a
-- 4096x4096 float32, and softmax along the last dim
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local x = torch.arange(0, 4096 * 4096):float():remainder(97):view(4096, 4096) * 0.01
local ops = {
  sum_dim1 = function() return x:sum(1) end,
  sum_dim2 = function() return x:sum(2) end,
  mean_dim1 = function() return x:mean(1) end,
  mean_dim2 = function() return x:mean(2) end,
  max_dim1 = function() return {x:max(1)} end,
  max_dim2 = function() return {x:max(2)} end,
  softmax = function() return x:softmax(2) end,
}
-- the first and last value of a result, and for max the first and last index
local function check(name, r)
  local values = (type(r) == 'table' and r[1] or r):view(-1)
  local line = string.format('CHECK %s %.6g %.6g', name, values[1], values[values:size(1)])
  if type(r) == 'table' then
    local indices = r[2]:view(-1)
    line = line .. string.format(' %d %d', indices[1], indices[indices:size(1)])
  end
  return line
end
for _, name in ipairs({'sum_dim1', 'sum_dim2', 'mean_dim1', 'mean_dim2', 'max_dim1', 'max_dim2', 'softmax'}) do
  local r = ops[name]()
  local best = math.huge
  for _ = 1, 5 do
    local t0 = torch.clock()
    r = ops[name]()
    best = math.min(best, torch.clock() - t0)
  end
  print(string.format('TIME %.9g %s', best, name))
  print(check(name, r))
end
