-- fuzz_findings_spec.lua: what the API fuzzer (fuzz/api.lua) found, and what the review
-- behind docs/security.md found, each kept as a spec: the call that crashed or tripped
-- a sanitizer now raises a clear Lua error.
local torch = require 'torch'
local F = require('nn').functional

-- a table that claims a length of n (its __len) and holds nothing
local function claims(n) return setmetatable({}, {__len = function() return n end}) end

local function raises(pattern, fn, ...)
  local ok, err = pcall(fn, ...)
  assert.is_false(ok)
  assert.is_truthy(tostring(err):find(pattern), tostring(err))
end

describe('metamethods called from Lua', function()
  local mt = torch._tensor_mt

  it('__gc with no tensor does nothing', function()
    mt.__gc()
    mt.__gc(5)
    mt.__gc(torch.zeros(2):storage())
  end)

  it('__gc releases a tensor once: it is no tensor after, for the collector too', function()
    local x = torch.ones(3)
    mt.__gc(x)
    mt.__gc(x)
    assert.is_nil(getmetatable(x))
    assert.is_false(torch.is_tensor(x))
    raises('must be a tensor', torch.add, x, 1)
    x = nil
    collectgarbage()
  end)

  it('a storage released by __gc is no storage after', function()
    local s = torch.ones(3):storage()
    local smt = getmetatable(s)
    smt.__gc(s)
    smt.__gc(s)
    assert.is_nil(getmetatable(s))
    raises('expected a storage', smt.__index, s, 1)
    collectgarbage()
  end)

  it('a graph node released by __gc is no node after', function()
    local node = (torch.ones(2, {requires_grad = true}) * 2).grad_fn
    local nmt = getmetatable(node)
    nmt.__gc(node)
    nmt.__gc(node)
    assert.is_nil(getmetatable(node))
    raises('torch.autograd.Node expected', nmt.__tostring, node)
    collectgarbage()
  end)

  it('__index, __newindex and __len check that they were given a tensor', function()
    raises('^index: argument 1 must be a tensor, got number', mt.__index, 3, 4)
    raises('^index assignment: argument 1 must be a tensor, got string', mt.__newindex, 'x', 1, 2)
    raises('^len: argument 1 must be a tensor, got table', mt.__len, {})
  end)

  it('an index out of range is named in full', function()
    local x = torch.zeros(3)
    raises('index 4611686018427387904 out of range for dim 1 of size 3', function() return x[1 << 62] end)
    raises('index %-9223372036854775808 out of range', function() x[math.mininteger] = 1 end)
    raises('storage: index 9223372036854775807 out of range %[1, 3%]', function() return x:storage()[math.maxinteger] end)
  end)
end)

describe('tables whose length comes from __len', function()
  it('are refused as sizes, indices and dims when the length is absurd', function()
    local x = torch.arange(0, 6):view(2, 3)
    raises('full: a table of dims must have 0 to 16, got a length of 9223372036854775807',
           torch.full, claims(math.maxinteger), {-2, 3})
    raises('full: a table of dims must have 0 to 16, got a length of %-1', torch.full, claims(-1), 0)
    raises('index: a table of indices must have 0 to 16', function() return x[claims(math.maxinteger)] end)
    raises('index_select: a table of indices must have 0 to 2147483647', x.index_select, x, 1, claims(-5))
    raises('sum: a table of dims must have 0 to 16', x.sum, x, claims(1 << 40), false)
    raises('tensor: a table of values must have 0 to 2147483647', torch.tensor, claims(-3))
    -- these cut the length to an int, so -1 flipped nothing and -5 went on to a huge buffer
    raises('flip: a table of dims must have 0 to 16, got a length of %-1', x.flip, x, claims(-1))
    raises('cat: a table of tensors must have 0 to 2147483647, got a length of %-5', torch.cat, claims(-5))
    raises('split: a table of sizes must have 0 to 2147483647', x.split, x, claims(-2))
  end)

  it('torch.tensor refuses a table that answers otherwise the second time it is read', function()
    local reads = 0
    local fickle = setmetatable({}, {__len = function() reads = reads + 1; return reads end,
                                     __index = function() return 1 end})
    raises('tensor: the table changed while it was read', torch.tensor, fickle)
  end)
end)

describe('torch.tensor of nested tables and tensors', function()
  it('refuses tensors of different shapes side by side (it wrote past its result)', function()
    raises('ragged nested table', torch.tensor, {torch.ones(2), torch.ones(3)})
    raises('ragged nested table', torch.tensor, {1, torch.ones(2)})
    raises('ragged nested table', torch.tensor, {torch.ones(2), 1})
    raises('ragged nested table %(a table at depth 2, where the first had a value%)', torch.tensor, {1, {2}})
    raises('ragged nested table %(length 1 at depth 2, expected 2%)', torch.tensor, {{1, 2}, {3}})
  end)

  it('still stacks tensors and tables of one shape', function()
    local t = torch.tensor({torch.tensor({1, 2}), torch.tensor({3, 4})})
    assert.are.same({{1, 2}, {3, 4}}, t:totable())
    assert.are.same({{1, 2}}, torch.tensor({{torch.tensor(1), 2}}):totable())
    assert.are.same({2, 0}, torch.tensor({{}, torch.zeros(0)}):size():totable())
    assert.are.same({0}, torch.tensor({}):size():totable())
  end)
end)

