-- gpu: training steps on the GPU (forward, backward, Adam): the FashionMNIST MLP
-- (784-256-256-10) and CNN (two conv + batch norm + ReLU + max-pool blocks) on batches of 64
local nn, optim = require 'nn', require 'optim'
local function timed(case, reps, fn)
  for _ = 1, 5 do fn() end
  torch.cuda.synchronize()
  local best = math.huge
  for _ = 1, 3 do
    local t0 = torch.clock()
    for _ = 1, reps do fn() end
    torch.cuda.synchronize()
    best = math.min(best, (torch.clock() - t0) / reps)
  end
  print(string.format('TIME %.9g %s', best, case))
end

local function steps(case, model, x)
  torch.manual_seed(1)
  model:cuda()
  local opt = optim.Adam(model:parameters(), {lr = 1e-3})
  local y = (torch.arange(0, 64, {dtype = 'int64'}) % 10 + 1):cuda()
  local criterion = nn.CrossEntropyLoss()
  local loss
  timed(case, 50, function()
    opt:zero_grad()
    loss = criterion(model(x), y)
    loss:backward()
    opt:step()
  end)
  print(string.format('CHECK %s %d', case, loss:item() == loss:item() and 1 or 0))
end

steps('mlp_step', nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                                nn.Linear(256, 10)), torch.randn(64, 1, 28, 28):cuda())
steps('cnn_step', nn.Sequential(
  nn.Conv2d(1, 32, 3, {padding = 1}), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
  nn.Conv2d(32, 64, 3, {padding = 1}), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
  nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10)), torch.randn(64, 1, 28, 28):cuda())
