-- scripts/torch7_harness.lua: what the runners of Torch7's own test suites
-- (scripts/torch7_suite.lua, torch7_nn_suite.lua, torch7_nngraph_suite.lua,
-- torch7_optim_suite.lua) share: the mechanical Lua 5.1 -> 5.4 shims (applied
-- when this file is loaded), a minimal tester standing in for torch.Tester, so
-- that a count measures moontorch and nothing the harness adds, and the
-- drivers that run each test file in a th process of its own. Returns
-- {new_tester = fn, run_one = fn, run_files = fn}.

local torch = require 'torch'
local verbose = os.getenv('VERBOSE') == '1'

-- ---- Lua 5.1 -> 5.4 ----
unpack = unpack or table.unpack
loadstring = loadstring or load
math.pow = math.pow or function(a, b) return a ^ b end
math.log10 = math.log10 or function(x) return math.log(x, 10) end
do
  local seed = math.randomseed
  math.randomseed = function(s, ...) if s then return seed(math.floor(s), ...) end return seed() end
end
setfenv = setfenv or function(fn, env)
  local i = 1
  while true do
    local name = debug.getupvalue(fn, i)
    if name == '_ENV' then debug.upvaluejoin(fn, i, function() return env end, 1) break
    elseif not name then break end
    i = i + 1
  end
  return fn
end

-- ---- a minimal tester ----
local function fmt(v)
  if type(v) == 'number' then return string.format('%.6g', v) end
  return tostring(v)
end

local function tensor_diff(a, b)
  if not (torch.isTensor(a) and torch.isTensor(b)) then return nil, 'not tensors' end
  if a:nElement() ~= b:nElement() then return nil, 'sizes differ' end
  if a:nElement() == 0 then return 0 end
  local x = a:double():contiguous():view(-1)
  local y = b:double():contiguous():view(-1)
  local d = 0
  for i = 1, x:size(1) do
    local u, v = x[i], y[i]
    local e = (u == v) and 0 or math.abs(u - v)
    if e ~= e then e = math.huge end
    if e > d then d = e end
  end
  return d
end

