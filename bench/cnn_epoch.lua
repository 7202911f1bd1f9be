-- cnn_epoch: one training epoch of examples/fashion_mnist_cnn.lua's CNN (conv 1->32,
-- BN, ReLU, max-pool; conv 32->64, BN, ReLU, max-pool; Linear 3136-128, ReLU,
-- Dropout 0.3, Linear 128-10), Adam 1e-3, cross-entropy, batches of 64, shuffled,
-- data already in memory: the example's training loop.
local nn = require 'nn'
local optim = require 'optim'
local data = require 'data'
torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
torch.manual_seed(0)
local T = data.transforms
local train = data.FashionMNIST{train = true, transform = T.Compose{T.ToTensor(), T.Normalize(0.2860, 0.3530)}}
local loader = data.DataLoader(train, {batch_size = 64, shuffle = true})
local model = nn.Sequential(
  nn.Conv2d(1, 32, 3, {padding = 1}), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
  nn.Conv2d(32, 64, 3, {padding = 1}), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
  nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
local crit = nn.CrossEntropyLoss()
local opt = optim.Adam(model:parameters(), {lr = 1e-3})
model:train()
local t0 = torch.clock()
local batches, samples = 0, 0
for _, batch in loader:iter() do
  local x, y = batch[1], batch[2]
  opt:zero_grad()
  local logits = model(x)
  local loss = crit(logits, y)
  loss:backward()
  opt:step()
  batches, samples = batches + 1, samples + y:size(1)
end
print('TIME ' .. (torch.clock() - t0) .. ' epoch')
print(string.format('CHECK epoch %d %d', batches, samples))
