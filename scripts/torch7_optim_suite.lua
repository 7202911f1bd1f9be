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
-- directory on package.path (for rosenbrock.lua and l2.lua) and
-- scripts/torch7_harness.lua's shims and driver. Output: each failing test
-- with its error's first line, then "N passed, M failed of T". VERBOSE=1
-- shows each test's own output.

local dir = arg[1]
if not dir then
  io.stderr:write('usage: th --torch7 scripts/torch7_optim_suite.lua /path/to/optim/test [test_x.lua ...]\n')
  os.exit(2)
end

-- ---- one test, in this process (the child) ----
if arg[2] == '--run-one' then
  local harness = dofile(arg[4] .. '/torch7_harness.lua')
  package.path = dir .. '/?.lua;' .. package.path
  require 'torch'
  if torch.dialect then torch.dialect('torch7') end
  require 'optim'
  harness.run_one(dir .. '/' .. arg[3])
end

-- ---- the driver ----
local here = arg[0]:match('^(.*)/') or '.'
dofile(here .. '/torch7_harness.lua').run_files(dir, {table.unpack(arg, 2)})
