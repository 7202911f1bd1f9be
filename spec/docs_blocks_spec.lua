-- docs_blocks_spec.lua: every code block of README.md and docs/*.md (docs/reference.md is
-- generated) runs, and prints what the page shows. The convention (docs/architecture.md,
-- "Code blocks in the docs"):
--   ```lua         runs. Its output, when shown, is either the ```text block right after it
--                  (blank lines between, or a paragraph ending in "prints:") or the lines'
--                  `--> text` comments, in order; shown output must match exactly (trailing
--                  spaces aside; a printed tab may be shown as two or more spaces; a line
--                  holding only `...` stands for any number of lines). A block that shows
--                  no output runs, its output not compared (times, random values).
--   ```lua with th> lines: a transcript of the th prompt, fed to `th -i` line by line and
--                  compared with the whole block (tracebacks after an error are not shown).
--   ```lua fragment  needs names defined elsewhere on the page (a model, a loader): compiled
--                  (each th> line of a transcript), not run.
--   ```lua no-run    complete, but not run here: it trains, needs a GPU, files or a command
--                  line, or fails on purpose. Compiled.
--   a ```lua block inside an HTML comment (<!-- ... -->, not shown): a setup block, run where
--                  it stands, its output not compared: it defines what the next blocks use.
--   ```text, ```sh, ```c: output, shell commands and C, never run. A fence with no language
--                  or another one fails this spec: every block is run or marked knowingly.
-- The blocks of one page run in order in one fresh `th -i` process (in a scratch directory),
-- sharing globals as lines at the prompt do; a block's locals are its own.
local lfs = require 'lfs'

local ROOT = lfs.currentdir()
local TH = dofile('spec/support/th.lua').path()      -- the th beside the core.so busted loads
if TH:sub(1, 1) ~= '/' then TH = ROOT .. '/' .. TH:gsub('^%./', '') end
local LANGS = {lua = true, text = true, sh = true, c = true}
local FLAGS = {fragment = true, ['no-run'] = true}

local function rtrim(s) return (s:gsub('%s+$', '')) end

-- the pages: README.md and docs/*.md but the generated reference
local function pages()
  local list = {'README.md'}
  local docs = {}
  for f in lfs.dir(ROOT .. '/docs') do
    if f:match('%.md$') and f ~= 'reference.md' then docs[#docs + 1] = 'docs/' .. f end
  end
  table.sort(docs)
  for _, f in ipairs(docs) do list[#list + 1] = f end
  return list
end

-- parse(path): the page's fenced blocks, in order: {line=, lang=, flags={}, lines={}, info=,
-- output= (lines shown for a lua block), transcript=true|nil, setup=true|nil (in an HTML
-- comment), output_of= (for an output block)}; and the problems found
local function parse(path, file)
  local lines = {}
  for l in io.lines(file or ROOT .. '/' .. path) do lines[#lines + 1] = l end
  local blocks, problems = {}, {}
  local i = 1
  local last_lua, between = nil, {}     -- the lua block an output block may follow, prose since
  local hidden = false                  -- inside an HTML comment: a setup block
  while i <= #lines do
    local indent, info = lines[i]:match('^(%s*)```%s*(.-)%s*$')
    if not indent then
      local l = lines[i]
      if hidden then
        if l:find('-->', 1, true) then hidden = false end
      elseif l:match('^%s*<!%-%-') and not l:find('-->', 1, true) then
        hidden = true
      end
    end
    if indent then
      local b = {line = i, info = info, lines = {}, flags = {}, setup = hidden or nil}
      local words = {}
      for w in info:gmatch('%S+') do words[#words + 1] = w end
      b.lang = words[1]
      for k = 2, #words do b.flags[words[k]] = true end
      i = i + 1
      while i <= #lines and not lines[i]:match('^%s*```%s*$') do
        local l = lines[i]
        if l:sub(1, #indent) == indent then l = l:sub(#indent + 1) end
        b.lines[#b.lines + 1] = l
        i = i + 1
      end
      if i > #lines then problems[#problems + 1] = ('%s:%d: an unclosed ``` block'):format(path, b.line) end
      local where = ('%s:%d'):format(path, b.line)
      if not b.lang then
        problems[#problems + 1] = where .. ': a ``` block with no language: tag it lua, text, sh or c'
      elseif not LANGS[b.lang] then
        problems[#problems + 1] = ('%s: a ```%s block: the docs use lua, text, sh or c'):format(where, b.lang)
      end
      for k = 2, #words do
        if b.lang ~= 'lua' or not FLAGS[words[k]] then
          problems[#problems + 1] = ('%s: unknown mark %q after ```%s (lua blocks take fragment or no-run)')
            :format(where, words[k], b.lang or '')
        end
      end
      if b.lang == 'lua' then
        for _, l in ipairs(b.lines) do
          if l:match('%S') then b.transcript = l:match('^th> ') ~= nil; break end
        end
      end
      if b.setup then
        if b.lang ~= 'lua' or b.transcript or next(b.flags) then
          problems[#problems + 1] = where .. ': a block in an HTML comment is a setup block: a plain ```lua script'
        end
        for _, l in ipairs(b.lines) do
          if l:find('-->', 1, true) then
            problems[#problems + 1] = where .. ': a setup block may not hold --> (it ends the HTML comment)'
          end
        end
      end
      -- an output block: ```text right after a lua script block
      local prose = {}
      for _, l in ipairs(between) do if l:match('%S') then prose[#prose + 1] = l end end
      if b.setup then
        last_lua = nil
      elseif b.lang == 'text' and last_lua and (#prose == 0 or rtrim(prose[#prose]):match('prints:$')) then
        if last_lua.output then
          problems[#problems + 1] = where .. ': an output block for a lua block that has --> comments'
        end
        last_lua.output = b.lines
        b.output_of = last_lua
        last_lua = nil
      else
        last_lua = (b.lang == 'lua' and not b.transcript) and b or nil
      end
      between = {}
      blocks[#blocks + 1] = b
    else
      between[#between + 1] = lines[i]
    end
    i = i + 1
  end
  for _, b in ipairs(blocks) do
    if b.lang == 'lua' and not b.transcript and not b.setup then
      local shown = {}
      for _, l in ipairs(b.lines) do
        local out = l:match('%-%->%s?(.*)$')
        if out then shown[#shown + 1] = out end
      end
      if #shown > 0 then
        if b.output then
          problems[#problems + 1] = ('%s:%d: both --> comments and an output block'):format(path, b.line)
        end
        b.output = shown
      end
    end
  end
  return blocks, problems
end

-- the th> and >> lines of a transcript: what is typed at the prompt
local function inputs(b)
  local typed = {}
  for _, l in ipairs(b.lines) do
    local s = l:match('^th> (.*)$') or l:match('^>>  (.*)$')
    if s then typed[#typed + 1] = s end
  end
  return typed
end

-- compiles(b): nil, or why a lua block does not compile
local function compiles(b, path)
  if b.transcript then
    -- each statement typed, as th reads it: "return <line>" first; th's own words
    -- (?name, %time code, =expr, help) are th's, not Lua's
    local stmts, err = {}, nil
    for _, l in ipairs(b.lines) do
      if l:match('^th> ') then stmts[#stmts + 1] = {l:sub(5)}
      elseif l:match('^>>  ') and #stmts > 0 then table.insert(stmts[#stmts], l:sub(5)) end
    end
    for _, stmt in ipairs(stmts) do
      local code = table.concat(stmt, '\n'):gsub('^=', '')
      code = code:gsub('^%%time%s+', '')
      if not (code:match('^%?') or code:match('^%s*help%s*$') or load('return ' .. code .. ';')) then
        local _
        _, err = load(code, '=' .. path)
        if err then return err end
      end
    end
    return nil
  end
  local _, err = load(string.rep('\n', b.line) .. table.concat(b.lines, '\n'), '@' .. path)
  return err
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

local DRIVER = [[
-- runs block n of the page (its code in block<n>.lua, padded to the page's lines)
local dir, page = ...
arg = {[0] = 'script.lua'}
-- a block sees what a script sees: the globals, not the prompt's lazy nn, optim and data
-- (lib/torch/repl.lua); the page's blocks (transcripts too) share the globals they set
local G = _G
local env = setmetatable({}, {__index = function(_, k) return rawget(G, k) end,
                             __newindex = function(_, k, v) rawset(G, k, v) end})
function __docblock(n)
  local f = assert(io.open(dir .. '/block' .. n .. '.lua', 'rb'))
  local code = f:read('a')
  f:close()
  local chunk, err = load(code, '@' .. page, 't', env)
  if chunk then
    local ok, e = xpcall(chunk, function(m) return tostring(m) end)
    if not ok then err = e end
  end
  io.stdout:flush()
  if err then print('\1error\1 ' .. err) end
end
]]

-- run(path, blocks): runs the page's runnable blocks in one th -i; returns the output of
-- each, by block index, and the whole output
local function run(path, blocks)
  local dir = os.tmpname()
  os.remove(dir)
  assert(lfs.mkdir(dir))
  local work = dir .. '/work'
  assert(lfs.mkdir(work))
  local driver = assert(io.open(dir .. '/driver.lua', 'w'))
  driver:write(DRIVER)
  driver:close()
  local typed = {}
  for n, b in ipairs(blocks) do
    if b.lang == 'lua' and not b.flags.fragment and not b.flags['no-run'] then
      typed[#typed + 1] = '--@@block ' .. n
      if b.transcript then
        for _, l in ipairs(inputs(b)) do typed[#typed + 1] = l end
      else
        local f = assert(io.open(dir .. '/block' .. n .. '.lua', 'w'))
        f:write(string.rep('\n', b.line), table.concat(b.lines, '\n'), '\n')
        f:close()
        typed[#typed + 1] = '__docblock(' .. n .. ')'
      end
    end
  end
  local stdin = assert(io.open(dir .. '/stdin', 'w'))
  stdin:write(table.concat(typed, '\n'), '\n')
  stdin:close()
  -- th's prompt echoes each typed line (readline, reading a file); a plain terminal that is
  -- wide, so that a long line is echoed whole rather than scrolled
  local cmd = ('cd %s && env -u TH_DIALECT HOME=%s NO_COLOR=1 TERM=dumb COLUMNS=4096 INPUTRC=/dev/null timeout 60 %s -i %s %s %s < %s 2>&1'):format(
    shell_quote(work), shell_quote(dir), shell_quote(TH), shell_quote(dir .. '/driver.lua'),
    shell_quote(dir), shell_quote(path), shell_quote(dir .. '/stdin'))
  local p = assert(io.popen(cmd))
  local all = p:read('a')
  p:close()
  os.execute('rm -rf ' .. shell_quote(dir))
  local outs, current = {}, nil
  for l in (all .. '\n'):gmatch('(.-)\n') do
    local n = l:match('^th> %-%-@@block (%d+)$')
    if n then
      current = {}
      outs[tonumber(n)] = current
    elseif current then
      current[#current + 1] = l
    end
  end
  return outs, all
end

-- what a block printed, as the page would show it: the __docblock line, tracebacks and the
-- last prompt left out; trailing spaces trimmed
local function shown(lines, b)
  local out, skipping = {}, false
  for k, l in ipairs(lines) do
    if skipping and l:match('^\t') then
      -- a traceback's frame
    elseif l == 'stack traceback:' then
      skipping = true
    else
      skipping = false
      if not (k == 1 and not b.transcript and l:match('^th> __docblock%(')) then out[#out + 1] = rtrim(l) end
    end
  end
  while #out > 0 and (out[#out] == 'th>' or out[#out] == '') do out[#out] = nil end
  return out
end

local function line_eq(actual, expected)
  if actual == expected then return true end
  -- a tab printed may be shown as a run of spaces
  local pattern = actual:gsub('[%^%$%(%)%%%.%[%]%*%+%-%?]', '%%%0'):gsub('\t', '%%s%%s+')
  return expected:match('^' .. pattern .. '$') ~= nil
end

-- matches(actual, expected): whether the lines agree; `...` in expected takes any lines
local function matches(actual, expected, i, j)
  i, j = i or 1, j or 1
  if j > #expected then return i > #actual end
  if expected[j] == '...' then
    for k = i, #actual + 1 do
      if matches(actual, expected, k, j + 1) then return true end
    end
    return false
  end
  if i > #actual or not line_eq(actual[i], expected[j]) then return false end
  return matches(actual, expected, i + 1, j + 1)
end

local function expected_of(b)
  local e = {}
  for _, l in ipairs(b.transcript and b.lines or b.output) do e[#e + 1] = rtrim(l) end
  while #e > 0 and e[#e] == '' do e[#e] = nil end
  return e
end

-- check(where, b, lines, all): raises unless block b's output `lines` is what the page shows
local function check(where, b, lines, all)
  assert(lines, 'no output from the block (th died before it?):\n' .. all)
  local out = shown(lines, b)
  for _, l in ipairs(out) do
    local err = l:match('^\1error\1 (.*)$')
    if err then error(where .. ': the block raised: ' .. err, 0) end
  end
  if b.transcript or b.output then
    local expected = expected_of(b)
    if not matches(out, expected) then
      error(('%s: the page shows\n%s\n\n-- but th prints --\n%s'):format(where,
            table.concat(expected, '\n'), table.concat(out, '\n')), 0)
    end
  end
end

-- checks(path, text): the problems of a page holding text, and each lua block's verdict
-- (true, or the failure's message), for the runner's own tests
local function checks(path, text)
  local file = os.tmpname()
  local f = assert(io.open(file, 'w'))
  f:write(text)
  f:close()
  local blocks, problems = parse(path, file)
  os.remove(file)
  local outs, all = run(path, blocks)
  local verdicts = {}
  for n, b in ipairs(blocks) do
    if b.lang == 'lua' then
      if b.flags.fragment or b.flags['no-run'] then
        verdicts[#verdicts + 1] = compiles(b, path) or true
      else
        local ok, err = pcall(check, ('%s:%d'):format(path, b.line), b, outs[n], all)
        verdicts[#verdicts + 1] = ok or err
      end
    end
  end
  return problems, verdicts
end

describe('the docs-blocks runner', function()
  it('passes blocks that print what they show, and fails those that do not', function()
    local problems, v = checks('page.md', table.concat({
      '```lua', 'x = torch.tensor({1, 2})', "print(x:sum():item(), 'a')   --> 3  a", '```',
      'It prints:', '', '```lua', 'print(#x)', "print(#'abc')", '```', '', 'prints:', '',
      '```text', '1', '3', '```',
      '```lua', 'th> x', ' 1', '...', 'th> x[0]',
      'stdin:1: index: index 0 out of range for dim 1 of size 2 (indices are 1-based)',
      'th> for i = 1, 2 do', '>>  print(i) end', '1', '2', '```',
      '```lua', "error('boom')", '```',
      '```lua fragment', 'train(model)', '```',
      '```lua no-run', 'for x in y do ... end', '```',
      '```', 'untagged', '```',
      '```python', 'print(1)', '```', ''}, '\n'))
    assert.are.same({'page.md:38: a ``` block with no language: tag it lua, text, sh or c',
                     'page.md:41: a ```python block: the docs use lua, text, sh or c'}, problems)
    assert.are.equal(true, v[1])                        -- --> comments, a tab shown as spaces
    assert.matches('page.md:7: the page shows\n1\n3\n\n%-%- but th prints %-%-\n2\n3$', v[2])
    assert.are.equal(true, v[3])                        -- a transcript: ..., an error, >> lines
    assert.are.equal('page.md:29: the block raised: page.md:30: boom', v[4])
    assert.are.equal(true, v[5])                        -- a fragment compiles
    assert.matches("page.md:36: unexpected symbol near '...'", v[6], 1, true)
  end)

  it('runs a page in one process: later blocks, transcripts too, see earlier globals', function()
    local _, v = checks('page.md', table.concat({
      '```lua', 'y = 5', 'local hidden = 1', '```',
      '```lua', 'th> y', '5', 'th> hidden', 'nil',
      'th> y + 1' .. string.rep(' ', 100) .. '-- a line wider than a terminal', '6', '```',
      '```lua', 'print(y + 1, nn)  --> 6  nil', '```', ''}, '\n'))
    assert.are.same({true, true, true}, v)
  end)

  it('runs a setup block hidden in an HTML comment before the blocks that need it', function()
    local problems, v = checks('page.md', table.concat({
      '<!-- setup, not shown:', '```lua', 'model = {size = 3}', '```', '-->', '',
      '```lua', 'print(model.size)  --> 3', '```',
      '<!--', '```lua', 'x = 1  --> 1', '```', '-->', ''}, '\n'))
    assert.are.same({'page.md:11: a setup block may not hold --> (it ends the HTML comment)'}, problems)
    assert.are.same({true, true}, {v[1], v[2]})
  end)
end)

describe("the README's words", function()
  it('where the FashionMNIST data comes from, and what a user without it sees', function()
    local f = assert(io.open(ROOT .. '/README.md'))
    local readme = f:read('a'):gsub('%s+', ' ')
    f:close()
    local said = readme:match('stops with `(data%.FashionMNIST: none of [^`]+)`')
    assert.truthy(said, 'the README quotes the error')
    assert.truthy(readme:find("Debian's `dataset-fashion-mnist` package", 1, true))
    local deps = assert(io.open(ROOT .. '/scripts/deps.sh')):read('a')
    assert.truthy(deps:find('dataset-fashion-mnist', 1, true), 'scripts/deps.sh installs it')
    -- a machine without the package: the files are not found where the package puts them
    local script = os.tmpname()
    local w = assert(io.open(script, 'w'))
    w:write([[
local open = io.open
io.open = function(p, ...) if p:find('/usr/share/datasets/fashion-mnist', 1, true) then return nil end return open(p, ...) end
local data = require 'data'
local ok, err = pcall(data.FashionMNIST, {train = true})
print(ok, err)
]])
    w:close()
    local p = io.popen(TH .. ' ' .. script .. ' 2>&1')
    local out = p:read('a')
    p:close()
    os.remove(script)
    assert.truthy(out:find('false\t', 1, true), out)
    assert.truthy(out:find(said, 1, true), out)
    assert.truthy(out:find('apt-get install dataset-fashion-mnist', 1, true), out)
  end)

  it('names only libraries that exist, and no path outside the clone', function()
    local f = assert(io.open(ROOT .. '/README.md'))
    local readme = f:read('a')
    f:close()
    assert.falsy(readme:find('../shared', 1, true))
    for lib in readme:gmatch('`([%w_]+)`') do
      if ({nn = 1, optim = 1, data = 1, nngraph = 1, paths = 1, sys = 1, xlua = 1, distributed = 1})[lib] then
        assert.truthy(lfs.attributes(ROOT .. '/lib/' .. lib, 'mode') == 'directory', 'lib/' .. lib)
      end
    end
  end)
end)

local counts = {setup = 0, run = 0, compared = 0, fragment = 0, ['no-run'] = 0, other = 0}

describe('the code blocks of README.md and docs/*.md', function()
  for _, path in ipairs(pages()) do
    local blocks, problems = parse(path)
    describe(path, function()
      it('tags every block (lua, text, sh, c; lua fragment or lua no-run when not run)', function()
        assert.are.same({}, problems)
      end)

      local results                        -- the page's run, on first use
      local function result(n)
        if not results then results = {run(path, blocks)} end
        return results[1][n], results[2]
      end

      for n, b in ipairs(blocks) do
        if b.lang == 'lua' then
          local where = ('%s:%d'):format(path, b.line)
          if b.setup then
            counts.setup = counts.setup + 1
            it(where .. ' (setup, in an HTML comment) runs', function()
              local lines, all = result(n)
              check(where, b, lines, all)
            end)
          elseif b.flags.fragment or b.flags['no-run'] then
            counts[b.flags.fragment and 'fragment' or 'no-run'] = counts[b.flags.fragment and 'fragment' or 'no-run'] + 1
            it(where .. ' (' .. (b.flags.fragment and 'fragment' or 'no-run') .. ') compiles', function()
              assert.is_nil(compiles(b, path))
            end)
          else
            counts.run = counts.run + 1
            if b.transcript or b.output then counts.compared = counts.compared + 1 end
            local what = b.transcript and 'prints the transcript' or b.output and 'prints what is shown'
                         or 'runs'
            it(where .. ' ' .. what, function()
              local lines, all = result(n)
              check(where, b, lines, all)
            end)
          end
        elseif not b.output_of then
          counts.other = counts.other + 1
        end
      end
    end)
  end

  teardown(function()               -- a summary for the record
    print(('\n# doc blocks: %d lua blocks run (%d with output compared), %d fragment, %d no-run, '
           .. '%d text/sh/c, %d hidden setup'):format(counts.run, counts.compared, counts.fragment,
           counts['no-run'], counts.other, counts.setup))
  end)
end)
