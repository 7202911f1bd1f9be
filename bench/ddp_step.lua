-- ddp_step: the cost of data parallelism on the MLP: a 784-256-256-10 MLP (ReLU,
-- cross-entropy, SGD) on a batch of 64, one training step in one process (rank 0 alone,
-- rank 1 waiting), then the same step in nn.DistributedDataParallel over 2 ranks (a batch
-- of 64 each, gradients averaged through MPI during backward), then the 2 ranks stepping
-- without communicating (no_sync); against PyTorch's DistributedDataParallel on its gloo
-- backend over 2 processes. TIME is the data-parallel step; the NOTEs say what it adds to
-- the single-process step and to the no_sync one, and the step with the parameters sharded
-- (FullyShardedDataParallel). Run outside mpirun, the
-- script starts its 2 ranks itself (th --nproc 2) and prints rank 0's lines.
if dofile((arg[0]:match('(.*/)') or './') .. 'common/ranks.lua').launched('ddp_step') then return end

torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local nn, optim, d = require 'nn', require 'optim', require 'distributed'
d.init_process_group{backend = 'mpi'}
local rank = d.get_rank()

local function fill(t, scale)        -- fixed values, the same on both sides
  torch.no_grad(function() t:copy((torch.arange(0, t:numel()):sin() * scale):view_as(t)) end)
end
local model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
for i, p in ipairs(model:parameters()) do fill(p, 0.05 / i) end
local x = (torch.arange(0, 64 * 784):cos() + rank):reshape(64, 784)
local y = torch.arange(0, 64, {dtype = 'int64'}) % 10 + 1             -- 1-based classes

-- the best time of a step over 3 rounds after 20 warm-up steps, and the first step's loss
local function timed(net, steps)
  local opt = optim.SGD(net:parameters(), {lr = 0.01})
  local loss
  local function step()
    opt:zero_grad()
    loss = nn.F.cross_entropy(net(x), y)
    loss:backward()
    opt:step()
  end
  step()
  local first = loss:item()
  for _ = 1, 20 do step() end
  local best = math.huge
  for _ = 1, 3 do
    local t0 = torch.clock()
    for _ = 1, steps do step() end
    best = math.min(best, (torch.clock() - t0) / steps)
  end
  return best, first
end

local single
if rank == 0 then single = timed(model, 200) end
d.barrier()
for i, p in ipairs(model:parameters()) do fill(p, 0.05 / i) end
local ddp = nn.DistributedDataParallel(model)
d.barrier()
local step, loss = timed(ddp, 200)           -- loss: the first step's, the same on both sides
-- the same 2 ranks stepping without communicating (no_sync): what sharing the machine costs
local quiet
do
  local g <close> = ddp:no_sync()
  quiet = timed(ddp, 200)
end
-- the same step with the parameters sharded (FSDP, a unit per nn.Linear)
local fresh = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
for i, p in ipairs(fresh:parameters()) do fill(p, 0.05 / i) end
local sharded = timed(d.FullyShardedDataParallel(fresh, {auto_wrap_policy = 'linear'}), 200)
if rank == 0 then
  print(('TIME %.9g step'):format(step))
  print(('NOTE ddp_step: the parameters sharded (distributed.FullyShardedDataParallel, a unit per nn.Linear) %.1f us'
         .. ' a step'):format(sharded * 1e6))
  print(('NOTE ddp_step: one process %.1f us; 2 ranks without communication (no_sync) %.1f us; 2 ranks in '
         .. 'DistributedDataParallel %.1f us: +%.1f%% over one process, +%.1f%% over no_sync')
        :format(single * 1e6, quiet * 1e6, step * 1e6, (step / single - 1) * 100, (step / quiet - 1) * 100))
  print(('CHECK step %.5f'):format(loss))
end
d.destroy_process_group()
