-- The first hour (issue 21, items 4 and 5): a large tensor printed from a
-- script or the REPL is summarized as PyTorch summarizes it (threshold 1000
-- elements, 3 edge items), torch.set_printoptions sets how, a 0-dim tensor
-- shows its type and shape (and every tensor its requires_grad or grad_fn)
-- in its Torch7-style footer, torch.zeros(0) prints as a tensor of size 0,
-- and the Torch7 dialect keeps Torch7's print format. An index of 0, the
-- 0-based habit, is answered with the reminder that indices are 1-based.
-- Which elements a summary keeps is PyTorch's choice (python3: print of
-- torch.arange(1, 1000001).view(1000, 1000) keeps rows and columns 1-3 and
-- 998-1000); the number formats are Torch7's (%Nd for integers, N their
-- digits plus one; %7.4f for values below 10).

local torch = require 'torch'
local run = dofile('spec/support/th.lua').run
local TH = dofile('spec/support/th.lua').path()

local function lines(...) return table.concat({...}, '\n') end

local function count_lines(s)
  local n = select(2, s:gsub('\n', ''))
  return (s ~= '' and s:sub(-1) ~= '\n') and n + 1 or n
end

local function shell_quote(s) return "'" .. s:gsub("'", "'\\''") .. "'" end

-- runs a Lua chunk with th (extra options before -e); the output and whether it exited 0
local function th(code, opts) return run((opts or '') .. ' -e ' .. shell_quote(code)) end

local function raises(fragment, f, ...)
  local ok, err = pcall(f, ...)
  assert.is_false(ok, 'no error; expected: ' .. fragment)
  assert.truthy(tostring(err):find(fragment, 1, true), 'expected "' .. fragment .. '" in:\n' .. tostring(err))
  return err
end

