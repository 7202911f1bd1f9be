-- bench/common/epoch_loop.lua: the FashionMNIST training epoch that fashion_epoch.lua (the
-- MLP) and cnn_epoch.lua (the CNN) time: data already in memory, Adam 1e-3, cross-entropy,
-- batches of 64, shuffled; the examples' loop. Prints TIME and CHECK lines for bench/run.py.
--   dofile(dir .. 'common/epoch_loop.lua')(function(nn) return model end)
local nn = require 'nn'
local optim = require 'optim'
local data = require 'data'

-- times one epoch of make_model(nn), built after the seed is set; returns its seconds
return function(make_model)
  torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
  torch.manual_seed(0)
  local T = data.transforms
  local train = data.FashionMNIST{train = true, transform = T.Compose{T.ToTensor(), T.Normalize(0.2860, 0.3530)}}
  local loader = data.DataLoader(train, {batch_size = 64, shuffle = true})
  local model = make_model(nn)
  local crit = nn.CrossEntropyLoss()
  local opt = optim.Adam(model:parameters(), {lr = 1e-3})
  model:train()
  local t0 = torch.clock()
  local batches, samples = 0, 0
  for _, batch in loader:iter() do
    local x, y = batch[1], batch[2]
    opt:zero_grad()
    local loss = crit(model(x), y)
    loss:backward()
    opt:step()
    batches, samples = batches + 1, samples + y:size(1)
  end
  local seconds = torch.clock() - t0
  print('TIME ' .. seconds .. ' epoch')
  print(string.format('CHECK epoch %d %d', batches, samples))
  return seconds
end
