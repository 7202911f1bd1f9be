-- bench/common/ranks.lua: what the distributed benches (all_reduce, ddp_step) share. Run
-- outside mpirun, a bench starts its 2 ranks itself (th --nproc 2) and prints rank 0's lines:
--   if dofile((arg[0]:match('(.*/)') or './') .. 'common/ranks.lua').launched('ddp_step') then return end
-- returns true in the launching process (done), false in a rank (go on). bench/common/ranks.py
-- is the PyTorch side's.
local M = {}

function M.launched(name)
  if os.getenv('OMPI_COMM_WORLD_SIZE') then return false end
  local exe = arg[-1] or 'th'
  local p = assert(io.popen(exe .. ' --nproc 2 ' .. arg[0] .. ' 2>&1'))
  local out = p:read('a')
  if not p:close() then error(name .. ' bench: the ranks failed:\n' .. out) end
  for line in out:gmatch('[^\n]+') do
    local body = line:match('^%[rank 0%] (.*)$')
    if body then print(body) end
  end
  return true
end

return M
