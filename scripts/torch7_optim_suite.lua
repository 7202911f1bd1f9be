-- scripts/torch7_optim_suite.lua: runs torch/optim's own tests (test/test_*.lua
-- of the public torch/optim repository) under moontorch and counts those that
-- run to their end. Not part of `make test`: the tests are Torch7's code and
-- are never vendored; the script reads them from a fetched copy:
--
--   git --git-dir=<mirror of torch/optim> archive HEAD test | tar -x -C /tmp/optim
--   th --torch7 scripts/torch7_optim_suite.lua /tmp/optim/test [test_sgd.lua ...]
--
-- Each test runs in its own th process (Torch7 dialect), in a fresh
-- temporary directory (the Logger test writes files there), with the test
-- directory on package.path (for rosenbrock.lua and l2.lua) and the same
-- mechanical Lua 5.1 -> 5.4 shims as scripts/torch7_suite.lua. Output: one
-- line per test (passed, or its error's first line), then "N passed, M
-- failed of T". VERBOSE=1 shows each test's own output.

local dir = arg[1]
if not dir then
  io.stderr:write('usage: th --torch7 scripts/torch7_optim_suite.lua /path/to/optim/test [test_x.lua ...]\n')
  os.exit(2)
end
local verbose = os.getenv('VERBOSE') == '1'

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- ---- one test, in this process (the child) ----
if arg[2] == '--run-one' then
  unpack = unpack or table.unpack
  loadstring = loadstring or load
  math.pow = math.pow or function(a, b) return a ^ b end
  math.log10 = math.log10 or function(x) return math.log(x, 10) end
  local seed = math.randomseed
  math.randomseed = function(s, ...) if s then return seed(math.floor(s), ...) end return seed() end
  package.path = dir .. '/?.lua;' .. package.path
  require 'torch'
  if torch.dialect then torch.dialect('torch7') end
  require 'optim'
  local ok, err = xpcall(dofile, debug.traceback, dir .. '/' .. arg[3])
  if not ok then
    io.stderr:write('SUITE-ERROR ' .. tostring(err):gsub('\n.*', '') .. '\n')
    os.exit(1)
  end
  os.exit(0)
end

-- ---- the driver ----
local th = arg[-2] and arg[-1] == '--torch7' and arg[-2] or arg[-1] or 'th'
local script = arg[0]
if script:sub(1, 1) ~= '/' then script = os.getenv('PWD') .. '/' .. script end
if th:find('/') and th:sub(1, 1) ~= '/' then th = os.getenv('PWD') .. '/' .. th end
if dir:sub(1, 1) ~= '/' then dir = os.getenv('PWD') .. '/' .. dir end

local tests = {}
for i = 2, #arg do tests[#tests + 1] = arg[i] end
if #tests == 0 then
  local listing = io.popen('ls ' .. quote(dir))
  for name in listing:lines() do
    if name:match('^test_.*%.lua$') then tests[#tests + 1] = name end
  end
  listing:close()
end

local passed = 0
for _, name in ipairs(tests) do
  local work = os.tmpname()
  os.remove(work)
  local cmd = string.format('mkdir -p %s && cd %s && %s --torch7 %s %s --run-one %s 2>&1', quote(work), quote(work),
                            quote(th), quote(script), quote(dir), quote(name))
  local pipe = io.popen(cmd)
  local output = pipe:read('a')
  local ok = pipe:close()
  os.execute('rm -rf ' .. quote(work))
  if verbose then io.write(output) end
  if ok then
    passed = passed + 1
    print('passed  ' .. name)
  else
    print('FAILED  ' .. name .. ': ' .. (output:match('SUITE%-ERROR ([^\n]*)') or output:match('[^\n]*$')))
  end
end
print(string.format('%d passed, %d failed of %d', passed, #tests - passed, #tests))
