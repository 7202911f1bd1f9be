-- scripts/torch7_nn_criteria_check.lua: runs the criterion tests of torch/nn's own
-- test.lua (public repository torch/nn, never vendored: pass the path of a fetched copy)
-- against moontorch's Torch7 criteria. Not part of `make test`.
--
--   git -C nn show HEAD:test.lua > /tmp/nntest.lua
--   th --torch7 scripts/torch7_nn_criteria_check.lua /tmp/nntest.lua [name ...]
--
-- It takes from the file only the tests named nntest.<Name>Criterion and the helpers they
-- call (equal, criterionJacobianTest, criterionJacobianTest1DTable), runs them
-- with a minimal tester of its own (the assertions those tests use) and Lua 5.1 -> 5.4
-- shims, and prints one line per failing test (VERBOSE=1: with its traceback), then
-- "N passed, M failed of T". SEED=n sets the random seed (1 by default).

local path = arg[1]
if not path then
  io.stderr:write('usage: th --torch7 scripts/torch7_nn_criteria_check.lua /path/to/nn/test.lua [name ...]\n')
  os.exit(2)
end
local only = {}
for i = 2, #arg do only[arg[i]] = true end

require 'torch'
require 'nn'
torch.dialect('torch7')
unpack = unpack or table.unpack

-- ---- the tests, cut out of test.lua by their definitions ----

local source = assert(io.open(path)):read('a')

-- the text from the line that opens with header to the next line that is just "end"
local function block(from)
  local stop = source:find('\nend\n', from, true)
  if not stop then error('no end for the block at byte ' .. from) end
  return source:sub(from, stop + 4)
end

local pieces, names = {}, {}
for _, helper in ipairs({'equal', 'criterionJacobianTest', 'criterionJacobianTest1DTable'}) do
  local at = source:find('\nlocal function ' .. helper .. '%(')
  if not at then error(path .. ' has no ' .. helper) end
  pieces[#pieces + 1] = block(at + 1)
end
for at, name in source:gmatch('()\nfunction nntest%.([%w_]+Criterion)%(%)') do
  if next(only) == nil or only[name] then
    names[#names + 1] = name
    pieces[#pieces + 1] = block(at + 1)
  end
end
table.sort(names)

-- ---- a minimal tester ----

local failures
local function record(ok, msg)
  if not ok then failures[#failures + 1] = msg or 'assertion failed' end
end

local function max_diff(a, b)
  if torch.isTensor(a) and torch.isTensor(b) and a:nElement() == b:nElement() then
    if a:nElement() == 0 then return 0 end
    return (a:double():contiguous():view(-1) - b:double():contiguous():view(-1)):abs():max()
  end
  return nil
end

local tester = {}
function tester:assert(cond, msg) record(cond, msg) end
function tester:asserteq(a, b, msg) record(a == b, string.format('%s: %s ~= %s', msg or 'eq', tostring(a), tostring(b))) end
function tester:assertlt(a, b, msg) record(a < b, string.format('%s: %s >= %s', msg or 'lt', tostring(a), tostring(b))) end
function tester:assertError(f, msg) record(not pcall(f), (msg or 'assertError') .. ': no error') end
function tester:assertTensorEq(a, b, tol, msg)
  local d = max_diff(a, b)
  record(d ~= nil and d <= tol, string.format('%s: max diff %s', msg or 'TensorEq', tostring(d)))
end
-- eq: tensors or numbers within a tolerance, or equal values
function tester:eq(a, b, tol, msg)
  if torch.isTensor(a) then return self:assertTensorEq(a, b, tol, msg) end
  local same = a == b or (type(a) == 'number' and type(b) == 'number' and math.abs(a - b) <= tol)
  record(same, string.format('%s: %s ~= %s', msg or 'eq', tostring(a), tostring(b)))
end

-- ---- run ----

local nntest = {}
local text = 'local mytester, precision, nntest = ...\n' .. table.concat(pieces, '\n')
local chunk = assert(load(text, '=torch/nn test.lua (the criterion tests)'))
chunk(tester, 1e-5, nntest)

local seed = tonumber(os.getenv('SEED') or '') or 1
math.randomseed(seed)
torch.manualSeed(seed)
local passed, failed = 0, 0
for _, name in ipairs(names) do
  failures = {}
  local ok, err = xpcall(nntest[name], function(e)
    return os.getenv('VERBOSE') == '1' and debug.traceback(tostring(e), 2) or tostring(e)
  end)
  if ok and #failures == 0 then
    passed = passed + 1
  else
    failed = failed + 1
    print(string.format('FAIL %s: %s', name, ok and failures[1] .. (#failures > 1 and
          string.format(' (+%d more)', #failures - 1) or '') or err))
  end
end
print(string.format('%d passed, %d failed of %d', passed, failed, passed + failed))
os.exit(failed == 0 and 0 or 1)
