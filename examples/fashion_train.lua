-- examples/fashion_train.lua: the FashionMNIST training the examples share
-- (fashion_mnist_mlp.lua, fashion_mnist_cnn.lua, fashion_mnist_ddp.lua): their
-- command line, the data, the loop (Adam, cross-entropy, train/eval,
-- torch.no_grad for the test pass), per-epoch figures and a checkpoint at the
-- end. With opt.ddp, data-parallel over the ranks mpirun started: the model in
-- nn.DistributedDataParallel, each rank its share of every epoch
-- (data.DistributedSampler), the figures summed over the ranks, rank 0 printing
-- and writing the checkpoint.
--   local train = dofile(dir .. 'fashion_train.lua')
--   train.run(train.options('Train an MLP', 'fashion_mnist_mlp.t7', 10), model)
local nn = require 'nn'
local optim = require 'optim'
local data = require 'data'

local train = {}

-- the command line: --epochs, --batch-size, --lr, --workers, --threads, ...
function train.options(title, checkpoint, epochs)
  local cmd = torch.CmdLine()
  cmd:text(title)
  cmd:option('--epochs', epochs, 'passes over the training set')
  cmd:option('--batch-size', 64, 'images per batch')
  cmd:option('--lr', 1e-3, 'Adam learning rate')
  cmd:option('--workers', 0, 'DataLoader worker processes')
  cmd:option('--threads', 0, 'threads for the tensor library (0: one per core)')
  cmd:option('--device', 'cpu', "where the model trains: 'cpu', 'cuda' or 'cuda:N'")
  cmd:option('--root', '/usr/share/datasets/fashion-mnist', 'folder of the IDX files')
  cmd:option('--seed', 1, 'random seed')
  cmd:option('--checkpoint', checkpoint, 'file the final checkpoint goes to ("" for none)')
  cmd:option('--limit', 0, 'use only this many training batches per epoch (0: all)')
  cmd:option('--amp', false, 'mixed precision: forward in autocast regions (bfloat16 on the CPU, float16 on a '
             .. 'GPU, with a gradient scaler)')
  local opt = cmd:parse(arg)
  if opt.threads > 0 then torch.setnumthreads(opt.threads) end
  torch.manual_seed(opt.seed)
  return opt
end

-- the MLP of fashion_mnist_mlp.lua and fashion_mnist_ddp.lua: 784-256-256-10, ReLU, Dropout 0.2
function train.mlp()
  return nn.Sequential(
    nn.Flatten(),
    nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.2),
    nn.Linear(256, 10))
end

-- trains make_model() (built after the seed is set) as opt says; returns the final test accuracy
function train.run(opt, make_model)
  -- data: uint8 images to floats in [0, 1], normalized with FashionMNIST's mean and std
  local T = data.transforms
  local transform = T.Compose{T.ToTensor(), T.Normalize(0.2860, 0.3530)}
  local train_set = data.FashionMNIST{root = opt.root, train = true, transform = transform}
  local test_set = data.FashionMNIST{root = opt.root, train = false, transform = transform}
  local distributed, rank, sampler = nil, 0, nil
  if opt.ddp then
    distributed = require 'distributed'
    distributed.init_process_group{backend = 'mpi'}
    rank = distributed.get_rank()
    sampler = data.DistributedSampler(train_set, {seed = opt.seed})
  end
  local print = rank == 0 and print or function() end
  local train_loader = data.DataLoader(train_set, {batch_size = opt.batch_size, shuffle = sampler == nil,
                                                   sampler = sampler, num_workers = opt.workers})
  -- test batches of 250 keep a CNN's activations within the allocator's cached block size
  local test_loader = data.DataLoader(test_set, {batch_size = 250, num_workers = opt.workers})
  print(string.format('FashionMNIST: %d training and %d test images', #train_set, #test_set))

  local model = make_model():to(opt.device)
  print(model)
  print(string.format('%d parameters%s', model:num_parameters(),
                      opt.ddp and (', %d ranks'):format(distributed.get_world_size()) or ''))
  local criterion = nn.CrossEntropyLoss()
  local optimizer = optim.Adam(model:parameters(), {lr = opt.lr})
  local net = opt.ddp and nn.DistributedDataParallel(model) or model
  -- --amp: the forward and the loss in an autocast region of the device's type; float16 (on a
  -- GPU) needs its loss scaled, bfloat16 has float32's range and does not
  local device_type = opt.device:match('^(%a+)')
  local function forward(fn, ...)
    if not opt.amp then return fn(...) end
    return torch.autocast(device_type, fn, ...)
  end
  local scaler = torch.amp.GradScaler(device_type,
                                      {enabled = opt.amp and torch.get_autocast_dtype(device_type) == 'float16'})
  -- the ranks' figures summed (one rank: as they are)
  local function summed(...)
    if not opt.ddp then return ... end
    local t = torch.tensor({...}, {dtype = 'float64'})
    distributed.all_reduce(t)
    return table.unpack(t:totable())
  end

  local function evaluate(loader)
    model:eval()
    local loss, correct, count = 0, 0, 0
    torch.no_grad(function()
      for _, batch in loader:iter() do
        local x, y = batch[1]:to(opt.device), batch[2]:to(opt.device)
        local logits, l = forward(function() local o = model(x) return o, criterion(o, y) end)
        loss = loss + l:item() * y:size(1)
        correct = correct + logits:argmax(2):eq(y):sum():item()
        count = count + y:size(1)
      end
    end)
    return loss / count, correct / count   -- every rank evaluates the whole test set
  end

  local start = torch.clock()
  local test_acc
  for epoch = 1, opt.epochs do
    model:train()
    if sampler then sampler:set_epoch(epoch) end
    local t0 = torch.clock()
    local total_loss, correct, count = 0, 0, 0
    local n = opt.limit > 0 and math.min(opt.limit, #train_loader) or #train_loader
    -- the bar times the loop from its start and shows the running loss
    local function running_loss() return string.format('loss %.4f', total_loss / count) end
    for _, batch in torch.progress(train_loader, n, {text = running_loss, disable = rank ~= 0}) do
      local x, y = batch[1]:to(opt.device), batch[2]:to(opt.device)
      optimizer:zero_grad()
      local logits, loss = forward(function() local o = net(x) return o, criterion(o, y) end)
      scaler:scale(loss):backward()
      scaler:step(optimizer)
      scaler:update()
      total_loss = total_loss + loss:item() * y:size(1)
      correct = correct + logits:argmax(2):eq(y):sum():item()
      count = count + y:size(1)
    end
    total_loss, correct, count = summed(total_loss, correct, count)
    local test_loss, acc = evaluate(test_loader)
    test_acc = acc
    print(string.format('epoch %2d  train loss %.4f acc %.2f%%  test loss %.4f acc %.2f%%  (%.1f s)', epoch,
                        total_loss / count, 100 * correct / count, test_loss, 100 * acc, torch.clock() - t0))
  end
  print(string.format('test accuracy %.2f%% after %d epochs, %.1f s', 100 * test_acc, opt.epochs,
                      torch.clock() - start))

  if opt.checkpoint ~= '' and rank == 0 then
    torch.save(opt.checkpoint, {model = model:state_dict(), optimizer = optimizer:state_dict(),
                                epochs = opt.epochs, test_accuracy = test_acc, rng = torch.get_rng_state()})
    print('checkpoint written to ' .. opt.checkpoint)
  end
  if opt.ddp then distributed.destroy_process_group() end
  return test_acc
end

return train
