-- fashion_epoch: one training epoch of the FashionMNIST MLP (784-256-256-10,
-- ReLU, Dropout 0.2, Adam 1e-3, cross-entropy, batches of 64, shuffled),
-- data already in memory; the examples/fashion_mnist_mlp.lua loop.
local nn = require 'nn'
local optim = require 'optim'
local data = require 'data'
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
torch.manual_seed(0)
local T = data.transforms
local train = data.FashionMNIST{train = true, transform = T.Compose{T.ToTensor(), T.Normalize(0.2860, 0.3530)}}
local loader = data.DataLoader(train, {batch_size = 64, shuffle = true})
local model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
                            nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
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
print('TIME ' .. (torch.clock() - t0) .. ' epoch')
print(string.format('CHECK epoch %d %d', batches, samples))