local function table_eq(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= 'table' then return a == b end
  for k, v in pairs(a) do if not table_eq(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local Tester = {}
Tester.__index = Tester

local function new_tester()
  return setmetatable({ tests = {}, names = {} }, Tester)
end

function Tester:add(t, name)
  if type(t) == 'table' then
    for k, v in pairs(t) do self:add(v, k) end
  else
    self.tests[name] = t
    self.names[#self.names + 1] = name
  end
  return self
end

function Tester:_record(ok, msg)
  if ok then return end
  local info = debug.getinfo(3, 'l')
  local where = info and info.currentline or '?'
  local f = self.failures
  if f then f[#f + 1] = string.format('line %s: %s', where, msg or 'assertion failed') end
end

function Tester:assert(cond, msg) self:_record(cond, msg) end
function Tester:asserteq(a, b, msg) self:_record(a == b, string.format('%s: %s ~= %s', msg or 'eq', fmt(a), fmt(b))) end
function Tester:assertne(a, b, msg) self:_record(a ~= b, string.format('%s: %s == %s', msg or 'ne', fmt(a), fmt(b))) end
function Tester:assertlt(a, b, msg) self:_record(a < b, string.format('%s: %s >= %s', msg or 'lt', fmt(a), fmt(b))) end
function Tester:assertgt(a, b, msg) self:_record(a > b, string.format('%s: %s <= %s', msg or 'gt', fmt(a), fmt(b))) end
function Tester:assertle(a, b, msg) self:_record(a <= b, string.format('%s: %s > %s', msg or 'le', fmt(a), fmt(b))) end
function Tester:assertge(a, b, msg) self:_record(a >= b, string.format('%s: %s < %s', msg or 'ge', fmt(a), fmt(b))) end
function Tester:assertalmosteq(a, b, tol, msg)
  if type(tol) ~= 'number' then msg, tol = tol, 1e-16 end
  self:_record(math.abs(a - b) <= tol, string.format('%s: |%s - %s| > %s', msg or 'almosteq', fmt(a), fmt(b), fmt(tol)))
end
function Tester:assertTensorEq(a, b, tol, msg)
  if type(tol) ~= 'number' then msg, tol = tol, 0 end
  local d, why = tensor_diff(a, b)
  self:_record(d and d <= tol, string.format('%s: %s', msg or 'TensorEq', d and ('max diff ' .. fmt(d)) or why))
end
function Tester:assertTensorNe(a, b, tol, msg)
  if type(tol) ~= 'number' then msg, tol = tol, 0 end
  local d = tensor_diff(a, b)
  self:_record(not d or d > tol, msg or 'TensorNe')
end
-- eq(got, expected, tolerance=0, message): Torch7's deep equality: numbers
-- and tensors within tolerance, tables key by key.
local function is_storage(v) return (torch.typename(v) or ''):match('Storage$') ~= nil end
local function deep_eq(a, b, tol)
  if is_storage(a) and is_storage(b) then                -- storages (sizes): element by element
    if #a ~= #b then return false end
    for i = 1, #a do if math.abs(a[i] - b[i]) > tol then return false end end
    return true
  end
  if torch.isTensor(a) or torch.isTensor(b) then
    local d = tensor_diff(a, b)
    return d ~= nil and d <= tol
  elseif type(a) == 'number' and type(b) == 'number' then
    return a == b or math.abs(a - b) <= tol
  elseif type(a) == 'table' and type(b) == 'table' then
    for k, v in pairs(a) do if not deep_eq(v, b[k], tol) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  return a == b
end
function Tester:eq(a, b, tol, msg)
  if type(tol) ~= 'number' then msg, tol = tol, (type(msg) == 'number' and msg or 0) end   -- or (a, b, msg, tol)
  self:_record(deep_eq(a, b, tol), string.format('%s: %s ~= %s', msg or 'eq', fmt(a), fmt(b)))
end
function Tester:assertErrorObj(f, test, msg)
  local ok, err = pcall(f)
  self:_record(not ok and test(err), msg or 'assertErrorObj')
end
function Tester:assertTableEq(a, b, msg) self:_record(table_eq(a, b), msg or 'TableEq') end
function Tester:assertTableNe(a, b, msg) self:_record(not table_eq(a, b), msg or 'TableNe') end
function Tester:assertError(f, msg) self:_record(not pcall(f), (msg or 'assertError') .. ': no error raised') end
function Tester:assertNoError(f, msg)
  local ok, err = pcall(f)
  self:_record(ok, (msg or 'assertNoError') .. ': ' .. tostring(err))
end
function Tester:assertErrorMsg(f, want, msg)
  local ok, err = pcall(f)
  self:_record(not ok and tostring(err):find(want, 1, true), msg or 'assertErrorMsg')
end
function Tester:assertErrorPattern(f, pat, msg)
  local ok, err = pcall(f)
  self:_record(not ok and tostring(err):find(pat), msg or 'assertErrorPattern')
end

function Tester:run(which)
  local names = {}
  local want = which
  if type(want) == 'string' then want = { want } end
  if want and #want > 0 then names = want else names = self.names end
  table.sort(names)
  local passed, failed = 0, 0
  for _, name in ipairs(names) do
    local fn = self.tests[name]
    self.failures = {}
    local ok, err
    if not fn then ok, err = false, 'no such test'
    else ok, err = xpcall(fn, function(e) return debug.traceback(tostring(e), 2) end) end
    local f = self.failures
    self.failures = nil
    if ok and #f == 0 then
      passed = passed + 1
      if verbose then print('PASS ' .. name) end
    else
      failed = failed + 1
      local first = ok and f[1] or tostring(err):gsub('\n.*', '')
      if ok and #f > 1 then first = first .. string.format(' (+%d more)', #f - 1) end
      print(string.format('FAIL %s: %s', name, first))
      if verbose and not ok then print(err) end
    end
    collectgarbage()
  end
  self.passed, self.failed = passed, failed
  print(string.format('%d passed, %d failed of %d', passed, failed, passed + failed))
end

-- ---- one test file per th process ----

local function quote(s) return "'" .. tostring(s):gsub("'", "'\\''") .. "'" end

-- run_one(path): in the child: runs a test file to its end (exit 0), or writes
-- "SUITE-ERROR <first line of the error>" and exits 1
local function run_one(path)
  local ok, err = xpcall(dofile, debug.traceback, path)
  if not ok then
    io.stderr:write('SUITE-ERROR ' .. tostring(err):gsub('\n.*', '') .. '\n')
    if verbose then io.stderr:write(tostring(err) .. '\n') end
    os.exit(1)
  end
  os.exit(0)
end

-- run_files(dir, names): in the driver: runs each named test file of dir (all its
-- test_*.lua when names is empty) as `th --torch7 <this script> <dir> --run-one
-- <name> <scripts dir>` in a fresh temporary directory (tests write files). A file
-- that prints the tester's "N passed, M failed" counts those tests (and one more
-- failure when it then ends with an error); any other counts as one test that
-- passes when it runs to its end. Prints each failure, then "N passed, M failed of T".
local function run_files(dir, names)
  local pwd = os.getenv('PWD')
  local function absolute(p) return p:sub(1, 1) == '/' and p or pwd .. '/' .. p end
  local th = arg[-2] and arg[-1] == '--torch7' and arg[-2] or arg[-1] or 'th'
  if th:find('/') then th = absolute(th) end
  local script, here = absolute(arg[0]), nil
  here = script:match('^(.*)/')
  dir = absolute(dir)
  local files = {}
  for _, n in ipairs(names or {}) do files[#files + 1] = n end
  if #files == 0 then
    local listing = io.popen('ls ' .. quote(dir))
    for name in listing:lines() do
      if name:match('^test_.*%.lua$') then files[#files + 1] = name end
    end
    listing:close()
  end
  local passed, failed = 0, 0
  for _, name in ipairs(files) do
    local tmp = os.tmpname()
    os.remove(tmp)
    os.execute('mkdir -p ' .. quote(tmp))
    local cmd = string.format('cd %s && %s --torch7 %s %s --run-one %s %s 2>&1', quote(tmp), quote(th), quote(script),
                              quote(dir), quote(name), quote(here))
    local p = io.popen(cmd)
    local out = p:read('a')
    local ok = p:close()
    os.execute('rm -rf ' .. quote(tmp))
    local error_line = out:match('SUITE%-ERROR ([^\n]*)')
    local np, nf = out:match('(%d+) passed, (%d+) failed of %d+')
    if np then
      passed, failed = passed + tonumber(np), failed + tonumber(nf)
      for line in out:gmatch('[^\n]+') do
        if line:match('^FAIL ') then print(name .. ': ' .. line) end
      end
      if not ok then
        failed = failed + 1
        print(name .. ': the file ended with an error: ' .. (error_line or '?'))
      end
    elseif ok then
      passed = passed + 1
      if verbose then print('passed  ' .. name) end
    else
      failed = failed + 1
      print('FAILED  ' .. name .. ': ' .. (error_line or out:sub(-300)))
    end
    if verbose then print(out) end
  end
  print(string.format('%d passed, %d failed of %d', passed, failed, passed + failed))
end

return {new_tester = new_tester, run_one = run_one, run_files = run_files}
