-- th_spec.lua: the th program -- script mode as lua5.4 (arg, -e, -l, -, -i,
-- --version, --help, exit status, errors on stderr) and the REPL driven
-- through a pseudo-terminal (expression printing, multi-line input, errors
-- and Ctrl-C that leave the session running, history).

local TH = dofile('spec/support/th.lua').path()

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local function tmpname()
  local name = os.tmpname()
  os.remove(name)
  return name
end

local function write_file(path, text)
  local f = assert(io.open(path, 'w'))
  f:write(text)
  f:close()
end

local function read_file(path)
  local f = io.open(path, 'r')
  if not f then return '' end
  local s = f:read('a')
  f:close()
  return s
end

-- Runs a shell command line; returns stdout, stderr and the exit code.
local function run(cmdline, stdin)
  local err = tmpname()
  if stdin then
    local input = tmpname()
    write_file(input, stdin)
    cmdline = cmdline .. ' < ' .. input
  end
  local p = assert(io.popen(cmdline .. ' 2> ' .. err, 'r'))
  local out = p:read('a')
  local _, _, code = p:close()
  local errtext = read_file(err)
  os.remove(err)
  return out, errtext, code
end

local function th(args, stdin) return run(shell_quote(TH) .. ' ' .. args, stdin) end

local function lines_of(text)
  local lines = {}
  for l in (text .. '\n'):gmatch('([^\n]*)\n') do lines[#lines + 1] = l end
  return lines
end

local function has_line(text, wanted)
  for _, l in ipairs(lines_of(text)) do if l == wanted then return true end end
  return false
end

describe('th scripts', function()
  local dir

  setup(function()
    dir = tmpname()
    os.execute('mkdir -p ' .. shell_quote(dir))
  end)

  teardown(function() os.execute('rm -rf ' .. shell_quote(dir)) end)

  it('exists', function()
    local f = io.open(TH, 'rb')
    assert.is_truthy(f, 'th not found at ' .. TH .. ' (set TH_BIN)')
    f:close()
  end)

  it('runs a script with its arguments in arg and ...', function()
    local script = dir .. '/args.lua'
    write_file(script, 'print(#arg, arg[0], arg[1], arg[2], select("#", ...), ...)\n' ..
                       'print(arg[-1] ~= nil)\n')
    local out, err, code = th(shell_quote(script) .. ' a "b c"')
    assert.are.equal(0, code, err)
    local lines = lines_of(out)
    assert.are.equal('2\t' .. script .. '\ta\tb c\t2\ta\tb c', lines[1])
    assert.are.equal('true', lines[2])
  end)

  it('has torch loaded before anything runs', function()
    local out, err, code = th([[-e 'print(torch.type(torch.ones(2)))']])
    assert.are.equal(0, code, err)
    assert.are.equal('torch.FloatTensor\n', out)
  end)

  it('runs -e chunks in order, then the script', function()
    local script = dir .. '/after.lua'
    write_file(script, 'print(x * 10)\n')
    local out, err, code = th([[-e 'x = 2' -e 'x = x + 1' ]] .. shell_quote(script))
    assert.are.equal(0, code, err)
    assert.are.equal('30\n', out)
  end)

  it('loads a library with -l mod and -l g=mod', function()
    write_file(dir .. '/thspecmod.lua', 'return {value = 42}\n')
    local path = "-e 'package.path = \"" .. dir .. "/?.lua;\" .. package.path'"
    local out, err, code = th(path .. [[ -l thspecmod -e 'print(thspecmod.value)']])
    assert.are.equal(0, code, err)
    assert.are.equal('42\n', out)
    out, err, code = th(path .. [[ -l m=thspecmod -e 'print(m.value)']])
    assert.are.equal(0, code, err)
    assert.are.equal('42\n', out)
    out, err, code = th([[-l no_such_module_here]])
    assert.are_not.equal(0, code)
    assert.truthy(err:find("module 'no_such_module_here' not found", 1, true), err)
  end)

  it('runs stdin with - (arguments after it) and when stdin is not a terminal', function()
    local out, err, code = th('- x y', 'print("stdin", ...)\n')
    assert.are.equal(0, code, err)
    assert.are.equal('stdin\tx\ty\n', out)
    out, err, code = th('', 'print(6 * 7)\n')
    assert.are.equal(0, code, err)
    assert.are.equal('42\n', out)
  end)

  it('prints its version and its help', function()
    local out, err, code = th('--version')
    assert.are.equal(0, code, err)
    assert.truthy(out:match('^moontorch %S+ %(Lua 5%.4'), out)
    out, err, code = th('-v')
    assert.are.equal(0, code, err)
    assert.truthy(out:find('moontorch', 1, true))
    out, err, code = th('--help')
    assert.are.equal(0, code, err)
    assert.truthy(out:find('usage: th', 1, true))
    for _, opt in ipairs({'-e stat', '-i', '-l mod', '--version', '-'}) do
      assert.truthy(out:find('  ' .. opt, 1, true), opt)
    end
  end)

  it('rejects unknown options with the usage on stderr', function()
    local out, err, code = th('--no-such-option')
    assert.are.equal(1, code)
    assert.are.equal('', out)
    assert.truthy(err:find("unrecognized option '--no-such-option'", 1, true), err)
    assert.truthy(err:find('usage:', 1, true))
    _, err, code = th('-e')
    assert.are.equal(1, code)
    assert.truthy(err:find("'-e' needs an argument", 1, true), err)
  end)

  it('exits 1 with the message and a traceback on stderr when a script fails', function()
    local script = dir .. '/fail.lua'
    write_file(script, 'local function inner() error("boom") end\ninner()\nprint("not reached")\n')
    local out, err, code = th(shell_quote(script))
    assert.are.equal(1, code)
    assert.are.equal('', out)
    assert.truthy(err:find('th: ' .. script .. ':1: boom', 1, true), err)
    assert.truthy(err:find('stack traceback:', 1, true), err)
    assert.truthy(err:find("in local 'inner'", 1, true) or err:find("in upvalue 'inner'", 1, true) or
                  err:find("inner", 1, true), err)
  end)

  it('reports tensor errors from C the same way', function()
    local out, err, code = th([[-e 'local y = torch.zeros(2, 3) + torch.zeros(4)']])
    assert.are.equal(1, code)
    assert.are.equal('', out)
    assert.truthy(err:find('add: shapes 2x3 and 4 cannot broadcast', 1, true), err)
    assert.truthy(err:find('stack traceback:', 1, true), err)
  end)

  it('exits 1 on syntax errors and a missing script', function()
    local script = dir .. '/syntax.lua'
    write_file(script, 'x = = 1\n')
    local _, err, code = th(shell_quote(script))
    assert.are.equal(1, code)
    assert.truthy(err:find(script .. ':1:', 1, true), err)
    _, err, code = th(shell_quote(dir .. '/missing.lua'))
    assert.are.equal(1, code)
    assert.truthy(err:find('cannot open', 1, true), err)
  end)

  it('passes os.exit codes through', function()
    local _, _, code = th([[-e 'os.exit(3)']])
    assert.are.equal(3, code)
    _, _, code = th([[-e 'os.exit(true)']])
    assert.are.equal(0, code)
  end)

  it('enters the REPL after the script with -i', function()
    local script = dir .. '/i.lua'
    write_file(script, 'z = 41\n')
    local out, err, code = th('-i ' .. shell_quote(script), 'z + 1\nprint("done")\n')
    assert.are.equal(0, code, err)
    assert.truthy(has_line(out, '42'), out)
    assert.truthy(has_line(out, 'done'), out)
  end)
end)

-- ---- the REPL through a pseudo-terminal ----

-- script(1) gives th a terminal; the input is fed in steps (text, then a
-- pause) so that a Ctrl-C arrives while a loop runs. script runs its command
-- through $SHELL -c; `exec` takes that shell out of the terminal's process
-- group, or a Ctrl-C kills a shell that does not wait it out (dash does not)
-- and script reports 130 whatever th did.
local function have(cmd) return os.execute('command -v ' .. cmd .. ' > /dev/null 2>&1') == true end

local function repl_session(steps, home, env)
  local feed = {}
  for _, step in ipairs(steps) do
    feed[#feed + 1] = 'printf ' .. shell_quote(step[1]:gsub('%%', '%%%%'))
    feed[#feed + 1] = 'sleep ' .. (step[2] or 0.2)
  end
  local cmd = '(' .. table.concat(feed, '; ') .. ') | ' .. (env or '') .. ' HOME=' .. shell_quote(home) ..
              ' script -qfec ' .. shell_quote('exec ' .. shell_quote(TH)) .. ' /dev/null'
  local raw, _, code = run(cmd)
  -- drop terminal control sequences and carriage returns
  local out = raw:gsub('\27%[[%d;?]*[%a@]', ''):gsub('\r', '')
  return out, code, raw
end

describe('th REPL', function()
  local home
  local pty = have('script')

  setup(function()
    home = tmpname()
    os.execute('mkdir -p ' .. shell_quote(home))
  end)

  teardown(function() os.execute('rm -rf ' .. shell_quote(home)) end)

  it('prints expressions, continues statements and survives errors and Ctrl-C', function()
    if not pty then
      pending('script(1) from util-linux is not installed: REPL session not checked')
      return
    end
    local out, code = repl_session({
      {'x = torch.ones(2, 3)\n', 1.0},                -- th starts meanwhile
      {'x\n'},
      {'1 + 1\n'},
      {'=2 * 21\n'},
      {'for i = 1, 2 do\n'},
      {'print("line " .. i)\n'},
      {'end\n'},
      {'error("boom")\n'},
      {'print("still" .. " here")\n'},
      {'while true do end\n', 1.0},
      {'\3', 0.5},                                   -- Ctrl-C stops the loop
      {'print("after" .. " interrupt")\n', 0.5},
      {'abandoned = 1', 0.5},
      {'\3', 0.4},                                   -- Ctrl-C drops the line
      {'abandoned\n'},
    }, home)
    assert.are.equal(0, code, out)
    assert.truthy(out:find(' 1  1  1\n 1  1  1\n[torch.FloatTensor of size 2x3]', 1, true), out)
    assert.truthy(has_line(out, '2'), out)
    assert.truthy(has_line(out, '42'), out)
    assert.truthy(out:find('>>  print', 1, true), 'continuation prompt:\n' .. out)
    assert.truthy(has_line(out, 'line 1') and has_line(out, 'line 2'), out)
    assert.truthy(has_line(out, 'stdin:1: boom'), out)
    assert.truthy(out:find('stack traceback:', 1, true), out)
    assert.truthy(has_line(out, 'still here'), out)
    assert.truthy(out:find('interrupted!', 1, true), out)
    assert.truthy(has_line(out, 'after interrupt'), out)
    assert.truthy(has_line(out, 'nil'), 'Ctrl-C at the prompt drops the line:\n' .. out)
  end)

  it('completes names, times code, shows help and prints tables, modules and large tensors', function()
    if not pty then
      pending('script(1) from util-linux is not installed: REPL session not checked')
      return
    end
    local out, code = repl_session({
      {'x = torch.ones(2); nn = require "nn"\n', 1.0},
      {'x:nar\t1, 1, 1)\n', 0.15},                  -- one candidate: narrow, with its '('
      {'torch.manual_se\t(3)\n', 0.15},
      {'nn.LogSi\t\n', 0.15},
      {'m = nn.Linear(2, 3)\n', 0.15},
      {'m:zero_gr\t)\n', 0.15},                     -- inherited from nn.Module
      {'x.is_le\t\n', 0.15},                         -- a tensor field
      {'hits = 0; t = setmetatable({}, {__index = function() hits = hits + 1 end})\n', 0.15},
      {'t.abc\t', 0.3},
      {'\3', 0.3},                                  -- drop the line: only completion ran
      {'hits\n', 0.15},
      {'%time x + 1\n', 1.0},
      {'?torch.timeit\n', 0.15},
      {'?torch.mm\n', 0.15},
      {'?x:narrow\n', 0.15},
      {'{1, "a", t = {1, {2}}, x = torch.ones(2), m = nn.ReLU()}\n', 0.15},
      {'nn.Sequential(nn.Linear(2, 3), nn.ReLU())\n', 0.15},
      {'torch.arange(0, 2000):view(40, 50)\n'},
    }, home, 'NO_COLOR=1')
    assert.are.equal(0, code, out)
    assert.truthy(out:find('x:narrow(1, 1, 1)', 1, true), 'completion of x:nar:\n' .. out)
    assert.truthy(out:find('torch.manual_seed(3)', 1, true), 'completion of torch.manual_se:\n' .. out)
    assert.truthy(out:find('th> nn.LogSigmoid\nnn.LogSigmoid\n', 1, true), 'completion of nn.LogSi:\n' .. out)
    assert.truthy(out:find('m:zero_grad()', 1, true), 'completion of m:zero_gr:\n' .. out)
    assert.truthy(out:find('th> x.is_leaf\ntrue\n', 1, true), 'completion of x.is_le:\n' .. out)
    assert.truthy(out:find('th> hits\n0\n', 1, true), 'completion ran an __index function:\n' .. out)
    assert.truthy(out:find('%d+%.%d+ [nu]s per run %(mean of %d+ runs%)'), out)
    assert.truthy(out:find('torch.timeit(fn, {repeat=n}): seconds per call', 1, true), out)
    assert.truthy(out:find('th> ?torch.mm\ntorch.mm(a, b), a:mm(b)\n  The matrix product', 1, true), out)
    assert.truthy(out:find('th> ?x:narrow\ntorch.narrow(x, dim, start, length), x:narrow(', 1, true), out)
    assert.truthy(has_line(out, '{1, "a", m = nn.ReLU, t = table (2 entries), x = torch.FloatTensor of size 2}'), out)
    assert.truthy(out:find('Sequential(\n  (1): Linear(in_features=2, out_features=3, bias=true)\n' ..
                           '  (2): ReLU()\n)\n', 1, true), out)
    assert.truthy(out:find('    0     1     2   ...    47    48    49\n', 1, true), out)
    assert.truthy(out:find('[torch.LongTensor of size 40x50]', 1, true), out)
    assert.falsy(out:find('1000  1001', 1, true), 'a large tensor is summarized:\n' .. out)
  end)

  it('colours its output on a terminal unless NO_COLOR is set', function()
    if not pty then
      pending('script(1) from util-linux is not installed: REPL colours not checked')
      return
    end
    local steps = {{'torch.ones(2)\n', 1.0}, {'error("red")\n'}, {'6 * 7\n'}}
    local _, _, raw = repl_session(steps, home, 'TERM=xterm')
    assert.truthy(raw:find('\27[36m[torch.FloatTensor of size 2]\27[0m', 1, true), raw)
    assert.truthy(raw:find('\27[31mstdin:1: red', 1, true), raw)
    assert.truthy(raw:find('\27[33m42\27[0m', 1, true), raw)
    local _, _, plain = repl_session(steps, home, 'TERM=xterm NO_COLOR=1')
    assert.falsy(plain:find('\27[36m', 1, true), plain)
    assert.falsy(plain:find('\27[31m', 1, true), plain)
    assert.falsy(plain:find('\27[33m', 1, true), plain)
  end)

  it('keeps a history in ~/.th_history', function()
    if not pty then
      pending('script(1) from util-linux is not installed: REPL history not checked')
      return
    end
    local _, code = repl_session({{'history_probe = 7\n'}, {'for i = 1, 1 do\nend\n'}}, home)
    assert.are.equal(0, code)
    local hist = read_file(home .. '/.th_history')
    assert.truthy(hist:find('history_probe = 7', 1, true), hist)
    assert.truthy(hist:find('for i = 1, 1 do\nend', 1, true), hist)
  end)
end)

-- ---- %time's repeat count, on a clock that only the timed function moves ----

describe('torch.timeit', function()
  local torch = require 'torch'

  -- Times fn on a fake clock where each call takes `cost` seconds; returns
  -- timeit's answer and how many calls it made in all.
  local function timed(cost, opts)
    local now, calls, real = 0, 0, torch.clock
    torch.clock = function() return now end
    local ok, per, reps = pcall(torch.timeit, function() calls = calls + 1; now = now + cost end, opts)
    torch.clock = real
    assert(ok, per)
    return per, reps, calls
  end

  it('times enough calls of a fast function to take about 0.2 s', function()
    local per, reps, calls = timed(1e-6)
    assert.is_true(math.abs(per - 1e-6) < 1e-12, tostring(per))
    assert.is_true(reps >= 190000 and reps <= 210000, tostring(reps))
    assert.is_true(calls - reps < 0.25 * reps, 'calibration took ' .. calls - reps .. ' calls')
  end)

  it('calls a slow function once and honours repeat', function()
    local per, reps, calls = timed(0.5)
    assert.are.same({0.5, 1, 1}, {per, reps, calls})
    per, reps, calls = timed(1e-3, {['repeat'] = 7})
    assert.are.same({7, 8}, {reps, calls})
    assert.is_true(math.abs(per - 1e-3) < 1e-12, tostring(per))
    per, reps = timed(0.03)
    assert.are.equal(7, reps)
    assert.is_true(math.abs(per - 0.03) < 1e-12, tostring(per))
  end)
end)
