-- spec/support/th.lua: the th program the specs run (loaded with dofile; not
-- a spec itself): the th beside the torch/core.so busted loads
-- (--cpath='./build-X/?.so'), unless TH_BIN names one; ./build/th as a last resort.
local M = {}

function M.path()
  local env = os.getenv('TH_BIN')
  if env then return env end
  for template in package.cpath:gmatch('[^;]+') do
    local dir = template:match('^(.*)/%?%.so$')
    if dir then
      local f = io.open(dir .. '/th', 'rb')
      if f then f:close() return dir .. '/th' end
    end
  end
  return './build/th'
end

-- runs th with args (a shell word list); returns whether it exited 0, and its output
function M.run(args)
  local p = io.popen(M.path() .. ' ' .. args .. ' 2>&1')
  local out = p:read('a')
  local ok = p:close()
  return ok and true or false, out
end

-- the same under env(1)'s arguments env ('-u NAME', 'NAME=value', ...)
function M.run_env(env, args)
  local p = io.popen('env ' .. env .. ' ' .. M.path() .. ' ' .. args .. ' 2>&1')
  local out = p:read('a')
  local ok = p:close()
  return ok and true or false, out
end

return M
