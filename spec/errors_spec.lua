-- errors_spec.lua: every binding meets bad input with a Lua error, never a
-- crash or a silent answer. The tensor methods (torch._methods) and the
-- torch functions are walked generically: called with nil, strings, numbers
-- and tables where a tensor belongs, with tensors of the wrong shape, with
-- out-of-range dims and indices. Where a "bad" value has a defined meaning
-- the function is excluded below, with the reason.
local torch = require 'torch'

local function fresh() return torch.tensor({{1.5, -2, 3}, {0.25, 5, -6}}) end
local WRONG_SHAPE = torch.zeros(4, 5)

local function sorted_names(t, want_type)
  local names = {}
  for k, v in pairs(t) do
    if type(k) == 'string' and type(v) == want_type then names[#names + 1] = k end
  end
  table.sort(names)
  return names
end

-- Functions never called with junk: their junk has a lasting effect on the
-- whole process rather than an error to check.
local NOT_CALLED = {
  _set_field_hook = 'replaces the hook that answers tensor fields (grad, ...) with its argument',
  _repl_print = 'prints any value it is given (the REPL printer)',
  class = 'creates a class of any name, as Torch7 (torch.class)',
  _fork = 'forks the process (DataLoader workers)',
  _exit = 'ends the process at once (DataLoader workers)',
  _socketpair = 'opens two file descriptors (DataLoader workers)',
  _close = 'closes a file descriptor, whichever it is',
  _kill = 'sends a signal to a process',
  progress = 'prints a progress bar for any numbers',
  timeit = 'calls its argument repeatedly',
  _recv_msg = 'waits for a message on a file descriptor, whichever it is',
  _send_msg = 'writes to a file descriptor, whichever it is',
  _waitpid = 'waits for a process',
  _sleep = 'pauses the process for as long as it is asked',
  no_grad = 'with no argument turns grad mode off for a block (a guard to close)',
  enable_grad = 'with no argument turns grad mode on for a block (a guard to close)',
  inference_mode = 'with no argument turns inference mode on for a block (a guard to close)',
  set_grad_enabled = 'sets grad mode (and returns a guard to close)',
  save = 'writes a file of any name',
  _crc32 = 'any string has a checksum',
  _profiler_enter = 'opens a profiler region of any name (nothing while no session records)',
  _profiler_start = 'starts a profiler session, whatever its flags (torch.profiler checks them)',
  _fsync = 'answers nil and the reason for a file it cannot open, as io functions do',
  _resolve_links = 'any name leads somewhere, if only to nothing yet',
  _check_file_name = 'any string without a NUL byte is a file name',
  serialize = 'any value (nil, a string) has a serialization',
}

-- Methods for which a tensor of the wrong shape has a defined meaning.
local WRONG_SHAPE_OK = {
  equal = 'answers false for tensors of different shapes',
  isSetTo = 'answers false when the tensors are different views',
  isSameSizeAs = 'answers false for tensors of different sizes',
  to = 'x:to(other) takes only the dtype of other',
  set_ = 'x:set_(y) takes any geometry of y',
  set = 'x:set(y) (Torch7) takes any geometry of y',
  type_as = 'x:type_as(other) takes only the dtype of other',
  typeAs = 'x:typeAs(other) (Torch7) takes only the dtype of other',
  resizeAs_ = 'x:resizeAs_(y) takes the shape of any y',
  resizeAs = 'x:resizeAs(y) (Torch7) takes the shape of any y',
}

-- Methods whose single integer argument is a count, size or offset rather
-- than a dim or an index: which of 99, -99 and 0 are valid, and why.
local INT_ARG_OK = {
  random = {[99] = "Torch7's x:random(b): integers 1..b"},
  uniform = {[-99] = "Torch7's x:uniform(a): a to 1", [0] = 'idem'},
  chunk = {[99] = 'a count of chunks: more than the dim holds gives fewer'},
  split = {[99] = 'a chunk size: larger than the dim gives one piece'},
  diagonal = {[99] = 'an offset: outside the matrix the diagonal is empty', [-99] = 'idem',
              [0] = 'the main diagonal'},
  tril = {[99] = 'a diagonal offset: any value keeps or drops whole triangles', [-99] = 'idem',
          [0] = 'the main diagonal'},
  triu = {[99] = 'a diagonal offset: any value keeps or drops whole triangles', [-99] = 'idem',
          [0] = 'the main diagonal'},
  roll = {[99] = 'a shift: it wraps around', [-99] = 'idem', [0] = 'no shift'},
  new = {[99] = 'a size: a new tensor of 99 elements', [0] = 'a size: an empty tensor'},
  new_zeros = {[99] = 'a size: a new tensor of 99 elements', [0] = 'a size: an empty tensor'},
  resize_ = {[99] = 'a size: x grows to 99 elements', [0] = 'a size: x becomes empty'},
  diag = {[99] = 'an offset: outside the matrix the diagonal is empty', [-99] = 'idem', [0] = 'the main diagonal'},
  random_ = {[99] = 'the upper bound of the range drawn from'},
  bernoulli = {[0] = 'a probability: 0 draws only zeros'},
  topk = {[0] = 'k = 0 gives empty results, as in PyTorch'},
  uniform_ = {[-99] = 'the lower bound of the range: U(-99, 1)', [0] = 'the lower bound: U(0, 1)'},
  histc = {[99] = 'a count of bins: 99 bins'},
}
INT_ARG_OK.tril_, INT_ARG_OK.triu_, INT_ARG_OK.bernoulli_ = INT_ARG_OK.tril, INT_ARG_OK.triu, INT_ARG_OK.bernoulli
INT_ARG_OK.bhistc = INT_ARG_OK.histc
INT_ARG_OK.new_ones, INT_ARG_OK.new_empty, INT_ARG_OK.resize = INT_ARG_OK.new_zeros, INT_ARG_OK.new_zeros, INT_ARG_OK.resize_

local function raises(what, fn, ...)
  local ok, err = pcall(fn, ...)
  if ok then error(what .. ': returned normally, a Lua error was expected', 2) end
  if type(err) ~= 'string' then error(what .. ': raised a ' .. type(err) .. ', not a message', 2) end
  if err:find("to '?'", 1, true) then error(what .. ': the message does not name the op: ' .. err, 2) end
  return err
end

describe('tensor methods', function()
  local methods = sorted_names(torch._methods, 'function')

  it('are many (the walk sees the bindings)', function()
    assert.is_true(#methods > 100, #methods .. ' methods')
  end)

  it('raise when self is not a tensor', function()
    for _, name in ipairs(methods) do
      local m = torch._methods[name]
      raises(name .. '(nil)', m, nil)
      raises(name .. '("junk")', m, 'junk')
      raises(name .. '(42)', m, 42)
      raises(name .. '({})', m, {})
    end
  end)

  it('raise on a string or a wrong-shape tensor where an argument is needed', function()
    for _, name in ipairs(methods) do
      local m = torch._methods[name]
      if not pcall(m, fresh()) then                -- the method needs an argument
        raises('x:' .. name .. '("junk")', m, fresh(), 'junk')
        raises('x:' .. name .. '(nil)', m, fresh(), nil)
        if not WRONG_SHAPE_OK[name] then raises('x:' .. name .. '(4x5 tensor)', m, fresh(), WRONG_SHAPE) end
      end
    end
  end)

  it('raise on out-of-range dims and indices given as their integer argument', function()
    -- an integer argument: 1 works, 2.5 does not
    for _, name in ipairs(methods) do
      local m = torch._methods[name]
      if pcall(m, fresh(), 1) and not pcall(m, fresh(), 2.5) then
        local ok_values = INT_ARG_OK[name] or {}
        for _, bad in ipairs({99, -99, 0}) do
          if not ok_values[bad] then raises('x:' .. name .. '(' .. bad .. ')', m, fresh(), bad) end
        end
      end
    end
  end)

  it('raise on out-of-range dims and indices in their other arguments', function()
    local x = fresh()
    local bad_index = torch.tensor({1, 99})
    local cases = {
      {'size', 3}, {'size', -3}, {'stride', 0}, {'select', 1, 3}, {'select', 1, 0},
      {'select', 3, 1}, {'select', 2, -4}, {'narrow', 1, 2, 2}, {'narrow', 1, 0, 1},
      {'narrow', 2, 1, 4}, {'narrow', 3, 1, 1}, {'transpose', 1, 3}, {'transpose', 0, 1},
      {'permute', 1, 3}, {'permute', 1, 1}, {'permute', 1}, {'unfold', 1, 3, 1}, {'unfold', 3, 1, 1},
      {'unfold', 1, 1, 0}, {'squeeze', 3}, {'unsqueeze', 4}, {'unsqueeze', -4}, {'expand', 3, 3},
      {'view', 4}, {'view', -1, -1}, {'reshape', 7}, {'as_strided', {2, 3}, {3, 1}, 2},
      {'diagonal', 0, 1, 1}, {'index_select', 1, bad_index}, {'index_select', 3, torch.tensor({1})},
      {'gather', 2, torch.tensor({{1, 4}, {1, 1}})}, {'gather', 3, torch.tensor({{1}})},
      {'index_fill', 2, bad_index, 0}, {'index_add', 1, bad_index, torch.zeros(2, 3)},
      {'index_copy', 1, bad_index, torch.zeros(2, 3)}, {'scatter', 2, torch.tensor({{4}}), 0},
      {'sum', 3}, {'sum', 0}, {'mean', -3}, {'max', 3}, {'min', 0}, {'argmax', 3}, {'cumsum', 3},
      {'cumprod', 0}, {'softmax', 3}, {'log_softmax', -3}, {'sort', 3}, {'topk', 4}, {'kthvalue', 4},
      {'kthvalue', 0}, {'flip', 3}, {'movedim', 3, 1}, {'movedim', 1, 3}, {'roll', 1, 3},
      {'std', 3}, {'var', 0}, {'prod', 3}, {'median', 3}, {'mode', 3}, {'logsumexp', 3},
      {'norm', 2, 3}, {'flatten', 3}, {'unflatten', 3, {1, 2}}, {'repeat', 1}, {'chunk', 0},
      {'split', 0}, {'amax', 3}, {'all', 3}, {'any', 3}, {'count_nonzero', 3},
    }
    local checked = 0
    for _, case in ipairs(cases) do
      local m = torch._methods[case[1]]
      if m then
        raises(string.format('x:%s(%s)', case[1], table.concat(
          (function() local s = {} for i = 2, #case do s[#s + 1] = tostring(case[i]) end return s end)(), ', ')),
          m, x, table.unpack(case, 2))
        checked = checked + 1
      end
    end
    assert.is_true(checked > 20, checked .. ' cases checked')
  end)

  it('raise on out-of-range indexing and slicing', function()
    local x = fresh()
    raises('x[3]', function() return x[3] end)
    raises('x[-3]', function() return x[-3] end)
    raises('x[0]', function() return x[0] end)
    raises('x[1][4]', function() return x[1][4] end)
    raises('x[{1, 4}]', function() return x[{1, 4}] end)
    raises('x[{3}]', function() return x[{3}] end)
    raises('x[{{1, 3}}]', function() return x[{{1, 3}}] end)
    raises('x[{{0, 1}}]', function() return x[{{0, 1}}] end)
    raises('x[{1, 2, 3}]', function() return x[{1, 2, 3}] end)
    raises('x[{"a"}]', function() return x[{'a'}] end)
    raises('x[true]', function() return x[true] end)
    raises('x[3] = 1', function() x[3] = 1 end)
    raises('x[{1, 4}] = 1', function() x[{1, 4}] = 1 end)
    raises('x[1] = "junk"', function() x[1] = 'junk' end)
    raises('x[1] = 4x5', function() x[1] = WRONG_SHAPE end)
    raises('x.junk = 1', function() x.junk = 1 end)
    raises('torch.tensor(1)[1]', function() return torch.tensor(1)[1] end)
    raises('x:item()', function() return x:item() end)
  end)
end)

describe('torch functions', function()
  local functions = sorted_names(torch, 'function')

  it('are many (the walk sees the bindings)', function()
    assert.is_true(#functions > 100, #functions .. ' functions')
  end)

  it('raise on nil and strings where arguments are needed', function()
    for _, name in ipairs(functions) do
      local f = torch[name]
      if not NOT_CALLED[name] then
        if not pcall(f) then                       -- needs an argument
          raises('torch.' .. name .. '(nil)', f, nil)
          raises('torch.' .. name .. '("junk")', f, 'junk')
        else
          -- optional arguments: sizes (torch.zeros(2)) must still be numbers
          local ok, r = pcall(f, 2)
          if ok and torch.is_tensor(r) and r:numel() == 2 then
            raises('torch.' .. name .. '("junk")', f, 'junk')
            raises('torch.' .. name .. '(2, "junk")', f, 2, 'junk')
          end
        end
      end
    end
  end)

  it('raise on a wrong-shape tensor as the second operand', function()
    for _, name in ipairs(functions) do
      local f = torch[name]
      if not NOT_CALLED[name] and not WRONG_SHAPE_OK[name] and not pcall(f, fresh()) then
        raises('torch.' .. name .. '(x, 4x5 tensor)', f, fresh(), WRONG_SHAPE)
      end
    end
  end)

  it('raise on bad sizes, dtypes and options', function()
    raises('zeros(-1)', torch.zeros, -1)
    raises('zeros(2, -3)', torch.zeros, 2, -3)
    raises('zeros(2.5)', torch.zeros, 2.5)
    raises('ones({2, "a"})', torch.ones, {2, 'a'})
    raises('zeros with 17 dims', torch.zeros, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
    raises('zeros(2, {dtype = "junk"})', torch.zeros, 2, {dtype = 'junk'})
    raises('full(2, "a")', torch.full, 2, 'a')
    raises('tensor({{1, 2}, {3}})', torch.tensor, {{1, 2}, {3}})
    raises('tensor({1, "a"})', torch.tensor, {1, 'a'})
    raises('tensor(nil)', torch.tensor, nil)
    raises('set_default_dtype("int64")', torch.set_default_dtype, 'int64')
    if not torch.cuda.is_available() then raises('x:to("cuda")', fresh().to, fresh(), 'cuda') end
    raises('x:type("junk")', fresh().type, fresh(), 'junk')
    raises('LongTensor("junk")', torch.LongTensor, 'junk')
  end)
end)

describe('messages say what is wrong', function()
  -- fn(...) raises a message containing text
  local function says(text, fn, ...)
    local err = raises(text, fn, ...)
    assert.truthy(err:find(text, 1, true), 'expected "' .. text .. '" in: ' .. err)
  end

  it('view and reshape show the shape asked for', function()
    local x = torch.zeros(3, 4)
    says("view: shape '5' is invalid for input of size 12", x.view, x, 5)
    says("reshape: shape '5x-1' is invalid for input of size 12", x.reshape, x, 5, -1)
    says("view: shape '2x2' is invalid for input of size 12", x.view, x, {2, 2})
  end)

  it('creation functions name themselves with bad sizes', function()
    local x = fresh()
    says('zeros: negative size -99 in dim 1', torch.zeros, -99)
    says('ones: negative size -3 in dim 2', torch.ones, 2, -3)
    says('zeros: size 1000000000000x1000000000000 is too large', torch.zeros, 1e12, 1e12)
    says('empty: negative size -1 in dim 2', torch.empty, 2, -1)
    says('full: negative size -1 in dim 1', torch.full, {-1}, 2)
    says('rand: size 1000000000000x1000000000000 is too large', torch.rand, 1e12, 1e12)
    says('Tensor: negative size -2 in dim 1', torch.Tensor, -2)
    says('new_zeros: negative size -1 in dim 1', x.new_zeros, x, -1)
    says('resize_: negative size -1 in dim 1', x.resize_, x, -1)
  end)

  it('a dim out of range names the valid range', function()
    local x = torch.zeros(3, 4)
    says('unsqueeze: dimension 4 out of range (expected 1..3, or -3..-1 from the end)', x.unsqueeze, x, 4)
    says('unsqueeze: dimension -4 out of range (expected 1..3, or -3..-1 from the end)', x.unsqueeze, x, -4)
    says('sum: dimension 3 out of range (expected 1..2, or -2..-1 from the end)', x.sum, x, 3)
    says('cat: dimension 3 out of range (expected 1..2, or -2..-1 from the end)', torch.cat, {x, x}, 3)
  end)

  it('indices must be integers; a range is {first, last}', function()
    local x = torch.zeros(3, 4)
    says('index: index must be an integer, got 1.5', function() return x[1.5] end)
    says('index assignment: index must be an integer, got 2.5', function() x[2.5] = 1 end)
    says('index: index must be an integer, got 1.5', function() return x[{1, 1.5}] end)
    says('index: range bounds must be integers, got 1.5', function() return x[{{1.5, 2}}] end)
    says('index: a range is {first, last}, got 3 entries (steps are not supported)', function() return x[{{1, 3, 2}}] end)
    says('index: a range is {first, last}, got 3 entries', function() x[{{}, {1, 4, 2}}] = 1 end)
    says('index: range {2, 5} out of bounds for dim 2 of size 4', function() return x[{{}, {2, 5}}] end)
    assert.are.same({3, 2}, x[{{1, 3}, {2, 3}}]:size():totable())     -- two-entry ranges still work
  end)

  it('creation functions refuse devices there are not, as x:to does', function()
    local x = fresh()
    local no_gpu = not torch.cuda.is_available()
    if no_gpu then says("to: no CUDA device for 'cuda': ", x.to, x, 'cuda') end
    local creators = {
      zeros = function(o) return torch.zeros(2, o) end, ones = function(o) return torch.ones(2, 3, o) end,
      empty = function(o) return torch.empty(2, o) end, full = function(o) return torch.full({2}, 1, o) end,
      tensor = function(o) return torch.tensor({1, 2}, o) end, rand = function(o) return torch.rand(2, o) end,
      randn = function(o) return torch.randn(2, o) end, arange = function(o) return torch.arange(3, o) end,
      linspace = function(o) return torch.linspace(0, 1, 3, o) end, eye = function(o) return torch.eye(2, o) end,
      zeros_like = function(o) return torch.zeros_like(x, o) end, randperm = function(o) return torch.randperm(3, o) end,
      new_zeros = function(o) return x:new_zeros(2, o) end, new_full = function(o) return x:new_full({2}, 1, o) end,
    }
    for name, make in pairs(creators) do
      if no_gpu then
        says(name .. ": no CUDA device for 'cuda': ", make, {device = 'cuda'})
        says(name .. ": no CUDA device for 'cuda:1'", make, {device = 'cuda:1'})
      end
      says(name .. ": unknown device 'banana'", make, {device = 'banana'})
      assert.is_true(torch.is_tensor(make({device = 'cpu'})), name .. ' on the cpu')
      assert.is_true(torch.is_tensor(make({device = x.device})), name .. ' on x.device')
    end
    says("to: unknown device 'banana'", x.to, x, {device = 'banana'})
    says("to: unknown dtype or device 'banana'", x.to, x, 'banana')
  end)

  it('chunk of an empty dim makes its empty parts, and refuses absurd counts', function()
    local e = torch.zeros(0, 3)
    local parts = e:chunk(3)
    assert.are.equal(3, #parts)                                         -- as PyTorch
    for _, p in ipairs(parts) do assert.are.same({0, 3}, p:size():totable()) end
    says('chunk: 4611686018427387904 chunks of dim 1, which is empty: at most 65536 empty parts can be made',
         e.chunk, e, 2 ^ 62)
    says('chunk: 2147483648 chunks of dim 1', e.chunk, e, 2 ^ 31)
    says('chunk: 9223372036854775807 chunks of dim 2', torch.zeros(2, 0).chunk, torch.zeros(2, 0), math.maxinteger, 2)
    -- counts and sizes near the integer limit are exact, not overflowed
    assert.are.equal(5, #torch.zeros(5):chunk(math.maxinteger))         -- parts of ceil(5 / n) = 1
    assert.are.equal(1, #torch.zeros(5):split(math.maxinteger))
    says('split: sizes [9223372036854775807, 9223372036854775807, 2] sum to more than 5, but dim 1 has size 5',
         torch.zeros(5).split, torch.zeros(5), {math.maxinteger, math.maxinteger, 2})
  end)
end)

-- A child process calls every binding with many bad argument lists; it must
-- end normally, whatever each call answers. The child logs each call first,
-- so a crash names the call that caused it.
local SWEEP = [=[
local torch = require 'torch'
local log = assert(io.open(arg[1], 'w'))
local function fresh() return torch.tensor({{1.5, -2, 3}, {0.25, 5, -6}}) end
local NOT_CALLED = {_set_field_hook = true, _repl_print = true, class = true, _fork = true, _exit = true,
                    _socketpair = true, _close = true, _kill = true, progress = true, timeit = true,
                    _recv_msg = true, _send_msg = true, _waitpid = true, _sleep = true, save = true}
local threads, dtype = torch.get_num_threads(), torch.get_default_dtype()
local rng = torch.get_rng_state and torch.get_rng_state()
local function arglists()
  local x, w = fresh(), torch.zeros(4, 5)
  return {
    {}, {nil, 1}, {99}, {-99}, {0}, {-1}, {2.5}, {0 / 0}, {math.huge}, {true}, {'junk'}, {{}},
    {{99}}, {99, 99}, {-1, -1}, {1, 99}, {99, 1}, {1, 1, 99}, {1, 99, 1}, {0, 0, 0},
    {w}, {w, w}, {x, w}, {1, w}, {1, w, w}, {1, torch.tensor({99})}, {1, torch.tensor({-99})},
    {1, torch.tensor({{99}})}, {torch.zeros(0)}, {torch.zeros(0, 3)}, {torch.tensor(1)},
    {torch.tensor({true, false})}, {torch.zeros(2, 3, {dtype = 'int64'})}, {{w, x}}, {{x, 'junk'}},
    {fresh():t()}, {1, 2, 3, 4, 5, 6}, {{dtype = 'junk'}}, {{dim = 99}},
  }
end
local count = 0
local function try(label, f, ...)
  log:write(label, '\n')
  log:flush()
  local ok, err = pcall(f, ...)
  if not ok and type(err) ~= 'string' then error(label .. ' raised a ' .. type(err)) end
  count = count + 1
end
local selves = {function() return fresh() end, function() return torch.zeros(0, 3) end,
                function() return torch.tensor(2.5) end, function() return torch.tensor({1, 2}) end,
                function() return torch.tensor({true}) end, function() return fresh():t() end}
torch._load_all()   -- every module, those loaded on first use too
local names = {}
for k in pairs(torch._methods) do names[#names + 1] = k end
table.sort(names)
for _, name in ipairs(names) do
  for s, make in ipairs(selves) do
    for a, args in ipairs(arglists()) do
      try('x:' .. name .. ' self ' .. s .. ' args ' .. a, torch._methods[name], make(), table.unpack(args, 1, 6))
    end
  end
end
names = {}
for k, v in pairs(torch) do if type(v) == 'function' and not NOT_CALLED[k] then names[#names + 1] = k end end
table.sort(names)
for _, name in ipairs(names) do
  for a, args in ipairs(arglists()) do
    try('torch.' .. name .. ' args ' .. a, torch[name], table.unpack(args, 1, 6))
    try('torch.' .. name .. ' x, args ' .. a, torch[name], fresh(), table.unpack(args, 1, 6))
  end
end
torch.set_num_threads(threads)
torch.set_default_dtype(dtype)
if rng then torch.set_rng_state(rng) end
log:write('done ', count, '\n')
log:close()
io.write('done ', count, '\n')
]=]

describe('every binding with bad arguments', function()
  it('never crashes the process (a child calls them all)', function()
    local script, logfile = os.tmpname(), os.tmpname()
    local f = assert(io.open(script, 'w'))
    f:write(SWEEP)
    f:close()
    local lua = os.getenv('LUA') or 'lua5.4'
    local env = string.format("LUA_PATH='%s' LUA_CPATH='%s' OMP_NUM_THREADS=2", package.path, package.cpath)
    local p = assert(io.popen(env .. ' ' .. lua .. ' ' .. script .. ' ' .. logfile .. ' 2>&1'))
    local out = p:read('a')
    local ok, how, code = p:close()
    local log = io.open(logfile):read('a')
    os.remove(script)
    os.remove(logfile)
    local last = log:match('([^\n]*)\n$') or '(nothing)'
    assert(ok and out:match('^done %d+'), string.format(
      'the child ended by %s %s after the call "%s":\n%s', tostring(how), tostring(code), last, out:sub(-2000)))
    assert.is_true(tonumber(out:match('^done (%d+)')) > 10000)
  end)
end)
