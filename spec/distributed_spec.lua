-- distributed_spec.lua: lib/distributed over MPI. spec/support/distributed_checks.lua
-- runs under `mpirun -np 2` (shared memory) and `-np 3` (TCP, with
-- TH_DISTRIBUTED_DEBUG=1, to catch power-of-two assumptions and check the
-- mismatch errors): every collective against its definition on every dtype,
-- and the errors. Each run reports one line per check and rank; the specs
-- below look for the checks they name on every rank. Skipped (pending) when
-- mpirun or the MPI backend (build/distributed/mpi.so) is missing.
local TH = dofile('spec/support/th.lua').path()
local CHECKS = 'spec/support/distributed_checks.lua'

local function shell_ok(cmd)
  local ok = os.execute(cmd .. ' > /dev/null 2>&1')
  return ok == true or ok == 0
end

local have_mpirun = shell_ok('command -v mpirun')
local mpi_so = TH:gsub('th$', 'distributed/mpi.so')
local have_backend = io.open(mpi_so)
if have_backend then have_backend:close() end
local why_not = not have_mpirun and 'mpirun is not installed (apt-get install openmpi-bin libopenmpi-dev)'
  or not have_backend and (mpi_so .. ' is not built (make without MPI=0, with libopenmpi-dev installed)')

-- mpirun as root (the CI machine) needs OpenMPI's two consent variables;
-- --oversubscribe: more ranks than cores is fine for a test
local MPIRUN = 'OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun --oversubscribe'

-- runs the checks once per configuration; returns {[name] = {rank = 'ok' | why}}, the output
local runs = {}
local function run(np, btl, mode, env)
  local key = np .. btl .. mode
  if runs[key] then return runs[key].results, runs[key].out end
  local cmd = ('%s %s -np %d --mca btl %s %s %s %s %s 2>&1'):format(env or '', MPIRUN,
    np, btl, env and '-x TH_DISTRIBUTED_DEBUG' or '', TH, CHECKS, mode)
  local p = io.popen(cmd)
  local out = p:read('a')
  p:close()
  local results = {}
  for name, rank, status in out:gmatch('CHECK (%S+) (%d+) ([^\n]*)') do
    results[name] = results[name] or {}
    results[name][tonumber(rank)] = status
  end
  runs[key] = {results = results, out = out}
  return results, out
end

-- every rank of the run reported name ok
local function expect_ok(results, out, np, name)
  local got = results[name]
  assert(got, ('check %s did not report; the run printed:\n%s'):format(name, out:sub(1, 3000)))
  for r = 0, np - 1 do
    assert(got[r] == 'ok', ('check %s on rank %d: %s'):format(name, r, tostring(got[r])))
  end
end

local DTYPES = {'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool'}
local FLOAT = {float32 = true, float64 = true, float16 = true, bfloat16 = true}

local CONFIGS = {
  {np = 2, btl = 'self,vader', mode = 'main', what = '2 ranks over shared memory'},
  {np = 3, btl = 'self,tcp', mode = 'debug', env = 'TH_DISTRIBUTED_DEBUG=1', what = '3 ranks over TCP, debug mode'},
}

