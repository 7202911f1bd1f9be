-- scripts/torch7_suite.lua: runs Torch7's own torch test suite (test/test.lua
-- of the public torch/torch7 repository) under moontorch and counts its tests.
-- Not part of `make test`: the suite is Torch7's code and is never vendored;
-- scripts/torch7_suite.sh reads it from a fetched copy.
--
--   th --torch7 scripts/torch7_suite.lua /path/to/test.lua [name ...]
--
-- Only mechanical Lua 5.1 -> 5.4 shims are applied and the harness brings its
-- own minimal tester (both in scripts/torch7_harness.lua), so that the count measures
-- moontorch's torch package and nothing the harness adds. A test passes when
-- it runs to its end with no error and every one of its assertions holds.
-- Output: one line per failing test (its first failures), then
-- "N passed, M failed of T".

local path = arg[1]
if not path then
  io.stderr:write('usage: th --torch7 scripts/torch7_suite.lua /path/to/test.lua [name ...]\n')
  os.exit(2)
end
local only = {}
for i = 2, #arg do only[#only + 1] = arg[i] end

require 'torch'
if torch.dialect then torch.dialect('torch7') end

local here = (arg[0] or ''):match('^(.*)/') or '.'
local harness = dofile(here .. '/torch7_harness.lua')
local new_tester = harness.new_tester

-- The suite is written against torch.TestSuite and torch.Tester; the harness
-- stands its own in for them while the suite runs.
local saved_suite, saved_tester = rawget(torch, 'TestSuite'), rawget(torch, 'Tester')
rawset(torch, 'TestSuite', function() return {} end)
rawset(torch, 'Tester', new_tester)

local chunk, err = loadfile(path)
if not chunk then io.stderr:write(err .. '\n') os.exit(2) end
local ok, lerr = pcall(chunk)
if not ok then io.stderr:write('loading the suite failed: ' .. tostring(lerr) .. '\n') os.exit(1) end
local tok, tester = pcall(torch.test, #only > 0 and only or nil)
rawset(torch, 'TestSuite', saved_suite)
rawset(torch, 'Tester', saved_tester)
if not tok then
  io.stderr:write('torch.test failed: ' .. tostring(tester) .. '\n')
  os.exit(1)
end
os.exit(tester.failed == 0 and 0 or 1)
