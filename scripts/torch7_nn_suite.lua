-- scripts/torch7_nn_suite.lua: runs torch/nn's own test suite (test.lua of the
-- public torch/nn repository) under moontorch and counts its tests. Not part
-- of `make test`: the suite is Torch7's code and is never vendored; read it
-- from a fetched copy.
--
--   git -C nn show HEAD:test.lua > /tmp/nntest.lua
--   th --torch7 scripts/torch7_nn_suite.lua /tmp/nntest.lua [name ...]
--
-- The shims and the minimal tester are scripts/torch7_harness.lua's (as for
-- scripts/torch7_suite.lua). The suite's random draws come from one seed
-- (SEED=n, default 1) so that two runs count the same; VERBOSE=1 prints each
-- passing test and the traceback of each error. A test passes when it runs to
-- its end with no error and every one of its assertions holds. Output: one
-- line per failing test (its first failure), then "N passed, M failed of T".

local path = arg[1]
if not path then
  io.stderr:write('usage: th --torch7 scripts/torch7_nn_suite.lua /path/to/test.lua [name ...]\n')
  os.exit(2)
end
local only = {}
for i = 2, #arg do only[#only + 1] = arg[i] end
local seed = tonumber(os.getenv('SEED') or '1')

require 'torch'
require 'nn'
if torch.dialect then torch.dialect('torch7') end

local here = (arg[0] or ''):match('^(.*)/') or '.'
local harness = dofile(here .. '/torch7_harness.lua')

-- The suite is written against torch.TestSuite and torch.Tester; the harness
-- stands its own in for them while the suite loads (it makes its tester then).
local saved_suite, saved_tester = rawget(torch, 'TestSuite'), rawget(torch, 'Tester')
rawset(torch, 'TestSuite', function() return {} end)
rawset(torch, 'Tester', harness.new_tester)
local chunk, err = loadfile(path)
if not chunk then io.stderr:write(err .. '\n') os.exit(2) end
local ok, lerr = pcall(chunk)
rawset(torch, 'TestSuite', saved_suite)
rawset(torch, 'Tester', saved_tester)
if not ok then io.stderr:write('loading the suite failed: ' .. tostring(lerr) .. '\n') os.exit(1) end

local tok, tester = pcall(nn.test, #only > 0 and only or nil, seed)
if not tok then
  io.stderr:write('nn.test failed: ' .. tostring(tester) .. '\n')
  os.exit(1)
end
os.exit(tester.failed == 0 and 0 or 1)