describe('distributed', function()
  it('needs no MPI before init_process_group: errors name the collective and the call', function()
    local script = os.tmpname()
    local f = assert(io.open(script, 'w'))
    f:write([[
local d = require 'distributed'
assert(not d.is_initialized())
local ok, err = pcall(function() d.all_reduce(torch.ones(2)) end)
print(err)
ok, err = pcall(function() d.get_rank() end)
print(err)
ok, err = pcall(function() d.init_process_group{backend = 'gloo'} end)
print(err)
ok, err = pcall(function() d.init_process_group{backend = 'mpi', timeout = -1} end)
print(err)
print(torch.distributed == d)
]])
    f:close()
    local p = io.popen(TH .. ' ' .. script .. ' 2>&1')
    local out = p:read('a')
    p:close()
    os.remove(script)
    local name = script:match('[^/]+$')
    assert.truthy(out:find(name .. ':3: distributed.all_reduce: the default process group is not initialised: '
                           .. "call distributed.init_process_group{backend='mpi'} first", 1, true), out)
    assert.truthy(out:find(name .. ':5: distributed.get_rank: the default process group is not initialised', 1, true), out)
    assert.truthy(out:find(name .. ":7: distributed.init_process_group: unknown backend 'gloo' (backend='mpi' for CPU "
                           .. "tensors, 'nccl' for CUDA tensors)", 1, true), out)
    assert.truthy(out:find(name .. ':9: distributed.init_process_group: timeout= must be a number of seconds > 0, '
                           .. 'got -1', 1, true), out)
    assert.truthy(out:find('\ntrue\n', 1, true), out)
  end)

  for _, c in ipairs(CONFIGS) do
    describe('under mpirun -np ' .. c.np .. ' (' .. c.what .. ')', function()
      local function results()
        if why_not then pending(why_not .. ': the MPI specs are skipped') return nil end
        return run(c.np, c.btl, c.mode, c.env)
      end

      it('gives every process its 0-based rank and the world size from mpirun', function()
        local r, out = results()
        if r then expect_ok(r, out, c.np, 'rank') end
      end)

      it('all_reduce: sum, product, min, max (and avg on floats) on every dtype', function()
        local r, out = results()
        if not r then return end
        for _, dt in ipairs(DTYPES) do
          for _, op in ipairs({'sum', 'product', 'min', 'max'}) do expect_ok(r, out, c.np, 'all_reduce.' .. op .. '.' .. dt) end
          if FLOAT[dt] then expect_ok(r, out, c.np, 'all_reduce.avg.' .. dt) end
        end
        for _, name in ipairs({'all_reduce.positions', 'all_reduce.noncontiguous', 'all_reduce.empty_and_scalar'}) do
          expect_ok(r, out, c.np, name)
        end
      end)

      it('broadcast, all_gather (list, filled list, one tensor) on every dtype; reduce; barrier', function()
        local r, out = results()
        if not r then return end
        for _, dt in ipairs(DTYPES) do
          expect_ok(r, out, c.np, 'broadcast.' .. dt)
          expect_ok(r, out, c.np, 'all_gather.' .. dt)
        end
        for _, dt in ipairs({'float32', 'float64', 'int32', 'int64', 'uint8', 'float16'}) do
          expect_ok(r, out, c.np, 'reduce.' .. dt)
        end
        expect_ok(r, out, c.np, 'barrier')
        expect_ok(r, out, c.np, 'sampler.shards')
        expect_ok(r, out, c.np, 'destroyed')
      end)

      it('gather, scatter, reduce_scatter (list and tensor), all_to_all (list and single) on every dtype', function()
        local r, out = results()
        if not r then return end
        for _, dt in ipairs(DTYPES) do
          for _, name in ipairs({'gather', 'scatter', 'all_to_all'}) do expect_ok(r, out, c.np, name .. '.' .. dt) end
          for _, op in ipairs(dt == 'bool' and {'sum', 'min'} or {'sum', 'max'}) do
            expect_ok(r, out, c.np, 'reduce_scatter.' .. op .. '.' .. dt)
          end
          if FLOAT[dt] then expect_ok(r, out, c.np, 'reduce_scatter.avg.' .. dt) end
        end
      end)

      it('all_gather_object and broadcast_object_list: nested tables and tensors through torch.serialize', function()
        local r, out = results()
        if not r then return end
        expect_ok(r, out, c.np, 'all_gather_object')
        expect_ok(r, out, c.np, 'broadcast_object_list')
      end)

      it('async_op=true: handles that wait and poll, a queue of them run in order before the next blocking collective, a blocking and an asynchronous call matching; isend/irecv in a ring of large messages; send/recv, '
         .. 'a message of the wrong size refused on the receiver; '
         .. 'uneven all_to_all, and split sizes that disagree across ranks; new_group\'s collectives among its '
         .. 'members', function()
        local r, out = results()
        if not r then return end
        for _, name in ipairs({'async.collectives', 'async.queue', 'p2p.ring', 'p2p.blocking', 'all_to_all.uneven', 'new_group'}) do
          expect_ok(r, out, c.np, name)
        end
      end)

      it('nn.DistributedDataParallel: rank 0\'s weights at construction; the same parameters as one process '
         .. 'on the whole batch (float64, 1e-12) with one bucket, a bucket per parameter, gradients as bucket '
         .. 'views, no_sync accumulation, unused parameters, uneven loops under join, Torch7\'s forward/backward; '
         .. 'a checkpoint; ZeRO stage 1 with '
         .. 'Adam, its consolidated state and a restart from it', function()
        local r, out = results()
        if not r then return end
        for _, name in ipairs({'ddp.construction', 'ddp.one_bucket', 'ddp.bucket_per_parameter',
                               'ddp.gradient_as_bucket_view', 'ddp.no_sync', 'ddp.find_unused_parameters',
                               'ddp.torch7', 'ddp.checkpoint', 'ddp.errors', 'zero.same_as_one_process',
                               'ddp.join'}) do
          expect_ok(r, out, c.np, name)
        end
      end)

      it('distributed.FullyShardedDataParallel: a shard of ceil(numel / world) per unit (the whole module, or '
         .. 'one per nn.Linear), the whole parameters given up; the same parameters as one process on the whole '
         .. 'batch (float64, 1e-12) with SGD and Adam, a module used twice; the whole state dict into a plain '
         .. 'module and back into a sharded one', function()
        local r, out = results()
        if not r then return end
        for _, name in ipairs({'fsdp.one_unit_sgd', 'fsdp.linear_units_adam', 'fsdp.state_dict', 'fsdp.shared_module',
                               'fsdp.errors'}) do
          expect_ok(r, out, c.np, name)
        end
      end)

      it('raises at the caller\'s line, naming the collective, the rank and what is wrong', function()
        local r, out = results()
        if not r then return end
        for _, name in ipairs({'errors.src_out_of_range', 'errors.options', 'errors.all_gather_shapes', 'errors.part2'}) do
          expect_ok(r, out, c.np, name)
        end
      end)

      it('mismatched shapes, dtypes, ops, roots or collectives across ranks raise on every rank, an asynchronous collective at its wait()'
         .. (c.mode == 'debug' and ', naming the ranks and shapes' or ''), function()
        local r, out = results()
        if not r then return end
        for _, name in ipairs({'mismatch.shapes', 'mismatch.dtypes', 'mismatch.collectives', 'mismatch.ops',
                               'mismatch.roots', 'mismatch.barrier', 'mismatch.async', 'mismatch.all_gather',
                               'mismatch.scatter_roots', 'mismatch.reduce_scatter', 'mismatch.gather_all_to_all',
                               'refused.gather_list', 'refused.scatter_list', 'refused.all_gather_object',
                               'refused.broadcast_object_list'}) do
          expect_ok(r, out, c.np, name)
        end
      end)
    end)
  end

  it('th --nproc N starts N ranks through mpirun, each output line prefixed with its rank; an error on one rank '
     .. 'ends the job with a failure; Ctrl-C stops every rank', function()
    if why_not then pending(why_not .. ': the MPI specs are skipped') return end
    local script = os.tmpname() .. '_nproc.lua'
    local f = assert(io.open(script, 'w'))
    f:write([[
local d = require 'distributed'
d.init_process_group{backend = 'mpi'}
local rank = d.get_rank()
print(('hello from %d of %d'):format(rank, d.get_world_size()))
io.stderr:write('to stderr\n')
if arg[1] == 'fail' and rank == 1 then error('boom on rank 1') end
if arg[1] == 'loop' then io.stdout:flush() while true do end end
d.barrier()
d.destroy_process_group()
]])
    f:close()
    local function th_run(args)
      local p = io.popen('timeout -s INT 20 ' .. TH .. ' ' .. args .. ' 2>&1')
      local out = p:read('a')
      local ok, _, code = p:close()
      return ok, out, code
    end
    local ok, out = th_run('--nproc 3 ' .. script)
    assert.is_true(ok, out)
    for r = 0, 2 do
      assert.truthy(out:find('[rank ' .. r .. '] hello from ' .. r .. ' of 3\n', 1, true), out)
      assert.truthy(out:find('[rank ' .. r .. '] to stderr\n', 1, true), out)
    end
    local failed, fout = th_run('--nproc=2 ' .. script .. ' fail')
    assert.is_falsy(failed, fout)
    assert.truthy(fout:find('[rank 1] th: ' .. script .. ':6: boom on rank 1', 1, true), fout)
    local bad, bout = th_run('--nproc 0 ' .. script)
    assert.is_falsy(bad, bout)
    assert.truthy(bout:find('th: --nproc takes a number of ranks from 1 to 4096, got 0', 1, true), bout)
    -- SIGINT (Ctrl-C) to the launcher, which has become mpirun: no rank is left running
    -- (env --default-signal: a test runner may start its children with SIGINT ignored). The
    -- processes are read from /proc here: pgrep and pkill hang under the sanitizer run's
    -- LD_PRELOAD.
    local p = io.popen('env --default-signal=INT timeout -s INT 8 ' .. TH .. ' --nproc 2 ' .. script .. ' loop 2>&1')
    local lout = p:read('a')
    p:close()
    local function still_running()
      local pids, left = {}, {}
      local has_lfs, lfs = pcall(require, 'lfs')
      if has_lfs then
        for name in lfs.dir('/proc') do if name:match('^%d+$') then pids[#pids + 1] = name end end
      else
        local ls = io.popen('ls /proc')
        for name in ls:read('a'):gmatch('%d+') do pids[#pids + 1] = name end
        ls:close()
      end
      for _, pid in ipairs(pids) do
        local f = io.open('/proc/' .. pid .. '/cmdline', 'rb')
        local cmd = f and f:read('a') or ''
        if f then f:close() end
        cmd = cmd:gsub('%z', ' ')
        if cmd:find(script .. ' loop', 1, true) and (cmd:find('^mpirun ') or cmd:find('^%S*/th ')) then
          left[#left + 1] = pid
        end
      end
      return left
    end
    -- mpirun may take a moment after the launcher returns to reap its ranks: up to 10 s
    local left = still_running()
    for _ = 1, 20 do
      if #left == 0 then break end
      os.execute('sleep 0.5')
      left = still_running()
    end
    for _, pid in ipairs(left) do os.execute('kill -9 ' .. pid .. ' 2> /dev/null') end
    os.remove(script)
    assert.truthy(lout:find('[rank 0] hello from 0 of 2', 1, true), lout)
    assert.are.equal(0, #left, 'left running: ' .. table.concat(left, ' ') .. '\n' .. lout)
  end)

  it('a collective that waits past timeout= names the collective, the rank and the timeout, and the job ends',
    function()
      if why_not then pending(why_not .. ': the MPI specs are skipped') return end
      local r, out = run(2, 'self,vader', 'timeout')
      assert(r.started and r.started[0] == 'ok' and r.started[1] == 'ok', out)
      assert.is_nil(r.returned, out)
      assert.truthy(out:find('distributed.all_reduce (rank 0 of 2): timed out after 1 s (init_process_group\'s '
                             .. 'timeout=): another rank skipped this collective, is stuck or died', 1, true), out)
    end)
end)