describe('sizes that overflow', function()
  it('adaptive_max_pool2d refuses an output too large to index', function()
    local x = torch.randn(1, 2, 4, 4)
    raises('adaptive_max_pool2d: an output of 9223372036854775807x2 is too large for the input 1x2x4x4',
           F.adaptive_max_pool2d, x, {math.maxinteger, 2})
    raises('adaptive_max_pool2d: an output of 2305843009213693952x2305843009213693952 is too large',
           F.adaptive_max_pool2d, x, {1 << 61, 1 << 61})
    assert.are.same({1, 2, 2, 3}, F.adaptive_max_pool2d(x, {2, 3}):size():totable())
  end)

  it('fold refuses a kernel whose taps overflow', function()
    raises("fold: input of size 1x4x1: dim 2 must be divisible by the kernel's %-4611686018427387903x%-9223372036854775808",
           torch._fold, torch.ones(1, 4, 1), 2, 2, -(1 << 62) + 1, math.mininteger, 1, 1, 0, 0, 1, 1)
  end)

  it('fold, unfold and the convolutions refuse geometries whose sizes overflow', function()
    raises('fold: too large: a 1x1 kernel %(dilation 1x1, padding 0x0%) over 4611686018427387904x1 images of 2 channels',
           F.fold, torch.randn(1, 2, 1), {1 << 62, 1}, 1)
    raises('fold: the output size must be positive, got %-9223372036854775808x%-9223372036854775808',
           F.fold, torch.randn(1, 2, 1), math.mininteger, 1)
    raises('unfold: too large: a 2x2 kernel %(dilation 1x1, padding 9223372036854775807x9223372036854775807%)',
           F.unfold, torch.randn(1, 1, 3, 3), 2, {padding = math.maxinteger})
    local x, w = torch.randn(1, 1, 3, 3), torch.randn(1, 1, 2, 2)
    raises('conv2d: too large: a 2x2 kernel %(dilation 1x1, padding 4611686018427387904x4611686018427387904%)',
           F.conv2d, x, w, nil, {padding = 1 << 62})
    raises('conv2d: kernel size 2x2 %(dilation 9223372036854775807x9223372036854775807%) does not fit the input padded by',
           F.conv2d, x, w, nil, {dilation = math.maxinteger})
    raises('conv_transpose2d: too large: stride 9223372036854775807, padding 0 and dilation 1',
           F.conv_transpose2d, x, w, nil, {stride = math.maxinteger})
    raises('conv_transpose2d: too large: a 2x2 kernel %(dilation 4611686018427387904x4611686018427387904',
           F.conv_transpose2d, x, w, nil, {dilation = 1 << 62})
  end)

  it('max_pool2d checks its padding against half the kernel without doubling it', function()
    raises('max_pool2d: padding 4611686018427387904 must be between 0 and half the kernel size 9223372036854775806',
           torch._max_pool2d_indices, torch.randn(1, 1, 4, 4), math.maxinteger - 1, 1, 1, 1, 1 << 62, 0, 1, 1, false)
  end)

  it('group_norm refuses more groups than its statistics can count', function()
    raises('group_norm: 0 channels %(input size 3x0%) cannot be split into 9223372036854775807 groups',
           F.group_norm, torch.zeros(3, 0), math.maxinteger)
    assert.are.same({3, 0}, F.group_norm(torch.zeros(3, 0), 2):size():totable())
  end)

  it('roll by the most negative shift has a gradient', function()
    local x = torch.randn(5, {requires_grad = true})
    x:roll(math.mininteger):sum():backward()
    assert.are.same({1, 1, 1, 1, 1}, x.grad:totable())
    local y = torch.randn(5, {requires_grad = true})
    torch.roll(y, -7, 1):mul(torch.arange(0, 5)):sum():backward()
    assert.are.same({3, 4, 0, 1, 2}, y.grad:totable())
  end)
end)

describe('reductions to a dtype', function()
  it('logsumexp to an integer dtype raises (it called a missing kernel)', function()
    raises('logsumexp: expects a floating point tensor, got int8', torch.Tensor.logsumexp, torch.tensor(3), {dtype = 'int8'})
  end)
end)

describe('loading a file', function()
  it('never gives a table a class with a finalizer (it ran on the file\'s values when collected)', function()
    -- a DataLoader's finalizer closes the descriptors and kills the pids of the workers it
    -- holds: a file could name any (pid -1: every process of the user); this one holds none
    local data = require 'data'
    local bytes = torch.serialize({setmetatable({}, data.DataLoader)})
    raises("torch.load: string holds an object of class 'data.DataLoader', which has a finalizer %(__gc%) "
           .. 'and so is never loaded', torch.deserialize, bytes)
    collectgarbage()
  end)
end)
