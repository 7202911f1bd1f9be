-- data_loader: one shuffled epoch of a 60000x784 float TensorDataset (labels
-- 0..9) in batches of 64, num_workers=0: the loader alone, no model. Each
-- side sums its labels batch by batch, which a shuffle leaves unchanged.
local data = require 'data'
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
torch.manual_seed(0)

local n, features = 60000, 784
local x = torch.arange(0, n * features):float():view(n, features) / (n * features)
local y = torch.arange(0, n, {dtype = 'int64'}) % 10
local loader = data.DataLoader(data.TensorDataset(x, y), {batch_size = 64, shuffle = true})

for _ = 1, 2 do                    -- the second epoch is timed (the first warms the allocator)
  local t0 = torch.clock()
  local batches, samples, label_sum = 0, 0, 0
  for _, batch in loader:iter() do
    local xb, yb = batch[1], batch[2]
    batches, samples = batches + 1, samples + xb:size(1)
    label_sum = label_sum + yb:sum():item()
  end
  local elapsed = torch.clock() - t0
  if _ == 2 then
    print('TIME ' .. elapsed .. ' epoch')
    print(string.format('CHECK epoch %d %d %d', batches, samples, label_sum))
  end
end