-- the rows 1-3 and 998-1000 of arange(1, 1e6) viewed 1000x1000, columns 1-3 and 998-1000
local function row(first)
  local cells = {}
  for _, c in ipairs({0, 1, 2}) do cells[#cells + 1] = string.format('%8d', first + c) end
  cells[#cells + 1] = '     ...'
  for _, c in ipairs({997, 998, 999}) do cells[#cells + 1] = string.format('%8d', first + c) end
  return table.concat(cells, ' ')
end
local MILLION = lines(row(1), row(1001), row(2001), '     ...', row(997001), row(998001), row(999001),
                      '[torch.LongTensor of size 1000x1000]')

describe('printing a large tensor', function()
  after_each(function() torch.set_printoptions({profile = 'default'}) end)

  it('summarizes 1000x1000 from a script: 3 rows and columns at each end', function()
    local ok, out = th('print(torch.arange(1, 1000001):view(1000, 1000))')
    assert.is_true(ok, out)
    assert.are.equal(MILLION .. '\n', out)
  end)

  it('summarizes a script\'s randn(1000, 1000) in 8 lines, not 167,334', function()
    local ok, out = th('print(torch.randn(1000, 1000))')
    assert.is_true(ok, out)
    assert.are.equal(8, count_lines(out), out)
    -- the row of '...' is indented as wide as a column (more when a value shown needs the
    -- exponent form, as 6.2792e-05 does for about one seed in 300)
    assert.truthy(out:find('\n +%.%.%.\n'), out)
    assert.truthy(out:find('\n%[torch%.FloatTensor of size 1000x1000%]\n$'), out)
    for line in out:gmatch('[^\n]+') do assert.is_true(#line <= 80, line) end
  end)

  it('keeps a summary on one line per row when its values need the exponent form', function()
    -- values from -2.2 to 7e-5 in magnitude: "-7.2646e-05" is 11 characters, and 6 of them
    -- with a gap as wide would pass 80 columns; the left-out columns then show as "..."
    local ok, out = th('local x = torch.full({1000, 1000}, 0.5) x[1][1000] = -7.2646e-05 x[2][1] = -2.1697 print(x)')
    assert.is_true(ok, out)
    assert.are.equal(8, count_lines(out), out)
    for line in out:gmatch('[^\n]+') do assert.is_true(#line <= 80, line) end
    assert.truthy(out:find('^ 5%.0000e%-01  5%.0000e%-01  5%.0000e%-01 %.%.%.  5%.0000e%-01  5%.0000e%-01 %-7%.2646e%-05\n'), out)
  end)

  it('prints the same summary in the REPL as tostring does', function()
    local tmp = os.tmpname()
    local f = assert(io.open(tmp, 'w'))
    f:write('torch.arange(1, 1000001):view(1000, 1000)\n')
    f:close()
    local p = assert(io.popen(TH .. ' -i < ' .. tmp .. ' 2>&1'))
    local out = p:read('a')
    p:close()
    os.remove(tmp)
    assert.truthy(out:find(MILLION, 1, true), out)
  end)

  it('keeps a tensor of 1000 elements whole and summarizes one of 1001', function()
    local whole = tostring(torch.arange(1, 1001))
    assert.are.equal(1001, count_lines(whole))
    assert.falsy(whole:find('...', 1, true))
    assert.are.equal(lines('    1', '    2', '    3', '  ...', ' 1000', ' 1001', ' 1002',
                           '[torch.LongTensor of size 1002]'), tostring(torch.arange(1, 1003)))
  end)

  it('summarizes the leading dims of a 3-D tensor by their slices', function()
    local s = tostring(torch.arange(1, 3001):view(10, 20, 15))
    local labels = {}
    for label in s:gmatch('%((%d+),%.,%.%) = ') do labels[#labels + 1] = tonumber(label) end
    assert.are.same({1, 2, 3, 8, 9, 10}, labels)
    assert.truthy(s:find('\n\n...\n\n(8,.,.) = \n', 1, true), s)
    -- slice 10's last row: 2986 .. 3000, columns 1-3 and 13-15
    assert.truthy(s:find('\n  2986  2987  2988   ...  2998  2999  3000\n[torch.LongTensor of size 10x20x15]', 1, true), s)
  end)
end)

describe('torch.set_printoptions', function()
  after_each(function() torch.set_printoptions({profile = 'default'}) end)

  it('has PyTorch\'s defaults, and get_printoptions returns them', function()
    assert.are.same({precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80},
                    torch.get_printoptions())
  end)

  it("prints every element with profile='full' or threshold=math.huge", function()
    torch.set_printoptions({profile = 'full'})
    assert.are.equal(math.huge, torch.get_printoptions().threshold)
    local s = tostring(torch.arange(1, 2001))
    assert.are.equal(2001, count_lines(s))
    torch.set_printoptions({profile = 'default'})
    torch.set_printoptions({threshold = math.huge})
    assert.are.equal(2001, count_lines(tostring(torch.arange(1, 2001))))
    torch.set_printoptions({threshold = 5})      -- PyTorch: tensor([1, 2, 3,  ..., 5, 6, 7])
    assert.are.equal(lines(' 1', ' 2', ' 3', '...', ' 5', ' 6', ' 7', '[torch.LongTensor of size 7]'),
                     tostring(torch.arange(1, 8)))
    -- a dim of no more than 2 * edgeitems is kept whole, as in PyTorch
    assert.are.equal(7, count_lines(tostring(torch.arange(1, 7))))
  end)

  it("takes 2 decimals and 2 edge items with profile='short'", function()
    torch.set_printoptions({profile = 'short'})
    assert.are.same({precision = 2, threshold = 1000, edgeitems = 2, linewidth = 80}, torch.get_printoptions())
    assert.are.equal(lines(' 1.23', '-2.50', '[torch.FloatTensor of size 2]'), tostring(torch.tensor({1.23456, -2.5})))
    assert.are.equal(lines('    1     2   ...  1999  2000', '[torch.LongTensor of size 1x2000]'),
                     tostring(torch.arange(1, 2001):view(1, 2000)))
  end)

  it('sets the precision, edge items and line width, each alone', function()
    torch.set_printoptions({precision = 6})
    assert.are.equal(lines(' 1.234568', '[torch.DoubleTensor of size 1]'),
                     tostring(torch.tensor({1.2345678}, {dtype = 'float64'})))
    torch.set_printoptions({precision = 4, edgeitems = 1})
    assert.are.equal(lines('    1', '  ...', ' 2000', '[torch.LongTensor of size 2000]'), tostring(torch.arange(1, 2001)))
    torch.set_printoptions({linewidth = 40})
    local s = tostring(torch.ones(2, 30))             -- 13 columns of 3 characters in 40
    assert.truthy(s:find('^Columns 1 to 13\n'), s)
    assert.truthy(s:find('\n\nColumns 14 to 26\n', 1, true), s)
    assert.truthy(s:find('\n\nColumns 27 to 30\n', 1, true), s)
    assert.are.equal(40, torch.get_printoptions().linewidth)
  end)

  it('writes scientific notation always (sci_mode=true) or never (false), as PyTorch', function()
    torch.set_printoptions({sci_mode = true})     -- PyTorch: tensor([1.5000e+00, 2.5000e+02])
    assert.are.equal(lines(' 1.5000e+00', ' 2.5000e+02', '[torch.FloatTensor of size 2]'),
                     tostring(torch.tensor({1.5, 250})))
    torch.set_printoptions({sci_mode = false})    -- PyTorch: tensor([0.0000, 1.0000])
    assert.are.equal(lines(' 0.0000', ' 1.0000', '[torch.FloatTensor of size 2]'), tostring(torch.tensor({1e-5, 1})))
    assert.is_false(torch.get_printoptions().sci_mode)
    torch.set_printoptions({profile = 'default'})  -- a profile sets sci_mode back to nil
    assert.is_nil(torch.get_printoptions().sci_mode)
    assert.are.equal(lines(' 1.0000e-05', ' 1.0000e+00', '[torch.FloatTensor of size 2]'),
                     tostring(torch.tensor({1e-5, 1})))
  end)

  it('refuses unknown options and bad values, showing the call', function()
    raises('torch.set_printoptions: unknown option precison', torch.set_printoptions, {precison = 2})
    raises("profile must be 'default', 'full' or 'short', got long", torch.set_printoptions, {profile = 'long'})
    raises('precision must be an integer >= 0, got -1', torch.set_printoptions, {precision = -1})
    raises('edgeitems must be an integer >= 1, got 0', torch.set_printoptions, {edgeitems = 0})
    raises('linewidth must be an integer >= 1, got 2.5', torch.set_printoptions, {linewidth = 2.5})
    raises('sci_mode must be true, false or nil, got 1', torch.set_printoptions, {sci_mode = 1})
    local err = raises('expects a table of options, got number', function() torch.set_printoptions(4) end)
    assert.truthy(err:find("torch.set_printoptions{profile='full'}", 1, true), err)
    assert.truthy(err:find('^[^\n]*first_hour_print_spec%.lua:%d+:'), err)   -- the caller's line
    assert.are.same({precision = 4, threshold = 1000, edgeitems = 3, linewidth = 80}, torch.get_printoptions())
  end)
end)

describe('a tensor shows its type, shape and autograd state', function()
  it('prints a 0-dim tensor as its value and a 0-dim footer', function()
    assert.are.equal('3.5000\n[torch.FloatTensor of size [] (0-dim)]', tostring(torch.tensor(3.5)))
    assert.are.equal('7\n[torch.LongTensor of size [] (0-dim)]', tostring(torch.tensor(7)))
  end)

  it("shows a loss's grad_fn and a leaf's requires_grad, as PyTorch's repr", function()
    local w = torch.tensor({1.5, 2.5}, {requires_grad = true})
    local loss = (w * 2):mean()                  -- (3 + 5) / 2
    assert.are.equal('MeanBackward', loss.grad_fn:name())
    assert.are.equal('4\n[torch.FloatTensor of size [] (0-dim), grad_fn=<MeanBackward>]', tostring(loss))
    assert.are.equal(lines(' 1.5000', ' 2.5000', '[torch.FloatTensor of size 2, requires_grad=true]'), tostring(w))
    assert.are.equal('2\n[torch.FloatTensor of size [] (0-dim), requires_grad=true]',
                     tostring(torch.tensor(2.0, {requires_grad = true})))
    assert.are.equal(lines(' 1.5000', ' 2.5000', '[torch.FloatTensor of size 2]'), tostring(w:detach()))
  end)

  it('prints torch.zeros(0) as a tensor of size 0 (its dim() is 1)', function()
    assert.are.equal(1, torch.zeros(0):dim())
    assert.are.equal('[torch.FloatTensor of size 0]', tostring(torch.zeros(0)))
    assert.are.equal('[torch.FloatTensor of size 0x3]', tostring(torch.zeros(0, 3)))
  end)

  it('shows the footer in the REPL too', function()
    local tmp = os.tmpname()
    local f = assert(io.open(tmp, 'w'))
    f:write('w = torch.tensor({1.5, 2.5}, {requires_grad = true})\n(w * 2):mean()\ntorch.zeros(0)\n')
    f:close()
    local p = assert(io.popen(TH .. ' -i < ' .. tmp .. ' 2>&1'))
    local out = p:read('a')
    p:close()
    os.remove(tmp)
    assert.truthy(out:find('\n4\n[torch.FloatTensor of size [] (0-dim), grad_fn=<MeanBackward>]\n', 1, true), out)
    assert.truthy(out:find('\n[torch.FloatTensor of size 0]\n', 1, true), out)
  end)
end)

describe('the Torch7 dialect prints as Torch7', function()
  it("keeps Torch7's footers, empty tensors with no dimension and every element", function()
    local ok, out = th([[
      require 'nn'
      print(torch.Tensor())
      print(torch.zeros(0))
      local m = nn.Linear(2, 1)
      m.weight:fill(1)
      print(m.weight)
      print(#tostring(torch.range(1, 2000)))
      torch.set_printoptions{threshold = 1000}
      print(#tostring(torch.range(1, 2000)))]], '--torch7')
    assert.is_true(ok, out)
    -- Torch7: 2000 lines of '%5d' (6 characters with the newline) and the footer
    local full = 2000 * 6 + #'[torch.DoubleTensor of size 2000]'
    local summary = 6 * 6 + 6 + #'[torch.DoubleTensor of size 2000]'
    assert.are.equal(lines('[torch.DoubleTensor with no dimension]', '[torch.DoubleTensor with no dimension]',
                           ' 1  1', '[torch.DoubleTensor of size 1x2]', tostring(full), tostring(summary)) .. '\n', out)
  end)
end)

describe('indexing with 0 says indices are 1-based', function()
  local x = torch.tensor({1, 2, 3})
  local m = torch.zeros(3, 4)

  it('for x[0], x[{0}], x[{{0, 2}}] and x[0] = v', function()
    raises('index: index 0 out of range for dim 1 of size 3 (indices are 1-based)', function() return x[0] end)
    raises('index: index 0 out of range for dim 1 of size 3 (indices are 1-based)', function() return x[{0}] end)
    raises('index: index 0 out of range for dim 2 of size 4 (indices are 1-based)', function() return m[{{}, 0}] end)
    raises('index: range {0, 2} out of bounds for dim 1 of size 3 (indices are 1-based)',
           function() return x[{{0, 2}}] end)
    raises('index assignment: index 0 out of range for dim 1 of size 3 (indices are 1-based)',
           function() x[0] = 5 end)
    raises('index: range {0, 2} out of bounds for dim 1 of size 3 (indices are 1-based)',
           function() m[{{0, 2}}] = 1 end)
  end)

  it('for select, index_select, gather, a storage and a dim of 0', function()
    raises('select: index is 1-based, got 0', m.select, m, 1, 0)
    raises('index_select: index 0 out of range for dim 1 of size 3 (indices are 1-based)',
           x.index_select, x, 1, torch.tensor({0, 1}))
    raises('gather: index 0 out of range for dim 2 of size 4 (indices are 1-based)',
           m.gather, m, 2, torch.tensor({{0}, {1}, {1}}))
    local s = x:storage()
    raises('storage: index 0 out of range [1, 3] (indices are 1-based)', function() return s[0] end)
    raises('sum: dimension 0 out of range (expected 1..2, or -2..-1 from the end; dims are 1-based)', m.sum, m, 0)
  end)

  it('for nn.Select and nn.Narrow', function()
    require 'nn'
    raises('nn.Select: index 0 is out of range for dim 1 of input of size 3x4 (indices are 1-based)',
           function() return nn.Select(1, 0):forward(m) end)
    raises('(offsets are 1-based)', function() return nn.Narrow(1, 0, 1):forward(m) end)
  end)

  it('for Torch7\'s select of a vector and sub, in the Torch7 dialect', function()
    local ok, out = th('local x = torch.Tensor({1, 2, 3}); print(select(2, pcall(x.select, x, 1, 0))); ' ..
                       'print(select(2, pcall(x.sub, x, 0, 2))); print(select(2, pcall(x.sub, x, 2, 4)))', '--torch7')
    assert.is_true(ok, out)
    assert.truthy(out:find('select: index 0 out of range [1, 3] (indices are 1-based)\n', 1, true), out)
    assert.truthy(out:find('sub: range 0..2 out of 1..3 in dim 1 (indices are 1-based)\n', 1, true), out)
    assert.truthy(out:find('sub: range 2..4 out of 1..3 in dim 1\n', 1, true), out)
  end)

  it('only where the 0 is at fault', function()
    local err = raises('index: index 4 out of range for dim 1 of size 3', function() return x[4] end)
    assert.falsy(err:find('1-based', 1, true), err)
    err = raises('index: range {2, 5} out of bounds for dim 1 of size 3', function() return x[{{2, 5}}] end)
    assert.falsy(err:find('1-based', 1, true), err)
    err = raises('sum: dimension 3 out of range (expected 1..2, or -2..-1 from the end)', m.sum, m, 3)
    assert.falsy(err:find('1-based', 1, true), err)
    assert.are.equal(0, x[{{1, 0}}]:numel())   -- {1, 0} is the empty range, not an error
  end)
end)
