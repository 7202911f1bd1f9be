-- torch7_util_spec.lua: Torch7's utilities: torch.Timer and tic/toc,
-- torch.Tester and TestSuite, torch.CmdLine, and the paths, sys and xlua
-- packages. Expected values come from Torch7's documentation and definitions.
local torch = require 'torch'
local paths = require 'paths'
local sys = require 'sys'
local xlua = require 'xlua'
local th = dofile('spec/support/th.lua')

-- a script file holding source; its name
local function script(source)
  local name = os.tmpname()
  local f = assert(io.open(name, 'w'))
  f:write(source)
  f:close()
  return name
end

-- what io.write wrote while fn ran, and fn's pcall results
local function written(fn, ...)
  local out, saved = {}, io.write
  io.write = function(...)
    for i = 1, select('#', ...) do out[#out + 1] = tostring(select(i, ...)) end
  end
  local result = table.pack(pcall(fn, ...))
  io.write = saved
  return table.concat(out), table.unpack(result, 1, result.n)
end

-- a busy loop of about seconds of wall time (CPU time too)
local function spin(seconds)
  local t0, x = torch.clock(), 0
  while torch.clock() - t0 < seconds do x = x + math.sin(x) end
  return x
end

describe('torch.Timer and tic/toc', function()
  it('counts real, user and sys seconds, and not the time it was stopped', function()
    local timer = torch.Timer()
    spin(0.05)
    local t = timer:time()
    assert.is_true(t.real >= 0.05)
    assert.is_true(t.user > 0, 'a busy loop uses user CPU time')
    assert.is_true(t.sys >= 0)
    assert.are.equal(timer, timer:stop())
    local stopped = timer:time().real
    sys.sleep(0.1)
    assert.are.equal(stopped, timer:time().real)
    timer:resume()
    spin(0.02)
    local total = timer:time().real
    assert.is_true(total >= stopped + 0.02 and total < stopped + 0.1, 'the 0.1 s stopped is not counted')
    timer:stop():reset()
    assert.are.same({real = 0, user = 0, sys = 0}, timer:time())   -- a stopped timer stays stopped
    timer:resume()
    spin(0.01)
    assert.is_true(timer:time().real >= 0.01)
  end)

  it('tic/toc give the seconds since tic', function()
    local t = torch.tic()
    sys.sleep(0.02)
    assert.is_true(torch.toc(t) >= 0.02)
    assert.is_true(torch.toc() >= 0.02)
    sys.tic()
    assert.is_true(sys.toc() < torch.toc(t))
    assert.has_error(function() torch.toc('x') end, 'torch.toc: expected a time from torch.tic(), got string')
  end)
end)

describe('torch.Tester', function()
  -- runs one assertion in a fresh tester; its result and the failure message
  local function check(method, ...)
    local tester = torch.Tester()
    local ok = tester[method](tester, ...)
    return ok, tester.errors[1]
  end
  local function passes(method, ...)
    local ok, message = check(method, ...)
    assert.is_true(ok, message)
  end
  local function fails(method, expected_message, ...)
    local ok, message = check(method, ...)
    assert.is_false(ok)
    assert.truthy(message:find(expected_message, 1, true), message)
  end

  it('assert', function()
    passes('assert', true)
    fails('assert', 'msg\nBOOL violation condition=false', false, 'msg')
  end)

  it('eq and ne, with tolerance, on numbers, tensors, nested tables and other values', function()
    passes('eq', 1, 1)
    passes('eq', 1, 1.005, 0.01)
    passes('eq', 1, 1.005, 'message first', 0.01)
    fails('eq', 'EQ failed: 1 ~= 2', 1, 2)
    fails('eq', 'EQ failed: 1.0 ~= 1.5 with tolerance=0.1', 1.0, 1.5, 0.1)
    fails('eq', 'values have different types (first: number, second: string)', 1, '1')
    passes('eq', torch.Tensor{1, 2, 3}, torch.Tensor{1, 2, 3})
    fails('eq', 'TensorEQ(==) violation: max diff=1.0, tolerance=0', torch.Tensor{1, 2, 3}, torch.Tensor{1, 2, 4})
    fails('eq', 'The tensors have different types', torch.Tensor{1}, torch.LongTensor{1})
    fails('eq', 'The tensors have different dimensions', torch.Tensor{{1}}, torch.Tensor{1})
    fails('eq', 'The tensors have different sizes', torch.Tensor{1, 2}, torch.Tensor{1, 2, 3})
    fails('eq', 'max diff=nan', torch.Tensor{0 / 0}, torch.Tensor{0 / 0})
    passes('eq', {2, torch.Tensor{1, 2, 2}}, {2, torch.Tensor{1, 2, 2.001}}, 0.01)
    passes('eq', {a = {b = {c = 'x'}}}, {a = {b = {c = 'x'}}})
    fails('eq', "At table location a.b.c: EQ failed: x (string) ~= y (string)", {a = {b = {c = 'x'}}},
          {a = {b = {c = 'y'}}})
    fails('eq', 'Entry 2 missing in second table (is 2 in first)', {1, 2}, {1})
    fails('eq', 'Entry z missing in first table (is 1 in second)', {}, {z = 1})
    local cycle_a, cycle_b = {}, {}
    cycle_a.self, cycle_b.self = cycle_a, cycle_b
    passes('eq', cycle_a, cycle_b)
    passes('assertGeneralEq', true, true)
    passes('ne', 1, 2)
    passes('assertGeneralNe', {1}, {2})
    fails('ne', 'NE failed: 1 == 1.05 with tolerance=0.1', 1, 1.05, 0.1)
    fails('ne', 'TensorNE(==) violation', torch.Tensor{1, 2}, torch.Tensor{1, 2})
    fails('assertGeneralNe', 'The tables are equal', {1, {2}}, {1, {2}})
  end)

  it('asserteq, assertne, assertlt, assertle, assertgt, assertge and assertalmosteq', function()
    passes('asserteq', 'a', 'a')
    fails('asserteq', 'EQ failed: 1 ~= 2', 1, 2)
    passes('assertne', 1, 2)
    fails('assertne', 'NE failed: 1 == 1', 1, 1)
    passes('assertlt', 1, 2)
    fails('assertlt', 'LT failed: 2 >= 2', 2, 2)
    passes('assertle', 2, 2)
    fails('assertle', 'LE failed: 3 > 2', 3, 2)
    passes('assertgt', 3, 2)
    fails('assertgt', 'GT failed: 2 <= 2', 2, 2)
    passes('assertge', 2, 2)
    fails('assertge', 'GE failed: 1 < 2', 1, 2)
    passes('assertalmosteq', 1, 1 + 1e-17)
    passes('assertalmosteq', 1, 1.05, 0.1)
    fails('assertalmosteq', 'ALMOST_EQ failed: 1 ~= 1.001 with tolerance=1e-16', 1, 1.001)
  end)

  it('assertTensorEq/Ne compare types and numels (Torch7: sizes only warn), with a tolerance', function()
    passes('assertTensorEq', torch.Tensor{1, 2}, torch.Tensor{1, 2.05}, 0.1)
    fails('assertTensorEq', 'TensorEQ(==) violation: max diff=0.5, tolerance=0.1', torch.Tensor{1, 2},
          torch.Tensor{1, 2.5}, 0.1)
    fails('assertTensorEq', 'The tensors have different types', torch.Tensor{1}, torch.IntTensor{1})
    fails('assertTensorEq', 'The tensors have different sizes', torch.Tensor{1}, torch.Tensor{1, 1})
    local tester = torch.Tester()
    assert.is_true(tester:assertTensorEq(torch.Tensor{{1, 2}}, torch.Tensor{1, 2}))
    assert.truthy(tester.warnings[1]:find('same content but different dimensions', 1, true))
    passes('assertTensorEq', torch.zeros(0), torch.zeros(0))
    passes('assertTensorNe', torch.Tensor{1}, torch.Tensor{2})
    fails('assertTensorNe', 'TensorNE(==) violation: max diff=0.0, tolerance=0', torch.Tensor{1}, torch.Tensor{1})
    assert.has_error(function() tester:assertTensorEq(1, torch.Tensor{1}) end,
                     'Tester:assertTensorEq: expected a tensor as argument 1, got number')
  end)

  it('assertTableEq/Ne', function()
    passes('assertTableEq', {1, {x = 2}}, {1, {x = 2.01}}, 0.1)
    fails('assertTableEq', 'At table location 2.x', {1, {x = 2}}, {1, {x = 3}})
    passes('assertTableNe', {1}, {2})
    fails('assertTableNe', 'The tables are equal', {1}, {1})
    assert.has_error(function() torch.Tester():assertTableEq(1, {}) end,
                     'Tester:assertTableEq: expected a table as argument 1, got number')
  end)

  it('assertError, assertNoError, assertErrorMsg, assertErrorPattern and assertErrorObj', function()
    local function boom() error('boom', 0) end
    local function fine() end
    passes('assertError', boom)
    fails('assertError', 'ERROR violation: err=nil', fine)
    passes('assertNoError', fine)
    fails('assertNoError', 'ERROR violation: err=boom', boom)
    passes('assertErrorMsg', boom, 'boom')
    fails('assertErrorMsg', 'ERROR violation: err=boom', boom, 'bang')
    passes('assertErrorPattern', boom, '^bo+m$')
    fails('assertErrorPattern', 'ERROR violation: err=boom', boom, 'bang')
    local function raise_table() error({code = 7}) end
    passes('assertErrorObj', raise_table, function(e) return e.code == 7 end)
    fails('assertErrorObj', 'ERROR violation', raise_table, function(e) return e.code == 8 end)
  end)

  it('rejects bad arguments at the caller\'s line', function()
    local tester = torch.Tester()
    local ok, err = pcall(function() tester:eq(1, 1, {}) end)
    assert.is_false(ok)
    assert.truthy(err:find('torch7_util_spec.lua:%d+: Tester:eq: unexpected argument 3 %(table%)'), err)
    ok, err = pcall(function() tester:eq(1, 1, -1) end)
    assert.truthy(err:find('torch7_util_spec.lua:%d+: Tester:eq: the tolerance must be >= 0, got %-1'), err)
    ok, err = pcall(function() tester:add(3) end)
    assert.truthy(err:find('torch7_util_spec.lua:%d+: Tester:add: expected a test function'), err)
    ok, err = pcall(function() tester:assertlt({}, 1) end)
    assert.truthy(err:find('Tester:assertlt: cannot compare table with number', 1, true), err)
  end)

  it('TestSuite refuses a test name twice, tables and non-functions', function()
    local suite = torch.TestSuite()
    function suite.a() end
    assert.has_error(function() suite.a = function() end end, 'TestSuite: test a is already defined')
    assert.has_error(function() suite.b = {} end, 'TestSuite: nested tables of tests are not supported')
    assert.has_error(function() suite.c = 1 end, 'TestSuite: only functions can be tests, got number for c')
    local tester = torch.Tester():add(suite)
    assert.has_error(function() tester:add(function() end, 'a') end, 'Tester:add: a test named a already exists')
  end)

  it('run reports progress, each failure with its message and line, the counts, and raises', function()
    local tester = torch.Tester()
    local tests = torch.TestSuite()
    local order = {}
    function tests.testA() order[#order + 1] = 'A'; tester:eq(torch.Tensor{1, 2, 3}, torch.Tensor{1, 2, 4}, 'a and b') end
    function tests.testB() order[#order + 1] = 'B'; tester:eq({2, 3}, {2, 3.001}, 0.01) end
    function tests.testC() order[#order + 1] = 'C'; error('boom') end
    function tests.testD() order[#order + 1] = 'D' end
    tester:add(tests):add(function() tester:assert(true) end, 'extra'):disable('testD')
    tester:add(function(name) order[#order + 1] = 'setUp ' .. name end, '_setUp')
    local out, ok, err = written(tester.run, tester)
    assert.is_false(ok)
    assert.truthy(err:find('Tester:run: 1 failure and 1 error in 5 tests', 1, true), err)
    assert.are.same({'setUp testA', 'A', 'setUp testB', 'B', 'setUp testC', 'C', 'setUp extra'}, order)
    assert.truthy(out:find('^Running 5 tests\n'), out)
    assert.truthy(out:find('\n1/5 testA %.+ %[FAIL%]\n'), out)
    assert.truthy(out:find('\n2/5 testB %.+ %[PASS%]\n'), out)
    assert.truthy(out:find('\n3/5 testC %.+ %[ERROR%]\n'), out)
    assert.truthy(out:find('\n4/5 testD %.+ %[SKIP%]\n'), out)
    assert.truthy(out:find('\n5/5 extra %.+ %[PASS%]\n'), out)
    assert.truthy(out:find('Completed 3 asserts in 5 tests with 1 failure and 1 error and 1 disabled\n', 1, true), out)
    assert.truthy(out:find('testA\na and b\nTensorEQ(==) violation: max diff=1.0, tolerance=0\nstack traceback:\n', 1, true),
                  out)
    assert.truthy(out:find('torch7_util_spec.lua:%d+: in function'), out)
    assert.truthy(out:find('testC\n Function call failed\n[^\n]*torch7_util_spec.lua:%d+: boom'), out)
    -- run(names): patterns, in the order added
    order = {}
    out, ok = written(tester.run, tester, {'extra', 'B$'})
    assert.is_true(ok)
    assert.truthy(out:find('Completed 2 asserts in 2 tests with 0 failures and 0 errors\n', 1, true), out)
    assert.has_error(function() tester:run('nothing') end, "Tester:run: no test matches 'nothing'")
    -- summary only, early abort
    tester:setSummaryOnly(true)
    tester:setEarlyAbort(true)
    out = written(tester.run, tester)
    assert.truthy(out:find('Aborting on first error, not all tests have been executed\n', 1, true), out)
    assert.falsy(out:find('----', 1, true))
  end)

  it('setRethrowErrors raises a failed assertion at the test\'s line', function()
    local tester = torch.Tester()
    tester:setRethrowErrors(true)
    local ok, err = pcall(function() tester:asserteq(1, 2, 'one is two') end)
    assert.is_false(ok)
    assert.truthy(err:find('torch7_util_spec.lua:%d+: one is two\nEQ failed: 1 ~= 2'), err)
    assert.is_true(tester:asserteq(1, 1))
  end)

  it('a script whose tests fail exits with status 1 and its report; one whose tests pass, 0', function()
    local failing = script([[
local tester = torch.Tester()
local tests = torch.TestSuite()
function tests.bad() tester:asserteq(1, 2, 'deliberate') end
function tests.good() tester:assert(true) end
tester:add(tests)
tester:run()
]])
    local ok, out = th.run(failing)
    os.remove(failing)
    assert.is_false(ok)
    assert.truthy(out:find('1/2 bad .* %[FAIL%]'), out)
    assert.truthy(out:find('deliberate\nEQ failed: 1 ~= 2\nstack traceback:\n\t[^\n]*:3: in function', 1), out)
    assert.truthy(out:find(':6: Tester:run: 1 failure and 0 errors in 2 tests', 1, true), out)
    local passing = script("local t = torch.Tester(); t:add(function() t:eq({1}, {1}) end, 'ok'); print(t:run())\n")
    ok, out = th.run(passing)
    os.remove(passing)
    assert.is_true(ok, out)
    assert.truthy(out:find('Completed 1 assert in 1 test with 0 failures and 0 errors\n0\n', 1, true), out)
  end)
end)

describe('torch.CmdLine', function()
  local function command()
    local cmd = torch.CmdLine()
    cmd:text('Training a simple network')
    cmd:option('-seed', 123, 'initial random seed')
    cmd:option('-booloption', false, 'boolean option')
    cmd:option('-stroption', 'mystring', 'string option')
    cmd:option('--batch-size', 64, 'batch size')
    return cmd
  end

  it('parses options by their defaults\' types, flags, --name=value and arguments', function()
    local cmd = command()
    assert.are.same({seed = 123, booloption = false, stroption = 'mystring', ['batch-size'] = 64, batch_size = 64},
                    cmd:parse({}))
    local opt = cmd:parse({'-seed', '456', '-booloption', '--stroption=x y', '--batch-size', '32'})
    assert.are.same({seed = 456, booloption = true, stroption = 'x y', ['batch-size'] = 32, batch_size = 32}, opt)
    assert.are.equal(false, cmd:parse({'-booloption=false'}).booloption)
    assert.are.equal(false, cmd:parse({'-booloption', 'false'}).booloption)
    local flip = torch.CmdLine()
    flip:option('-cuda', true, 'use a GPU')
    assert.are.equal(false, flip:parse({'-cuda'}).cuda)        -- Torch7: a flag flips its default
    cmd:argument('data', 'the data file')
    cmd:argument('n', 'a count', 'number')
    opt = cmd:parse({'file.t7', '-seed', '1', '-3'})
    assert.are.same({'file.t7', 1, -3}, {opt.data, opt.seed, opt.n})
  end)

  it('raises on unknown options, bad values and missing or extra arguments, with the usage', function()
    local cmd = command()
    cmd:argument('data', 'the data file')
    local cases = {
      {{'x', '-nope'}, 'CmdLine:parse: unknown option -nope'},
      {{'x', '-seed', 'many'}, "CmdLine:parse: option -seed expects a number, got 'many'"},
      {{'x', '-seed'}, 'CmdLine:parse: option -seed needs a value'},
      {{'x', '-booloption=maybe'}, "CmdLine:parse: option -booloption is a flag: expected 'true' or 'false', got 'maybe'"},
      {{}, 'CmdLine:parse: missing argument <data>'},
      {{'x', 'y'}, "CmdLine:parse: unexpected argument 'y'"},
    }
    for _, case in ipairs(cases) do
      local ok, err = pcall(function() cmd:parse(case[1]) end)
      assert.is_false(ok)
      assert.truthy(err:find('torch7_util_spec.lua:%d+: ' .. case[2]:gsub('%p', '%%%0')), err)
      assert.truthy(err:find('\nUsage: [options] <data>\nTraining a simple network\n  -seed', 1, true), err)
    end
    assert.has_error(function() cmd:option('seed', 1) end, "CmdLine:option: the name must be a string starting with '-', got seed")
    assert.has_error(function() cmd:option('-x') end, 'CmdLine:option: option -x has no default value')
    assert.has_error(function() cmd:option('-x', 1, 'h', 'string') end,
                     'CmdLine:option: option -x has a number default, not a string')
    assert.has_error(function() cmd:option('-seed', 1) end, 'CmdLine:option: option -seed defined twice')
  end)

  it('prints the usage and exits 0 on --help and -h', function()
    local file = script([[
local cmd = torch.CmdLine()
cmd:text('A tool')
cmd:option('-lr', 0.1, 'learning rate')
cmd:argument('input', 'the input')
cmd:parse(arg)
print('not reached')
]])
    for _, flag in ipairs({'--help', '-h'}) do
      local ok, out = th.run(file .. ' ' .. flag)
      assert.is_true(ok, out)
      assert.are.equal('Usage: ' .. file .. ' [options] <input>\nA tool\n  -lr     learning rate [0.1]\n' ..
                       '  <input> the input\n', out)
    end
    os.remove(file)
  end)

  it('string names a run by its non-default options, as Torch7\'s', function()
    local cmd = command()
    local params = cmd:parse({'-seed', '456', '-stroption', 'mycustomstring'})
    params.dir = 'x'
    assert.are.equal('experiment,seed=456,stroption=mycustomstring', cmd:string('experiment', params, {dir = true}))
    assert.are.equal('experiment', cmd:string('experiment', cmd:parse({}), {}))
    params.booloption = true
    assert.are.equal('e,booloption=t,seed=456', cmd:string('e', params, {stroption = true}))
    assert.are.equal('e,batch-size=64,booloption=t,seed=456,stroption=mycustomstring',
                     cmd:string('e', params, {['batch-size'] = false}))
  end)

  it('log copies print to a file with the parameters, silent and addTime', function()
    local cmd = command()
    local name = os.tmpname()
    local saved = print
    local screen = {}
    _G.print = function(...) screen[#screen + 1] = table.concat({...}, '\t') end
    local ok, err = pcall(function()
      cmd:addTime('proj', '%Y')
      cmd:log(name, {seed = 1, a = 'x'})
      print('hello', 2)
      cmd:silent()
      print('only in the file')
    end)
    local logged = _G.print
    _G.print = saved
    assert(ok, err)
    assert.are_not.equal(saved, logged)
    local f = assert(io.open(name))
    local text = f:read('a')
    f:close()
    os.remove(name)
    local year = os.date('%Y')
    assert.truthy(text:find('^' .. year .. '%[proj%]: %[program started on [^\n]+%]\n'), text)
    assert.truthy(text:find('\n' .. year .. '[proj]: [command line arguments]\n' .. year .. '[proj]: a\tx\n' ..
                            year .. '[proj]: seed\t1\n' .. year .. '[proj]: [----------------------]\n' ..
                            year .. '[proj]: hello\t2\n' .. year .. '[proj]: only in the file\n', 1, true), text)
    assert.are.equal('hello\t2', screen[#screen])
  end)
end)

describe('paths', function()
  local root
  before_each(function()
    root = os.tmpname()
    os.remove(root)
    assert.is_true(paths.mkdir(root))
  end)
  after_each(function() paths.rmall(root, 'yes') end)

  it('names: concat, dirname, basename, extname, cwd, home', function()
    local cwd = paths.cwd()
    assert.are.equal(cwd, paths.concat())
    assert.are.equal(cwd .. '/a/c', paths.concat('a', 'b/../c', '.'))
    assert.are.equal('/x/y', paths.concat('a', '/x//y/'))
    assert.are.equal('a/b', paths.dirname('a/b/c'))
    assert.are.equal('.', paths.dirname('c'))
    assert.are.equal('/', paths.dirname('/c'))
    assert.are.equal('b.txt', paths.basename('a/b.txt'))
    assert.are.equal('b', paths.basename('a/b.txt', 'txt'))
    assert.are.equal('b', paths.basename('a/b.txt', '.txt'))
    assert.are.equal('b', paths.basename('/a/b/'))
    assert.are.equal('gz', paths.extname('a/b.tar.gz'))
    assert.is_nil(paths.extname('a.d/b'))
    assert.are.equal(os.getenv('HOME') or '.', paths.home)
    assert.has_error(function() paths.dirname(3) end, 'paths.dirname: expected a path (a string), got number')
  end)

  it('directories: mkdir, dirp, filep, dir, files, iterdirs, iterfiles, rmdir, rmall', function()
    assert.is_true(paths.dirp(root))
    assert.is_false(paths.filep(root))
    assert.is_true(paths.mkdir(root .. '/sub'))
    assert.is_nil((paths.mkdir(root .. '/sub')))
    io.open(root .. '/a.txt', 'w'):close()
    io.open(root .. '/sub/b.lua', 'w'):close()
    assert.is_true(paths.filep(root .. '/a.txt'))
    assert.is_false(paths.dirp(root .. '/a.txt'))
    assert.are.same({'.', '..', 'a.txt', 'sub'}, paths.dir(root))
    assert.is_nil(paths.dir(root .. '/none'))
    local function collect(it) local t = {} for x in it do t[#t + 1] = x end table.sort(t) return t end
    assert.are.same({'.', '..', 'a.txt', 'sub'}, collect(paths.files(root)))
    assert.are.same({'a.txt'}, collect(paths.files(root, '%.txt$')))
    assert.are.same({'sub'}, collect(paths.files(root, function(f) return f == 'sub' end)))
    assert.are.same({'sub'}, collect(paths.iterdirs(root)))
    assert.are.same({'a.txt'}, collect(paths.iterfiles(root)))
    assert.is_nil((paths.rmdir(root .. '/sub')))             -- not empty
    assert.are.same({nil, "missing second argument ('yes')"}, {paths.rmall(root .. '/sub')})
    assert.is_true(paths.rmall(root .. '/sub', 'yes'))
    assert.is_false(paths.dirp(root .. '/sub'))
    assert.is_true(paths.mkdir(root .. '/empty'))
    assert.is_true(paths.rmdir(root .. '/empty'))
  end)

  it('uname, is_win, is_mac, findprogram, tmpname, thisfile, dofile, require', function()
    local system = paths.uname()
    assert.are.equal(sys.execute('uname -s'), system)
    assert.are.equal(system == 'Darwin', paths.is_mac())
    assert.is_false(paths.is_win())
    assert.are.equal(sys.execute('command -v sh'), paths.findprogram('no-such-program-x', 'sh'))
    assert.is_nil(paths.findprogram('no-such-program-x'))
    local tmp = paths.tmpname()
    assert.is_true(paths.filep(tmp))
    os.remove(tmp)
    assert.are.equal(paths.concat('spec/torch7_util_spec.lua'), paths.thisfile())
    assert.are.equal(paths.concat('spec/x.lua'), paths.thisfile('x.lua'))
    local f = assert(io.open(root .. '/mod.lua', 'w'))
    f:write("return paths.dofile('two.lua') + 1\n")
    f:close()
    f = assert(io.open(root .. '/two.lua', 'w'))
    f:write('return 2\n')
    f:close()
    _G.paths = paths
    local ok, value = pcall(dofile, root .. '/mod.lua')
    _G.paths = nil
    assert(ok, value)
    assert.are.equal(3, value)
    assert.are.equal(paths, paths.require('paths'))
    assert.are.equal(require('lfs'), paths.require('lfs'))
  end)

  it('tmpname files are removed when th exits', function()
    local file = script("io.write(require('paths').tmpname())\n")
    local ok, out = th.run(file)
    os.remove(file)
    assert.is_true(ok, out)
    assert.is_false(paths.filep(out), out)
  end)
end)

describe('sys', function()
  it('execute and fexecute return the output, stderr too, trimmed', function()
    assert.are.equal('hi\nerr', sys.execute('echo hi; echo err >&2'))
    assert.are.equal('a b', sys.fexecute("printf '  a b \\n\\n'"))
    assert.are.equal('first', sys.fexecute('echo first; echo second', 'l'))
    assert.has_error(function() sys.execute(1) end, 'sys.execute: expected a shell command (a string), got number')
  end)

  it('clock, sleep, usleep, uname, split, isNaN, COLORS, dirname, concat', function()
    local t0 = sys.clock()
    sys.sleep(0.02)
    sys.usleep(10000)
    assert.is_true(sys.clock() - t0 >= 0.03)
    assert.has_error(function() sys.sleep(-1) end, 'sys.sleep: expected seconds >= 0, got -1')
    assert.has_error(function() sys.usleep('x') end, 'sys.usleep: expected a number of microseconds, got string')
    assert.are.equal(({Linux = 'linux', Darwin = 'macos'})[paths.uname()] or '?', sys.uname())
    assert.are.equal(sys.uname(), sys.OS)
    assert.are.same({'a', 'b', '', 'c'}, sys.split('a,b,,c', ','))
    assert.are.same({'a', 'b'}, sys.split(',a,b', ','))
    assert.is_true(sys.isNaN(0 / 0))
    assert.is_false(sys.isNaN(1))
    assert.are.equal('\27[0;31m', sys.COLORS.red)
    assert.are.equal(paths.dirname, sys.dirname)
    assert.are.equal(paths.concat, sys.concat)
    local dir, name = sys.fpath()
    assert.are.same({paths.concat('spec'), 'torch7_util_spec.lua'}, {dir, name})
  end)
end)

describe('xlua', function()
  it('progress draws a bar of current out of goal', function()
    local ok, out = th.run([[-e "local xlua = require 'xlua'; for i = 1, 20 do xlua.progress(i, 20) end" | cat]])
    assert.is_true(ok, out)
    assert.truthy(out:find(' 2/20 (10%)', 1, true), out)
    assert.truthy(out:find(' 20/20 (100%)', 1, true), out)
    assert.are.equal(10, select(2, out:gsub('\n', '')))
    assert.has_error(function() xlua.progress(1, 0) end, 'xlua.progress: expected (current, goal) with goal >= 1, got (1, 0)')
  end)

  it('print, formatTime, table2string', function()
    local out = written(xlua.print, {a = 1})
    assert.are.equal('{[a] = 1}\n', out)
    out = written(xlua.print, {s = string.rep('x', 50)})
    assert.are.equal('{[s] = ' .. string.rep('x', 40) .. ' ... }\n', out)
    assert.are.equal('3\n', (written(xlua.print, 3)))
    assert.are.equal('0ms', xlua.formatTime(0))
    assert.are.equal('3s250ms', xlua.formatTime(3.25))
    assert.are.equal('1h2m', xlua.formatTime(3725))
    assert.are.equal('1D1h', xlua.formatTime(90061))
    assert.are.equal('{1,"x",b={2},["c d"]=true}', xlua.table2string({1, 'x', b = {2}, ['c d'] = true}))
    assert.are.equal('{\n   1\n   a : 2\n}', xlua.table2string({1, a = 2}, true))
  end)

  it('require, installed, error, trycatch, envparams, unpack', function()
    assert.are.equal(paths, xlua.require('paths'))
    assert.is_false(xlua.require('no_such_module_x', true))
    assert.is_true((xlua.installed('paths')))
    assert.is_false((xlua.installed('no_such_module_x')))
    local ok, err = pcall(xlua.error, 'bad', 'dom', 'usage text')
    assert.is_false(ok)
    assert.truthy(err:find('\27[1;31m<dom> bad\27[0m\nusage text', 1, true), err)
    local caught
    xlua.trycatch(function() error('x', 0) end, function(e) caught = e end)
    assert.are.equal('x', caught)
    assert.are.same({HOME = os.getenv('HOME'), NO_SUCH_VAR_X = 3}, xlua.envparams({HOME = 'h', NO_SUCH_VAR_X = 3}))
    local defs = {{arg = 'x', type = 'number', help = 'x', default = 1}, {arg = 'y', type = 'number', help = 'y', req = true}}
    local args, x, y = xlua.unpack({{y = 3}}, 'f', 'desc', table.unpack(defs))
    assert.are.same({1, 3, 1, 3}, {x, y, args.x, args.y})
    args, x, y = xlua.unpack({5, 6}, 'f', 'desc', table.unpack(defs))
    assert.are.same({5, 6}, {x, y})
    ok, err = pcall(function() xlua.unpack({}, 'f', 'desc', table.unpack(defs)) end)
    assert.truthy(err:find('missing argument: y\nf\n\ndesc\n\nusage:\nf{\n', 1, true), err)
  end)

  it('adds string.split, table.splice and table.prune', function()
    assert.are.same({'a', 'b', 'c'}, ('a b c'):split(' '))
    assert.are.same({{1, 4}, {2, 3}}, {table.splice({1, 2, 3, 4}, 2, 2)})
    assert.are.same({1, 2, 3}, table.prune({1, 2, 1, 3, 2}))
    assert.are.same({{k = 1, n = 3}}, table.prune({{k = 1, n = 1}, {k = 1, n = 2}}, function(v) return v.k end,
                                                 function(new, kept) return {k = new.k, n = new.n + kept.n} end))
  end)
end)
