-- all_reduce: distributed.all_reduce (sum) of float32 tensors of 1, 4, 16, 64 and 256 MB
-- between 2 ranks on this machine (MPI over shared memory), best of 15 rounds of 20 (10 for 16
-- MB; 5 rounds of 5 and 3 for 64 and 256 MB); against PyTorch's gloo backend over 2 processes, and MPI_Allreduce called directly
-- from C (the C column). Run outside mpirun, the script starts its 2 ranks itself (th --nproc
-- 2) and prints rank 0's lines.
-- (NOTE lines: the bus bandwidth, and, in a second pass, the same all-reduce started with
-- async_op=true and waited for at once against the blocking one, rounds interleaved)
local SIZES = {{'1MB', 1 << 18, 20, 15}, {'4MB', 1 << 20, 20, 15}, {'16MB', 1 << 22, 10, 15}, {'64MB', 1 << 24, 5, 5},
               {'256MB', 1 << 26, 3, 5}}

if dofile((arg[0]:match('(.*/)') or './') .. 'common/ranks.lua').launched('all_reduce') then return end

torch.setnumthreads(tonumber(os.getenv('BENCH_THREADS') or 1))
local d = require 'distributed'
d.init_process_group{backend = 'mpi'}
local rank = d.get_rank()
-- the blocking all-reduce alone: the figure against C and gloo (whose loops hold nothing else)
local function best_of(t, reps, rounds, opts)
  local best = math.huge
  for _ = 1, rounds do
    d.barrier()
    local t0 = torch.clock()
    if opts then
      for _ = 1, reps do d.all_reduce(t, opts):wait() end
    else
      for _ = 1, reps do d.all_reduce(t) end
    end
    best = math.min(best, (torch.clock() - t0) / reps)
  end
  return best
end
local p = d.get_world_size()
for _, s in ipairs(SIZES) do
  local name, n, reps, rounds = s[1], s[2], s[3], s[4]
  local t = torch.full({n}, rank + 1.0)
  d.all_reduce(t)                                   -- warm-up
  local best = best_of(t, reps, rounds)
  t:fill(rank + 1.0)
  d.all_reduce(t)
  if rank == 0 then
    print(('TIME %.9g %s'):format(best, name))
    -- bus bandwidth as NCCL's tests count it: 2 (p - 1) / p of the bytes each rank holds, per second
    print(('NOTE all_reduce %s: bus bandwidth %.2f GB/s'):format(name, 2 * (p - 1) / p * n * 4 / best / 1e9))
    print(('CHECK %s %.6g %.6g'):format(name, t[1], t[n]))
  end
end
-- then async_op=true against blocking, rounds interleaved (a pass of its own: asynchronous rounds
-- run on the communication thread, and interleaving them with the rounds above slowed those by up
-- to 15% at 4-16 MB on a 2-core machine)
for _, s in ipairs(SIZES) do
  local name, n, reps, rounds = s[1], s[2], s[3], s[4]
  local t = torch.full({n}, rank + 1.0)
  local best, best_async = math.huge, math.huge
  for _ = 1, rounds do
    best = math.min(best, best_of(t, reps, 1))
    best_async = math.min(best_async, best_of(t, reps, 1, {async_op = true}))
  end
  if rank == 0 then
    print(('NOTE all_reduce %s: async_op=true %.1f us, blocking %.1f us (ratio %.3f)'):format(name, best_async * 1e6,
          best * 1e6, best_async / best))
  end
end
d.destroy_process_group()
