-- torch.Tester and torch.TestSuite: Torch7's unit-test framework. Tests are
-- functions that call the tester's assertions; run() reports each test, then
-- every failure with its message and line, and raises when any failed.
local torch = require 'torch'

-- the report's width, as Torch7's
local NCOLS = 80

local THIS_FILE = debug.getinfo(1, 'S').source

local function pluralize(n, word) return n .. ' ' .. word .. (n == 1 and '' or 's') end

-- The stack level (as error() counts it from the function at `from`) of the
-- first frame outside this file: the user's line that called the tester.
local function user_level(from)
  local level = from + 1
  while true do
    local info = debug.getinfo(level, 'S')
    if not info then return 1 end
    if info.source ~= THIS_FILE and info.what ~= 'C' then return level - 1 end
    level = level + 1
  end
end

-- error(message) blamed on the user's line that called the tester
local function user_error(message)
  error(message, user_level(2))
end

-- ---- the checks: (ok, message) with message saying what differed ----

local check = {}

local function same_size(ta, tb)
  if ta:dim() ~= tb:dim() then return false end
  for d = 1, ta:dim() do
    if ta:size(d) ~= tb:size(d) then return false end
  end
  return true
end

-- the largest |a - b| over the elements of two tensors of one numel, as a Lua
-- number (NaN when a difference is NaN: max propagates it)
local function max_abs_diff(ta, tb)
  local n = ta:numel()
  local a, b = ta:detach():double():reshape(n), tb:detach():double():reshape(n)
  local m = (a - b):abs():max()
  return type(m) == 'number' and m or m:item()
end

