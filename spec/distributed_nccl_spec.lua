-- distributed_nccl_spec.lua: init_process_group{backend='nccl'}. Everywhere: where the
-- rank, the world size, the master's address and the device come from, and the errors
-- when one is missing or wrong (the GPU is looked for last, so they are seen on a machine
-- without one), and th --nproc setting MASTER_ADDR/MASTER_PORT. On a GPU machine
-- (torch.cuda.is_available()): spec/support/nccl_checks.lua, every collective on CUDA
-- tensors against its definition and DDP against one process, as one rank (RANK=0
-- WORLD_SIZE=1) and, with 2 GPUs or more, over th --nproc with one rank per GPU.
local TH = dofile('spec/support/th.lua').path()
local torch = require 'torch'

local function sh(cmd)
  local p = io.popen(cmd .. ' 2>&1')
  local out = p:read('a')
  local ok = p:close()
  return out, ok
end

local nccl_so = TH:gsub('th$', 'distributed/nccl.so')
local built = io.open(nccl_so)
if built then built:close() end

-- a script calling init_process_group{backend='nccl'} on its line 3, run with env
local BASE = os.tmpname()
local SCRIPT = BASE .. '.lua'
local f = assert(io.open(SCRIPT, 'w'))
f:write("local d = require 'distributed'\n",
        "local opts = {backend = 'nccl', timeout = 2, rank = tonumber(arg[1]), world_size = tonumber(arg[2])}\n",
        "local ok, err = pcall(function() d.init_process_group(opts) end)\n",
        "print(ok and 'OK' or err)\n")
f:close()
local function init_with(env, args)
  local out = sh(('env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT -u LOCAL_RANK -u OMPI_COMM_WORLD_RANK '
                  .. '-u OMPI_COMM_WORLD_SIZE %s timeout 30 %s %s %s'):format(env, TH, SCRIPT, args or ''))
  return out
end

describe('distributed over NCCL', function()
  teardown(function() os.remove(SCRIPT) os.remove(BASE) end)

  it('is built beside the CUDA backend where the toolkit has NCCL, and says so', function()
    local d = require 'distributed'
    assert.are.equal(built ~= nil, d.is_nccl_available())
    assert.is_true(d.is_available())
  end)

  it('takes the rank and world size from rank=/world_size=, RANK/WORLD_SIZE or mpirun, and says which are '
     .. 'missing or wrong, at the caller\'s line', function()
    if not built then pending('distributed/nccl.so is not built (no CUDA toolkit with NCCL)') return end
    local at = SCRIPT:match('[^/]+$') .. ':3: '
    local out = init_with('')
    assert.truthy(out:find(at .. "distributed.init_process_group: backend='nccl' needs this process's rank and the "
                           .. 'world size: pass rank= and world_size=, set RANK and WORLD_SIZE', 1, true), out)
    out = init_with('RANK=2 WORLD_SIZE=2')
    assert.truthy(out:find('rank 2 of world size 2: ranks count from 0 to world size - 1', 1, true), out)
    out = init_with('RANK=x WORLD_SIZE=2')
    assert.truthy(out:find('RANK=x is not a rank (an integer >= 0)', 1, true), out)
    out = init_with('', '1 4')                                     -- rank= and world_size= win
    assert.truthy(out:find('set MASTER_ADDR (rank 0\'s host) and MASTER_PORT', 1, true), out)
    out = init_with('OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_SIZE=3 MASTER_ADDR=127.0.0.1 MASTER_PORT=70000')
    assert.truthy(out:find('MASTER_PORT=70000 is not a port (1 to 65535)', 1, true), out)
  end)

  it('without a GPU, a complete environment ends in the "no CUDA device" error, after the checks above', function()
    if not built then pending('distributed/nccl.so is not built (no CUDA toolkit with NCCL)') return end
    if torch.cuda.is_available() then pending('this machine has a GPU: the checks below run instead') return end
    local out = init_with('RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29555')
    assert.truthy(out:find(SCRIPT:match('[^/]+$') .. ":3: distributed.init_process_group: backend='nccl' takes CUDA "
                           .. 'tensors, and there is no CUDA device: ', 1, true), out)
    assert.truthy(out:find("(backend='mpi' runs on CPU tensors)", 1, true), out)
  end)

  it('th --nproc gives every rank the same MASTER_ADDR and a MASTER_PORT that is free, keeping ones already set',
     function()
    if not sh('command -v mpirun') :find('mpirun', 1, true) then pending('mpirun is not installed') return end
    local show = "-e \"print('AT', os.getenv('MASTER_ADDR'), os.getenv('MASTER_PORT'))\""
    local out = sh(('env -u MASTER_ADDR -u MASTER_PORT timeout 60 %s --nproc 2 %s'):format(TH, show))
    local seen = {}
    for r, addr, port in out:gmatch('%[rank (%d)%] AT\t(%S+)\t(%d+)') do seen[#seen + 1] = {r, addr, tonumber(port)} end
    assert.are.equal(2, #seen, out)
    assert.are.equal('127.0.0.1', seen[1][2])
    assert.are.same(seen[1][2] .. seen[1][3], seen[2][2] .. seen[2][3])
    assert.is_true(seen[1][3] >= 1 and seen[1][3] <= 65535)
    out = sh(('MASTER_ADDR=10.1.2.3 MASTER_PORT=12345 timeout 60 %s --nproc 2 %s'):format(TH, show))
    assert.are.equal(2, select(2, out:gsub('AT\t10%.1%.2%.3\t12345', '')), out)
  end)

  local function run_checks(cmd, np)
    local out = sh(cmd)
    local results = {}
    for name, rank, status in out:gmatch('CHECK (%S+) (%d+) ([^\n]*)') do
      results[name] = results[name] or {}
      results[name][tonumber(rank)] = status
    end
    for _, name in ipairs({'group', 'all_reduce.float32', 'all_reduce.float16', 'all_reduce.bfloat16',
                           'all_reduce.int8', 'all_reduce.int64', 'all_reduce.bool', 'all_reduce.avg_noncontiguous',
                           'broadcast_reduce', 'all_gather', 'reduce_scatter', 'gather_scatter_all_to_all',
                           'async_and_barrier', 'objects', 'errors', 'ddp', 'destroyed'}) do
      for r = 0, np - 1 do
        local got = results[name] and results[name][r]
        assert(got == 'ok', ('check %s on rank %d: %s; the run printed:\n%s'):format(name, r, tostring(got),
               out:sub(1, 3000)))
      end
    end
  end

  it('on a GPU, as one rank: every collective against its definition, the errors, DDP equal to one process',
     function()
    if not built or not torch.cuda.is_available() then
      pending('no GPU here (' .. (built and torch.cuda.unavailable_reason() or 'nccl.so not built') .. ')') return
    end
    run_checks(('env -u MASTER_ADDR -u MASTER_PORT RANK=0 WORLD_SIZE=1 timeout 120 %s spec/support/nccl_checks.lua')
               :format(TH), 1)
  end)

  it('on 2 GPUs or more, one rank per GPU through th --nproc', function()
    if not built or not torch.cuda.is_available() or torch.cuda.device_count() < 2 then
      pending('fewer than 2 GPUs here') return
    end
    local n = torch.cuda.device_count()
    run_checks(('timeout 180 %s --nproc %d spec/support/nccl_checks.lua'):format(TH, n), n)
  end)
end)
