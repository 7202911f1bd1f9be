-- bench/common/epoch_loop.lua: the FashionMNIST training epoch that fashion_epoch.lua (the
-- MLP), cnn_epoch.lua (the CNN) and their amp_ twins (the forward and the loss in a bfloat16
-- autocast region) time: data already in memory, Adam 1e-3, cross-entropy, batches of 64,
-- shuffled; the examples' loop. Prints TIME and CHECK lines for bench/run.py.
--   local loop = dofile(dir .. 'common/epoch_loop.lua')
--   loop.run(loop.mlp [, {amp = true}])
local nn = require 'nn'
local optim = require 'optim'
local data = require 'data'

local M = {}

-- the examples' models: examples/fashion_mnist_mlp.lua's MLP (784-256-256-10, ReLU, Dropout
-- 0.2) and examples/fashion_mnist_cnn.lua's CNN (conv 1->32, BN, ReLU, max-pool; conv
-- 32->64, BN, ReLU, max-pool; Linear 3136-128, ReLU, Dropout 0.3, Linear 128-10)
function M.mlp()
  return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
                       nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
end

function M.cnn()
  return nn.Sequential(
    nn.Conv2d(1, 32, 3, {padding = 1}), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, {padding = 1}), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
end

-- times one epoch of make_model(), built after the seed is set (opts.amp: the forward and
-- the loss under torch.autocast('cpu', {dtype = 'bfloat16'})); returns its seconds
function M.run(make_model, opts)
  local amp = opts and opts.amp
  torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
  torch.manual_seed(0)
  local T = data.transforms
  local train = data.FashionMNIST{train = true, transform = T.Compose{T.ToTensor(), T.Normalize(0.2860, 0.3530)}}
  local loader = data.DataLoader(train, {batch_size = 64, shuffle = true})
  local model = make_model()
  local crit = nn.CrossEntropyLoss()
  local opt = optim.Adam(model:parameters(), {lr = 1e-3})
  model:train()
  local t0 = torch.clock()
  local batches, samples = 0, 0
  for _, batch in loader:iter() do
    local x, y = batch[1], batch[2]
    opt:zero_grad()
    local loss
    if amp then
      loss = torch.autocast('cpu', {dtype = 'bfloat16'}, function() return crit(model(x), y) end)
    else
      loss = crit(model(x), y)
    end
    loss:backward()
    opt:step()
    batches, samples = batches + 1, samples + y:size(1)
  end
  local seconds = torch.clock() - t0
  print('TIME ' .. seconds .. ' epoch')
  print(string.format('CHECK epoch %d %d', batches, samples))
  return seconds
end

return M
