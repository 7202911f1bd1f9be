-- examples/memory_leak.lua: the classic leak, found with torch.memory. The
-- validation loss is summed as a tensor (total = total + loss, no :item()) and
-- kept per epoch, so every validation batch's autograd graph -- and the tensors
-- it saved for a backward that never comes -- stays alive. The snapshot names
-- the line. Run: th examples/memory_leak.lua [--fixed] [--epochs n]
-- (docs/profiling.md (Memory) walks through its output).
local nn, optim = require 'nn', require 'optim'

local cmd = torch.CmdLine()
cmd:text('Trains a small classifier on random data, with a leaky validation loss.')
cmd:option('--epochs', 4, 'epochs')
cmd:option('--fixed', false, 'sum the validation loss with loss:item() (the fix)')
local opt = cmd:parse(arg or {})

torch.manual_seed(0)
torch.memory._record_history(true)      -- from here on, every storage remembers its Lua traceback

local function batches(n)
  local list = {}
  for i = 1, n do list[i] = {x = torch.randn(32, 64), y = torch.randint(1, 11, {32})} end
  return list
end
local train, val = batches(20), batches(10)

local model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
local criterion = nn.CrossEntropyLoss()
local optimizer = optim.SGD(model:parameters(), {lr = 0.05})

-- the mean validation loss
local function evaluate()
  local total = 0
  for _, b in ipairs(val) do
    local loss = criterion(model(b.x), b.y)
    if opt.fixed then
      total = total + loss:item()
    else
      total = total + loss          -- the leak: a tensor, with this batch's graph behind it
    end
  end
  return total / #val
end

local history = {}
for epoch = 1, opt.epochs do
  for _, b in ipairs(train) do
    optimizer:zero_grad()
    local loss = criterion(model(b.x), b.y)
    loss:backward()                 -- frees this step's saved tensors
    optimizer:step()
  end
  history[epoch] = evaluate()
  collectgarbage()
  local shown = torch.is_tensor(history[epoch]) and history[epoch]:item() or history[epoch]
  print(('epoch %d  validation loss %.4f  allocated %7.1f KiB'):format(epoch, shown,
        torch.memory_stats().allocated / 1024))
end

print()
print(torch.memory.summary({row_limit = 5}))

-- what the largest site holds, by dtype and shape, and where in lib/ it was allocated
local top = torch.memory_snapshot({group_by = 'site'})[1]
local kinds, order = {}, {}
for _, e in ipairs(top.storages) do
  local key = e.dtype .. ' ' .. table.concat(e.shape, 'x')
  if not kinds[key] then kinds[key] = 0; order[#order + 1] = key end
  kinds[key] = kinds[key] + 1
end
print()
print('the largest site, ' .. top.site .. ', holds:')
for _, key in ipairs(order) do print(('  %4d x %s'):format(kinds[key], key)) end
print('the full traceback of one of them:')
for _, frame in ipairs(top.storages[1].full_frames) do print('  ' .. frame) end