-- Tensors are equal when their types and sizes match (only their numel when
-- ignore_dims, Torch7's assertTensorEq) and no elements differ by more than
-- tolerance.
function check.tensors(ta, tb, tolerance, negate, ignore_dims)
  if not ignore_dims and ta:dim() ~= tb:dim() then return negate, 'The tensors have different dimensions' end
  if ta:type() ~= tb:type() then return negate, 'The tensors have different types' end
  local same = ignore_dims and ta:numel() == tb:numel() or (not ignore_dims and same_size(ta, tb))
  if not same then return negate, 'The tensors have different sizes' end
  if ta:numel() == 0 then return not negate, 'Both tensors are empty' end
  local err = max_abs_diff(ta, tb)
  local ok = err <= tolerance
  if negate then ok = not ok end
  if ok then return true end
  return false, string.format('Tensor%s violation: max diff=%s, tolerance=%s', negate and 'NE(==)' or 'EQ(==)',
                              err ~= err and 'nan' or tostring(err), tostring(tolerance))
end

-- Deep equality: the same type; numbers within tolerance; tensors as above;
-- tables key by key, breadth first (so the shallowest difference is the one
-- named); anything else by ==.
function check.values(got, expected, tolerance, negate)
  if type(got) ~= type(expected) then
    return negate, not negate and 'EQ failed: values have different types (first: ' .. type(got) ..
                   ', second: ' .. type(expected) .. ')' or nil
  end
  if type(got) == 'number' then
    local ok = math.abs(got - expected) <= tolerance
    if negate then ok = not ok end
    if ok then return true end
    local message = string.format(negate and 'NE failed: %s == %s' or 'EQ failed: %s ~= %s', tostring(got),
                                  tostring(expected))
    return false, tolerance > 0 and message .. ' with tolerance=' .. tostring(tolerance) or message
  elseif type(got) == 'table' then
    return check.tables(got, expected, tolerance, negate)
  elseif torch.is_tensor(got) then
    if not torch.is_tensor(expected) then return negate, 'EQ failed: a tensor and a ' .. torch.type(expected) end
    return check.tensors(got, expected, tolerance, negate, false)
  end
  local ok = got == expected
  if negate then ok = not ok end
  if ok then return true end
  return false, string.format(negate and 'NE failed: %s (%s) == %s (%s)' or 'EQ failed: %s (%s) ~= %s (%s)',
                              tostring(got), type(got), tostring(expected), type(expected))
end

function check.tables(t1, t2, tolerance, negate)
  local queue, head, seen = {{t1, t2}}, 1, {}
  while queue[head] do
    local a, b, location = table.unpack(queue[head])
    head = head + 1
    seen[a] = seen[a] or {}
    seen[a][b] = true
    local function at(key) return location and location .. '.' .. tostring(key) or tostring(key) end
    for key, va in pairs(a) do
      local vb = b[key]
      if vb == nil then
        return negate, string.format('Entry %s missing in second table (is %s in first)', at(key), tostring(va))
      end
      if type(va) == 'table' and type(vb) == 'table' then
        if not (seen[va] and seen[va][vb]) then queue[#queue + 1] = {va, vb, at(key)} end
      else
        local ok, message = check.values(va, vb, tolerance, false)
        if not ok then return negate, 'At table location ' .. at(key) .. ': ' .. message end
      end
    end
    for key, vb in pairs(b) do
      if a[key] == nil then
        return negate, string.format('Entry %s missing in first table (is %s in second)', at(key), tostring(vb))
      end
    end
  end
  if negate then return false, 'The tables are equal' end
  return true
end

-- ---- optional arguments ----

-- An assertion's optional message: '' or the message and a newline.
local function message_of(name, message, ...)
  if select('#', ...) > 0 then user_error('Tester:' .. name .. ': unexpected argument after the message') end
  if message == nil or message == '' then return '' end
  if type(message) ~= 'string' then
    user_error('Tester:' .. name .. ': the message must be a string, got ' .. type(message))
  end
  return message .. '\n'
end

-- An assertion's optional tolerance and message, in either order, as Torch7's.
local function tolerance_and_message(name, default, ...)
  local tolerance, message
  for i = 1, select('#', ...) do
    local a = select(i, ...)
    if type(a) == 'string' and not message then
      message = a .. '\n'
    elseif type(a) == 'number' and not tolerance then
      if not (a >= 0) then user_error('Tester:' .. name .. ': the tolerance must be >= 0, got ' .. a) end
      tolerance = a
    else
      user_error('Tester:' .. name .. ': unexpected argument ' .. i + 2 .. ' (' .. type(a) ..
                 '): expected a tolerance and a message')
    end
  end
  return tolerance or default, message or ''
end

-- ---- the tester ----

-- torch.Tester(): a set of tests and the assertions they call, as Torch7's.
--   local tester = torch.Tester()
--   local tests = torch.TestSuite()
--   function tests.sum() tester:eq(torch.ones(3):sum():item(), 3) end
--   tester:add(tests):run()
-- run() prints a line per test (PASS, FAIL, ERROR or SKIP), then each failure
-- with its message and line, and raises when a test failed (a script exits 1).
local Tester = torch.class('torch.Tester')

function Tester:__init()
  self.tests, self.names = {}, {}
  self.errors, self.warnings = {}, {}
  self.disabledTests = {}
  self._currentTestName = ''
  self.assertionPass, self.assertionFail, self.testError, self._warningCount = {}, {}, {}, {}
  self._assertTensorEqIgnoresDims = true      -- Torch7's: assertTensorEq compares numels, eq compares sizes
end

-- tester:setEarlyAbort(b): stop the run at the first test that fails.
function Tester:setEarlyAbort(b) self.earlyAbort = b end

-- tester:setRethrowErrors(b): raise a failed assertion (and a test's error) at
-- once, rather than record it; for specs and debuggers.
function Tester:setRethrowErrors(b) self.rethrow = b end

-- tester:setSummaryOnly(b): report only the counts, not each failure.
function Tester:setSummaryOnly(b) self.summaryOnly = b end

local function bump(counts, name) counts[name] = (counts[name] or 0) + 1 end

-- the frames from the user's line that called the tester up to the running test
-- function: the "stack traceback" part of a failure's report
local function user_frames()
  local frames, level = {}, user_level(1)
  while true do
    local info = debug.getinfo(level, 'Slnf')
    if not info or info.source == THIS_FILE or info.what == 'C' then break end
    local where = info.what == 'main' and 'in main chunk' or
                  string.format('in function <%s:%d>', info.short_src, info.linedefined)
    frames[#frames + 1] = string.format('\t%s:%d: %s', info.short_src, info.currentline, where)
    level = level + 1
  end
  return 'stack traceback:\n' .. table.concat(frames, '\n')
end

function Tester:_record(list, message)
  local name = self._currentTestName
  list[#list + 1] = (name ~= '' and name .. '\n' or '') .. message .. '\n' .. user_frames()
end

function Tester:_assert_sub(ok, message)
  local name = self._currentTestName
  if ok then
    bump(self.assertionPass, name)
    return true
  end
  if self.rethrow then user_error(message) end
  bump(self.assertionFail, name)
  self:_record(self.errors, message)
  return false
end

function Tester:_warning(message)
  bump(self._warningCount, self._currentTestName)
  self:_record(self.warnings, message)
end

-- tester:assert(condition [, message]): condition is true.
function Tester:assert(condition, ...)
  local message = message_of('assert', ...)
  if type(condition) ~= 'boolean' then
    self:_warning(':assert should only be used for boolean conditions. To check for non-nil variables, ' ..
                  'do this explicitly: tester:assert(var ~= nil).')
  end
  return self:_assert_sub(condition, string.format('%sBOOL violation condition=%s', message, tostring(condition)))
end

function Tester:_eq_or_ne(name, got, expected, negate, ...)
  local tolerance, message = tolerance_and_message(name, 0, ...)
  local ok, detail = check.values(got, expected, tolerance, negate)
  return self:_assert_sub(ok, message .. (detail or ''))
end

-- tester:eq(got, expected [, tolerance] [, message]), also assertGeneralEq:
-- deep equality of numbers (within tolerance), tensors (same type and size,
-- elements within tolerance), tables (recursively, keys and values) and any
-- other value (==).
function Tester:eq(got, expected, ...) return self:_eq_or_ne('eq', got, expected, false, ...) end

-- tester:ne(got, unexpected [, tolerance] [, message]), also assertGeneralNe:
-- the negation of eq.
function Tester:ne(got, unexpected, ...) return self:_eq_or_ne('ne', got, unexpected, true, ...) end
Tester.assertGeneralEq, Tester.assertGeneralNe = Tester.eq, Tester.ne

local function comparison(name, holds, label, shown)
  return function(self, a, b, ...)
    local message = message_of(name, ...)
    local ok, result = pcall(holds, a, b)
    if not ok then user_error('Tester:' .. name .. ': cannot compare ' .. type(a) .. ' with ' .. type(b)) end
    return self:_assert_sub(result, string.format('%s%s failed: %s %s %s', message, label, tostring(a), shown,
                                                  tostring(b)))
  end
end

Tester.asserteq = torch.doc(comparison('asserteq', function(a, b) return a == b end, 'EQ', '~='),
  'tester:asserteq(a, b [, message]): a == b (Lua\'s ==).')
Tester.assertlt = torch.doc(comparison('assertlt', function(a, b) return a < b end, 'LT', '>='),
  'tester:assertlt(a, b [, message]): a < b.')
Tester.assertle = torch.doc(comparison('assertle', function(a, b) return a <= b end, 'LE', '>'),
  'tester:assertle(a, b [, message]): a <= b.')
Tester.assertgt = torch.doc(comparison('assertgt', function(a, b) return a > b end, 'GT', '<='),
  'tester:assertgt(a, b [, message]): a > b.')
Tester.assertge = torch.doc(comparison('assertge', function(a, b) return a >= b end, 'GE', '<'),
  'tester:assertge(a, b [, message]): a >= b.')
local assertne = comparison('assertne', function(a, b) return a ~= b end, 'NE', '==')

-- tester:assertne(a, b [, message]): a ~= b (Lua's ~=; a warning for tables
-- and userdata, which ne compares by value).
function Tester:assertne(a, b, ...)
  if type(a) == 'table' or type(a) == 'userdata' then
    self:_warning(':assertne should only be used to compare basic lua objects (numbers, booleans, etc). ' ..
                  'Consider using either :assertGeneralNe or :assert(a ~= b).')
  end
  return assertne(self, a, b, ...)
end

-- tester:assertalmosteq(a, b [, tolerance=1e-16] [, message]): |a - b| <= tolerance.
function Tester:assertalmosteq(a, b, ...)
  local tolerance, message = tolerance_and_message('assertalmosteq', 1e-16, ...)
  if type(a) ~= 'number' or type(b) ~= 'number' then
    user_error('Tester:assertalmosteq: expected two numbers, got ' .. type(a) .. ' and ' .. type(b))
  end
  return self:_assert_sub(math.abs(a - b) <= tolerance, string.format('%sALMOST_EQ failed: %s ~= %s with tolerance=%s',
                                                              message, tostring(a), tostring(b), tostring(tolerance)))
end

function Tester:_tensor_eq_or_ne(name, ta, tb, negate, ...)
  for i, t in ipairs({ta, tb}) do
    if not torch.is_tensor(t) then
      user_error('Tester:' .. name .. ': expected a tensor as argument ' .. i .. ', got ' .. torch.type(t))
    end
  end
  local tolerance, message = tolerance_and_message(name, 0, ...)
  local ok, detail = check.tensors(ta, tb, tolerance, negate, self._assertTensorEqIgnoresDims)
  if ok and not negate and not same_size(ta, tb) then
    self:_warning('Tensors have the same content but different dimensions. For backwards compatibility, ' ..
                  'they are considered equal, but this may change in the future. Consider using :eq to ' ..
                  'check for equality instead.')
  end
  return self:_assert_sub(ok, message .. (detail or ''))
end

-- tester:assertTensorEq(ta, tb [, tolerance=0] [, message]): two tensors of the
-- same type and numel whose elements differ by at most tolerance (Torch7's: a
-- 1x3 and a 3 tensor are equal, with a warning; eq checks the sizes).
function Tester:assertTensorEq(ta, tb, ...) return self:_tensor_eq_or_ne('assertTensorEq', ta, tb, false, ...) end

-- tester:assertTensorNe(ta, tb [, tolerance=0] [, message]): the negation of assertTensorEq.
function Tester:assertTensorNe(ta, tb, ...) return self:_tensor_eq_or_ne('assertTensorNe', ta, tb, true, ...) end

function Tester:_table_eq_or_ne(name, ta, tb, negate, ...)
  for i, t in ipairs({ta, tb}) do
    if type(t) ~= 'table' then user_error('Tester:' .. name .. ': expected a table as argument ' .. i .. ', got ' .. type(t)) end
  end
  return self:_eq_or_ne(name, ta, tb, negate, ...)
end

-- tester:assertTableEq(ta, tb [, tolerance=0] [, message]): eq for two tables.
function Tester:assertTableEq(ta, tb, ...) return self:_table_eq_or_ne('assertTableEq', ta, tb, false, ...) end

-- tester:assertTableNe(ta, tb [, tolerance=0] [, message]): ne for two tables.
function Tester:assertTableNe(ta, tb, ...) return self:_table_eq_or_ne('assertTableNe', ta, tb, true, ...) end

-- tester:assertErrorObj(f, errcomp [, message]): f() raises an error e for which
-- errcomp(e) is true.
function Tester:assertErrorObj(f, errcomp, ...)
  local message = message_of('assertErrorObj', ...)
  if type(f) ~= 'function' then user_error('Tester:assertErrorObj: expected a function, got ' .. type(f)) end
  local ok, err = pcall(f)
  return self:_assert_sub(not ok and errcomp(err) and true or false,
                          string.format('%sERROR violation: err=%s', message, tostring(err)))
end

-- tester:assertError(f [, message]): f() raises an error.
function Tester:assertError(f, ...) return self:assertErrorObj(f, function() return true end, ...) end

-- tester:assertErrorMsg(f, errmsg [, message]): f() raises exactly errmsg
-- (with its position, as error() adds it: 'file.lua:3: boom').
function Tester:assertErrorMsg(f, errmsg, ...)
  return self:assertErrorObj(f, function(err) return err == errmsg end, ...)
end

-- tester:assertErrorPattern(f, pattern [, message]): f() raises an error whose
-- text matches the Lua pattern.
function Tester:assertErrorPattern(f, pattern, ...)
  if type(pattern) ~= 'string' then
    user_error('Tester:assertErrorPattern: expected a pattern string, got ' .. type(pattern))
  end
  return self:assertErrorObj(f, function(err) return string.find(tostring(err), pattern) ~= nil end, ...)
end

-- tester:assertNoError(f [, message]): f() raises no error.
function Tester:assertNoError(f, ...)
  local message = message_of('assertNoError', ...)
  if type(f) ~= 'function' then user_error('Tester:assertNoError: expected a function, got ' .. type(f)) end
  local ok, err = pcall(f)
  return self:_assert_sub(ok, string.format('%sERROR violation: err=%s', message, tostring(err)))
end

-- tester:add(f, name) or tester:add(suite): adds a test function under name
-- (unique; '_setUp' and '_tearDown' run before and after every test, given
-- its name), or every function of a TestSuite (or plain table, with a
-- warning) under its key. Returns the tester.
function Tester:add(f, name)
  if type(f) == 'table' then
    if name ~= nil then user_error('Tester:add: a name cannot be given with a table of tests') end
    local tests, order = f, nil
    if rawget(f, '__isTestSuite') then
      tests, order = rawget(f, '__tests'), rawget(f, '__order')
    else
      self:_warning('Should use TestSuite rather than plain lua table')
      order = {}
      for k in pairs(f) do order[#order + 1] = k end
      table.sort(order, function(a, b) return tostring(a) < tostring(b) end)
    end
    for _, k in ipairs(order) do
      if type(tests[k]) == 'table' then user_error('Tester:add: nested sets of tests are not supported') end
      self:add(tests[k], k)
    end
    return self
  end
  if type(f) ~= 'function' then
    user_error('Tester:add: expected a test function or a table of them, got ' .. type(f))
  end
  if name == '_setUp' or name == '_tearDown' then
    if self[name] then user_error('Tester:add: only one ' .. name .. ' function is allowed') end
    self[name] = f
    return self
  end
  name = name == nil and 'unknown' or tostring(name)
  if self.tests[name] then user_error('Tester:add: a test named ' .. name .. ' already exists') end
  self.tests[name] = f
  self.names[#self.names + 1] = name
  return self
end

-- tester:disable(names): tests (a name or a list) that run() skips, reporting
-- them as SKIP. Returns the tester.
function Tester:disable(names)
  if type(names) == 'string' then names = {names} end
  if type(names) ~= 'table' then user_error('Tester:disable: expected a test name or a list, got ' .. type(names)) end
  for _, name in ipairs(names) do
    if not self.tests[name] then user_error("Tester:disable: no test named '" .. tostring(name) .. "'") end
    self.disabledTests[name] = true
  end
  return self
end

-- the names to run, in the order they were added: all, or those matching any of
-- the patterns (string.match)
function Tester:_selected(patterns)
  if patterns == nil then return {table.unpack(self.names)} end
  if type(patterns) == 'string' then patterns = {patterns} end
  if type(patterns) ~= 'table' then
    user_error('Tester:run: expected a test name, a list of names or nil, got ' .. type(patterns))
  end
  local chosen, list = {}, {}
  for _, pattern in ipairs(patterns) do
    local found = false
    for _, name in ipairs(self.names) do
      if name:match(pattern) then
        found = true
        if not chosen[name] then chosen[name] = true; list[#list + 1] = name end
      end
    end
    if not found then user_error("Tester:run: no test matches '" .. tostring(pattern) .. "'") end
  end
  table.sort(list, function(a, b) return self:_position(a) < self:_position(b) end)
  return list
end

function Tester:_position(name)
  for i, n in ipairs(self.names) do if n == name then return i end end
end

local COLORS = {cyan = '\27[0;36m', yellow = '\27[0;33m', magenta = '\27[0;35m', red = '\27[0;31m',
                green = '\27[0;32m', none = '\27[0m'}

-- runs test name; returns 'PASS', 'FAIL', 'ERROR' or 'SKIP'
function Tester:_run_one(name)
  if self.disabledTests[name] then return 'SKIP' end
  local fn, nerrors = self.tests[name], #self.errors
  if self._setUp then self._setUp(name) end
  local ok = true
  if self.rethrow then
    fn()
  else
    local trace
    ok, trace = xpcall(fn, debug.traceback)
    if not ok then
      trace = tostring(trace):gsub('\n[^\n]*in function \'xpcall\'.*$', '')
      self.errors[#self.errors + 1] = name .. '\n Function call failed\n' .. trace
    end
  end
  if self._tearDown then self._tearDown(name) end
  if not ok then return 'ERROR' end
  return #self.errors == nerrors and 'PASS' or 'FAIL'
end

-- tester:run([names]): runs every test, or those whose names match names (a
-- pattern or a list of them), in the order they were added. Prints a line a
-- test, then "Completed N asserts in N tests with N failures and N errors"
-- and each failure and warning. Raises when a test failed or raised (so a
-- script run by th exits with status 1); else returns 0, as Torch7's.
function Tester:run(names)
  local list = self:_selected(names)
  self.assertionPass, self.assertionFail, self.testError, self._warningCount = {}, {}, {}, {}
  self.errors, self.warnings = {}, {}
  local tty = torch._isatty(1)
  local function coloured(s, colour) return tty and COLORS[colour] .. s .. COLORS.none or s end
  local result_colour = {PASS = 'green', FAIL = 'red', ERROR = 'magenta', SKIP = 'yellow'}
  local n = #list
  local width = #tostring(n)
  io.write('Running ' .. pluralize(n, 'test') .. '\n')
  for i, name in ipairs(list) do
    self._currentTestName = name
    local head = coloured(string.format('%' .. width .. 'd/%d ', i, n), 'cyan') .. name .. ' ' ..
                 string.rep('.', math.max(1, NCOLS - 8 - 2 * width - 2 - #name)) .. ' '
    if tty then io.write(head .. '[' .. coloured('WAIT', 'cyan') .. ']'); io.flush() end
    local result = self:_run_one(name)
    if result == 'ERROR' then self.testError[name] = 1 end
    io.write((tty and '\r' or '') .. head .. '[' .. coloured(result, result_colour[result]) .. ']')
    if result == 'PASS' and (self._warningCount[name] or 0) > 0 then
      io.write('\n' .. string.rep(' ', NCOLS - 10) .. '[' .. coloured('+warning', 'yellow') .. ']')
    end
    io.write('\n')
    io.flush()
    if self.earlyAbort and i < n and (result == 'FAIL' or result == 'ERROR') then
      io.write('Aborting on first error, not all tests have been executed\n')
      break
    end
  end
  self._currentTestName = ''
  local failures, errors = self:_report(list)
  if failures + errors > 0 then
    error(string.format('Tester:run: %s and %s in %s', pluralize(failures, 'failure'), pluralize(errors, 'error'),
                        pluralize(n, 'test')), 2)
  end
  return 0
end

-- prints the summary and the failures; returns the numbers of failed and of
-- erring tests
function Tester:_report(list)
  local asserts, failures, errors, warnings, skipped = 0, 0, 0, 0, 0
  for _, name in ipairs(list) do
    local fail = self.assertionFail[name] or 0
    asserts = asserts + (self.assertionPass[name] or 0) + fail
    if fail > 0 then failures = failures + 1 end
    if self.testError[name] then errors = errors + 1 end
    if (self._warningCount[name] or 0) > 0 then warnings = warnings + 1 end
    if self.disabledTests[name] then skipped = skipped + 1 end
  end
  local line = {'Completed ', pluralize(asserts, 'assert'), ' in ', pluralize(#list, 'test'), ' with ',
                pluralize(failures, 'failure'), ' and ', pluralize(errors, 'error')}
  if warnings > 0 then line[#line + 1] = ' and ' .. pluralize(warnings, 'warning') end
  if skipped > 0 then line[#line + 1] = ' and ' .. skipped .. ' disabled' end
  io.write(table.concat(line) .. '\n')
  if not self.summaryOnly then
    local rule = string.rep('-', NCOLS) .. '\n'
    local sections = {}
    for _, s in ipairs(self.errors) do sections[#sections + 1] = s end
    for _, s in ipairs(self.warnings) do sections[#sections + 1] = s end
    if #sections > 0 then io.write(rule) end
    for _, s in ipairs(sections) do io.write(s .. '\n' .. rule) end
  end
  return failures, errors
end

-- torch.TestSuite(): a table of test functions for tester:add, as Torch7's:
-- defining a test name twice, or a value that is not a function, raises.
--   local tests = torch.TestSuite()
--   function tests.addition() tester:eq(1 + 1, 2) end
function torch.TestSuite()
  local tests, order = {}, {}
  return setmetatable({__tests = tests, __order = order, __isTestSuite = true}, {
    __index = function(_, key) return tests[key] end,
    __newindex = function(_, key, value)
      if tests[key] ~= nil then error('TestSuite: test ' .. tostring(key) .. ' is already defined', 2) end
      if type(value) == 'table' then error('TestSuite: nested tables of tests are not supported', 2) end
      if type(value) ~= 'function' then
        error('TestSuite: only functions can be tests, got ' .. type(value) .. ' for ' .. tostring(key), 2)
      end
      tests[key] = value
      order[#order + 1] = key
    end,
  })
end

return Tester
