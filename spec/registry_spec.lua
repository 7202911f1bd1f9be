-- registry_spec.lua: the op registry (src/ops/registry.h), walked through
-- torch._ops(): every op that gives float results has a derivative, and each
-- derivative matches finite differences (gradcheck, and gradgradcheck for the
-- recorded formula that create_graph takes) in float64, on contiguous,
-- transposed, narrowed and broadcast inputs, and with a Lua number on either
-- side. Nothing here lists ops by hand: an op added to the registry is checked
-- here as soon as it exists. Also: every call reaches the dispatcher (the op
-- counter sees it), and the registry's own columns are consistent.
local torch = require 'torch'

local OPS = torch._ops()

local R = dofile('spec/support/registry_calls.lua')
local sample, callable, layouts, calls = R.sample, R.callable, R.layouts, R.calls

local function check(f, inputs, what)
  local ins = {}
  for i, v in ipairs(inputs) do
    ins[i] = torch.is_tensor(v) and v:is_floating_point() and v:detach():requires_grad_() or v
  end
  local ok, err = pcall(torch.autograd.gradcheck, f, ins)
  assert(ok, what .. ': ' .. tostring(err))
  ok, err = pcall(torch.autograd.gradgradcheck, f, ins)
  assert(ok, what .. ' (second derivative): ' .. tostring(err))
end

describe('the op registry', function()
  it('lists the ops with their columns', function()
    assert.is_true(#OPS >= 70, #OPS .. ' ops')
    local seen = {}
    for _, op in ipairs(OPS) do
      assert.is_nil(seen[op.name], op.name .. ' twice')
      seen[op.name] = true
      local none = op.family == 'factory' or op.family == 'optim'   -- no differentiated input
      assert.is_true(op.arity >= (none and 0 or 1) and op.arity <= 3, op.name)
      assert.are.equal(op.arity, #op.domain, op.name .. ': one domain per input')
      assert.truthy(({none = 1, lower = 1, fp32 = 1, promote = 1})[op.autocast], op.name)
      for _, alias in ipairs(op.aliases) do
        assert.is_nil(seen['alias ' .. alias], alias .. ' names two ops')
        seen['alias ' .. alias] = true
      end
    end
  end)

  it('gives every op with float results a derivative, and no other op one', function()
    for _, op in ipairs(OPS) do
      local c = calls(op)[1]
      local r = c[2](table.unpack(c[1]))
      if op.family == 'random' or op.family == 'factory' or op.family == 'optim' then
        -- a sample, a new tensor, a step under no_grad: no derivative
        assert(not op.differentiable, op.name .. ': a ' .. op.family .. ' op with a derivative')
        assert(not r.requires_grad, op.name .. ': its result requires grad')
      else
        local float_result = r:is_floating_point()
        assert(op.differentiable == float_result, op.name .. (float_result
          and ': no derivative in the registry' or ': a ' .. r.dtype .. ' result cannot carry a gradient'))
      end
    end
  end)

  it('draws the same numbers for the same seed through every random op', function()
    for _, op in ipairs(OPS) do
      if op.family == 'random' then
        local c = calls(op)[1]
        local a, b = c[2](table.unpack(c[1])), c[2](table.unpack(c[1]))
        assert(torch.equal(a, b), op.name .. ': two draws from one seed differ')
      end
    end
  end)

  it('sees the factories through the dispatcher, their *_like and new_* forms as the same ops', function()
    local x = torch.ones(2, 3, {dtype = 'float64'})
    torch._op_counter(true)
    local a = torch.zeros(2, 3)                       -- zeros
    local b = torch.zeros_like(x)                     -- zeros
    local c = x:new_ones(4)                           -- ones
    local d = torch.full({2}, 7)                      -- full
    local e = torch.full_like(x, 2.5)                 -- full
    local f = torch.empty(3)                          -- empty
    local g = torch.arange(5)                         -- arange
    local h = torch.eye(2)                            -- eye
    local i = torch.linspace(0, 1, 3)                 -- linspace
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({zeros = 2, ones = 1, full = 2, empty = 1, arange = 1, eye = 1, linspace = 1}, counts)
    assert.are.equal('float64', b.dtype)              -- x's dtype
    assert.are.equal('float64', c.dtype)
    assert.are.equal('int64', d.dtype)                -- an integer value
    assert.are.same({{2.5, 2.5, 2.5}, {2.5, 2.5, 2.5}}, e:totable())
    assert.are.same({0, 1, 2, 3, 4}, g:totable())
    assert.are.same({{1, 0}, {0, 1}}, h:totable())
    assert.are.same({0, 0.5, 1}, i:totable())
    assert.is_true(a:sum():item() == 0 and f:numel() == 3)
    -- an integer beyond 2^53 is written exactly
    assert.are.equal((1 << 62) + 1, torch.full({1}, (1 << 62) + 1)[1])
  end)

  it("writes x[key] = v through the registry's in-place puts, which the dispatcher sees", function()
    local x = torch.zeros(3, 4)
    local ones, row, values = torch.ones(4), torch.tensor({2}), torch.arange(1, 9):float()
    torch._op_counter(true)
    x[torch.tensor({1, 3})] = ones                    -- expand, reshape, index_copy_
    x[row] = 5                                        -- index_fill_
    x[x:gt(2)] = 0                                    -- gt, masked_fill_
    x[x:eq(1)] = values                               -- eq, expand, masked_scatter_
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({expand = 2, reshape = 1, index_copy = 1, index_fill = 1, gt = 1, masked_fill = 1, eq = 1,
                     masked_scatter = 1}, counts)
    assert.are.same({{1, 2, 3, 4}, {0, 0, 0, 0}, {5, 6, 7, 8}}, x:totable())
  end)

  it("composes isclose, allclose and equal of the registry's ops, as PyTorch does", function()
    local a, b = torch.tensor({1.0, 0 / 0, 3}), torch.tensor({1.0, 0 / 0, 3.5})
    torch._op_counter(true)
    local close = torch.isclose(a, b, {equal_nan = true})
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({true, true, false}, close:totable())
    -- a == b, or NaN beside NaN, or |a - b| <= atol + |rtol b| where finite
    assert.are.same({eq = 1, isnan = 2, logical_and = 2, logical_or = 2, mul = 1, abs = 2, add = 1, sub = 1,
                     isfinite = 1, le = 1}, counts)
    torch._op_counter(true)
    assert.is_false(torch.allclose(a, b))
    assert.is_true(torch.equal(a:narrow(1, 1, 1), b:narrow(1, 1, 1)))
    counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.equal(2, counts.all)                   -- allclose's and equal's
    assert.are.equal(2, counts.eq)
  end)

  it('sees the optimizer steps through the dispatcher, one call per parameter and step', function()
    local nn, optim = require 'nn', require 'optim'
    local model = nn.Linear(3, 2)
    local x = sample('any', {4, 3}, 1):float()
    local adam, sgd = optim.Adam(model:parameters(), {lr = 0.01}), optim.SGD(model:parameters(), {lr = 0.1})
    model(x):sum():backward()
    torch._op_counter(true)
    adam:step()                                       -- optim_adam for the weight and the bias
    sgd:step()                                        -- optim_sgd, the same
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.equal(2, counts.optim_adam)
    assert.are.equal(2, counts.optim_sgd)
  end)

  it('sees the random ops through the dispatcher; a sampler cuts the history and refuses an expanded tensor', function()
    local x = sample('any', {2, 3}, 1):requires_grad_()
    torch._op_counter(true)
    local a = torch.rand(2, 3)                        -- uniform_ on a new tensor
    local b = torch.randn_like(a)                     -- normal_
    local c = torch.randint(1, 7, {4})                -- random_
    local d = torch.bernoulli(a)                      -- bernoulli
    local e = torch.normal(x, 0.5)                    -- normal
    local f = torch.multinomial(a, 2)                 -- multinomial: two rows, two draws each
    local g = torch.randperm(5)                       -- randperm
    local h = (x * 2):exponential_()                  -- mul, exponential_
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({uniform_ = 1, normal_ = 1, random_ = 1, bernoulli = 1, normal = 1, multinomial = 1,
                     randperm = 1, mul = 1, exponential_ = 1}, counts)
    assert.is_false(e.requires_grad)                  -- a sample: no history
    assert.is_false(h.requires_grad)
    assert.is_nil(h.grad_fn)
    assert.are.same({2, 2}, f:size():totable())
    assert.are.same({1, 2, 3, 4, 5}, g:sort():totable())
    assert.is_true(b:size(1) == 2 and c:min():item() >= 1 and c:max():item() <= 6 and d:numel() == 6)
    local ok, err = pcall(function() torch.zeros(4):expand(3, 4):uniform_() end)
    assert.is_false(ok)
    assert.truthy(tostring(err):find('uniform_: unsupported operation', 1, true), err)
  end)

  for _, op in ipairs(OPS) do
    if op.differentiable then
      it('derivative of ' .. op.name .. ' matches finite differences on every layout', function()
        local f = callable(op)
        for i, c in ipairs(calls(op)) do
          check(c[2], c[1], op.name .. ' call ' .. i)
        end
        if op.name == 'add' or op.name == 'sub' then       -- alpha
          check(function(a, b) return f(a, b, {alpha = 2.5}) end, layouts(op.domain, 2)[1], op.name .. ' alpha')
        end
      end)
    end
  end

  it('sees every call through the dispatcher, derivatives and compositions included', function()
    local x = sample('pos', {2, 3}, 1):float():requires_grad_()
    local y = sample('pos', {2, 3}, 2):float()
    torch._op_counter(true)
    local z = x + y                    -- add
    local w = torch.mul(z, 2)          -- mul
    local e = w:exp()                  -- exp, saving its result
    local q = (-e) // 3                -- neg, div_floor
    local r = y:clone():add_(1):round({decimals = 1})   -- clone, add, then mul, round, div
    e:sum():backward()                 -- sum; exp's derivative G * R is a mul, mul's another
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({add = 2, mul = 4, exp = 1, neg = 1, div_floor = 1, clone = 1, round = 1, div = 1, sum = 1}, counts)
    local _ = x * 2                    -- the counter is off: nothing more is counted
    assert.are.same(counts, torch._op_counts())
    assert.is_true(q:numel() == 6 and r:numel() == 6)
  end)

  it('sees selections and products through the dispatcher, with their backward', function()
    local x = sample('any', {2, 3}, 1):requires_grad_()
    local w = sample('any', {4, 3}, 2)
    torch._op_counter(true)
    local v = x:max(2)                 -- max_dim: its node is MaxBackward
    local s = x:sort(1, true)          -- sort
    local p = x:mm(w:t())              -- t, mm, and one more in each backward reaching x
    local m = (p * 1):addmm_(x, w:t(), {beta = 0.5})   -- mul, t, addmm (in place, under autograd)
    m:sum():backward()                 -- sum; addmm's input gradient G * beta is a mul; x's two gradients add
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({max_dim = 1, sort = 1, t = 2, mm = 3, mul = 2, addmm = 1, sum = 1, add = 1}, counts)
    assert.are.equal('MaxBackward', v.grad_fn:name())
    assert.are.equal('SortBackward', s.grad_fn:name())
    assert.are.equal('AddmmBackward', m.grad_fn:name())
  end)

  it('sees the ops with parameters through the dispatcher; clamp with one bound is clamp_min or clamp_max', function()
    local x = sample('any', {2, 3}, 1):requires_grad_()
    torch._op_counter(true)
    local a = x:clamp(-0.5, 0.5)                      -- clamp
    local b = x:clamp({min = 0})                      -- clamp_min
    local c = (x * 1):lerp_(a, 0.25)                  -- mul, lerp (in place, under autograd)
    local d = torch.addcmul(b, c, x, {value = 2})     -- addcmul
    local e = torch.clamp(d, nil, 1):leaky_relu(0.2)  -- clamp_max, leaky_relu
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({clamp = 1, clamp_min = 1, mul = 1, lerp = 1, addcmul = 1, clamp_max = 1, leaky_relu = 1}, counts)
    assert.are.equal('ClampBackward', a.grad_fn:name())
    assert.are.equal('ClampMinBackward', b.grad_fn:name())
    assert.are.equal('LerpBackward', c.grad_fn:name())
    assert.are.equal('AddcmulBackward', d.grad_fn:name())
    assert.are.equal('LeakyReluBackward', e.grad_fn:name())
  end)

  it('sees the nn kernels through the dispatcher, their backward included', function()
    local x = sample('any', {1, 2, 5, 5}, 1):requires_grad_()
    local w = sample('any', {3, 2, 3, 3}, 2):requires_grad_()
    local b = sample('any', {3}, 3):requires_grad_()
    torch._op_counter(true)
    local y = torch._conv2d(x, w, b, 1, 1, 1, 1, 1, 1, 1, 1, 1)                 -- conv2d: 5x5, padded
    local z = torch._avg_pool2d(y, 2, 2, 2, 2, 0, 0, false, false, false)      -- avg_pool2d: 2x2
    local u = torch._unfold(z, 1, 1, 1, 1, 0, 0, 1, 1)                         -- im2col
    local v = torch._fold(u, 2, 2, 1, 1, 1, 1, 0, 0, 1, 1)                     -- col2im
    local n = torch._layer_norm(v, 2, nil, nil, 1e-5)                          -- layer_norm
    -- sum; then each map's adjoint: layer_norm's fused kernel (no op), im2col for col2im, col2im
    -- for im2col, resample_adjoint for avg_pool2d, and conv2d's input adjoint (conv_transpose2d) and
    -- its weight adjoint (conv2d_weight, the bias's gradient in the same pass)
    n:sum():backward()
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({conv2d = 1, avg_pool2d = 1, im2col = 2, col2im = 2, layer_norm = 1, sum = 1,
                     resample_adjoint = 1, conv_transpose2d = 1, conv2d_weight = 1}, counts)
    assert.are.equal('ConvolutionBackward', y.grad_fn:name())
    assert.are.equal('AvgPool2DBackward', z.grad_fn:name())
    assert.are.equal('Im2ColBackward', u.grad_fn:name())
    assert.are.equal('Col2ImBackward', v.grad_fn:name())
    assert.are.equal('NativeLayerNormBackward', n.grad_fn:name())
  end)

  it('sees conversions through the dispatcher as `to`, their backward included; x itself is no op', function()
    local x = sample('any', {2, 3}, 1):float():requires_grad_()
    torch._op_counter(true)
    local same = x:float()                               -- x itself: nothing converted, no op
    local a = x:double()                                 -- to
    local b = x:to('float32', {copy = true})             -- to: a copy forced
    local c = x:type('torch.HalfTensor')                 -- to
    ;(a:sum() + b:sum()):backward()   -- sum twice, add; a's gradient back to float32 (to); b:sum()'s
                                      -- gradient is float64 (the add promoted), back to float32 (to);
                                      -- x's two gradients add
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({to = 5, sum = 2, add = 2}, counts)
    assert.is_true(rawequal(same, x))
    assert.are.equal('ToCopyBackward', a.grad_fn:name())
    assert.are.equal('ToCopyBackward', b.grad_fn:name())
    assert.are.equal('float16', c.dtype)
    assert.are.same({{2, 2, 2}, {2, 2, 2}}, x.grad:totable())
  end)

  it('sees the index ops through the dispatcher, their backward included', function()
    local x = sample('any', {3, 4}, 1):requires_grad_()
    torch._op_counter(true)
    local a = x:index_select(2, {4, 1, 4})       -- index_select
    local b = x:index(1, torch.tensor({2, 2}))   -- Torch7's name of index_select
    local c = x:gather(2, torch.tensor({{1, 1}, {2, 3}, {4, 4}}))   -- gather
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({index_select = 2, gather = 1}, counts)
    assert.are.equal('IndexSelectBackward', a.grad_fn:name())
    assert.are.equal('IndexSelectBackward', b.grad_fn:name())
    assert.are.equal('GatherBackward', c.grad_fn:name())
    -- the gradient adds up at repeated indices (from the definition)
    torch.autograd.backward({a:sum(), b:sum(), c:sum()})
    assert.are.same({{3, 0, 0, 2}, {3, 3, 3, 4}, {1, 0, 0, 4}}, x.grad:totable())
  end)

  it('sees the puts through the dispatcher, in place under autograd included', function()
    local x = sample('any', {3, 4}, 1):requires_grad_()
    local src = sample('any', {3, 2}, 2):requires_grad_()
    local index = torch.tensor({{4, 1}, {2, 3}, {1, 2}})
    torch._op_counter(true)
    local a = x:scatter(2, index, src)                  -- scatter
    local b = x:scatter(2, index, 0.5)                  -- scatter_fill: scatter with a value
    local c = (x * 1):index_add_(2, {2, 4}, src, {alpha = 2})   -- mul, index_add (in place)
    local d = x:index_fill(1, {3}, -1)                  -- index_fill
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({scatter = 1, scatter_fill = 1, mul = 1, index_add = 1, index_fill = 1}, counts)
    assert.are.equal('ScatterBackward', a.grad_fn:name())
    assert.are.equal('IndexAddBackward', c.grad_fn:name())
    assert.are.equal('IndexFillBackward', d.grad_fn:name())
    -- from the definition: x keeps g where nothing was written; src gets g where it went
    torch.autograd.backward({a:sum(), c:sum()})
    assert.are.same({{1, 2, 2, 1}, {2, 1, 1, 2}, {1, 1, 2, 2}}, x.grad:totable())
    assert.are.same({{3, 3}, {3, 3}, {3, 3}}, src.grad:totable())
    assert.are.equal(0.5, b[1][4])
  end)

  it('sees the views through the dispatcher, their backward and in-place forms included', function()
    local x = sample('any', {3, 4}, 1):requires_grad_()
    torch._op_counter(true)
    local a = x:narrow(2, 2, 2)                  -- narrow
    local b = x:view(4, 3):t()                   -- view, t
    local c = torch.swapaxes(x, 1, 2)            -- transpose, by an alias
    local d = (x * 1):tril_(1)                   -- mul, tril (in place, under autograd)
    local e = x:unfold(2, 2, 1)                  -- unfold
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({narrow = 1, view = 1, t = 1, transpose = 1, mul = 1, tril = 1, unfold = 1}, counts)
    assert.are.equal('NarrowBackward', a.grad_fn:name())
    assert.are.equal('TBackward', b.grad_fn:name())
    assert.are.equal('TransposeBackward', c.grad_fn:name())
    assert.are.equal('TrilBackward', d.grad_fn:name())
    assert.are.equal('UnfoldBackward', e.grad_fn:name())
    -- from the definition: each element's gradient counts the places it reaches
    torch.autograd.backward({a:sum(), b:sum(), c:sum(), d:sum(), e:sum()})
    assert.are.same({{4, 6, 5, 3}, {4, 6, 6, 3}, {4, 6, 6, 4}}, x.grad:totable())
  end)

  it('sees the joins, and split, chunk and unbind as views, through the dispatcher', function()
    local x = sample('any', {3, 4}, 1):requires_grad_()
    local y = sample('any', {2, 4}, 2):requires_grad_()
    torch._op_counter(true)
    local c = torch.cat({x, y})                  -- cat
    local s = torch.stack({x, x * 2}, 2)         -- mul, stack
    local parts = x:split(3, 2)                  -- narrow twice (sizes 3 and 1)
    local rows = x:unbind(1)                     -- select three times
    local halves = torch.concat(y, y, {dim = 2}):chunk(2, 2)   -- cat by its alias, narrow twice
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({cat = 2, mul = 1, stack = 1, narrow = 4, select = 3}, counts)
    assert.are.equal('CatBackward', c.grad_fn:name())
    assert.are.equal('StackBackward', s.grad_fn:name())
    assert.are.equal('NarrowBackward', parts[2].grad_fn:name())
    assert.are.equal('SelectBackward', rows[3].grad_fn:name())
    -- from the definition: x reaches c once, s once and twice (times 2), parts[1] in
    -- columns 1..3 and rows[2] in row 2; y reaches c once and halves[2] (its second copy)
    torch.autograd.backward({c:sum(), s:sum(), parts[1]:sum(), rows[2]:sum(), halves[2]:sum()})
    assert.are.same({{5, 5, 5, 4}, {6, 6, 6, 5}, {5, 5, 5, 4}}, x.grad:totable())
    assert.are.same({{2, 2, 2, 2}, {2, 2, 2, 2}}, y.grad:totable())
  end)

  it('sees where through the dispatcher in both its forms, with a number on either side', function()
    local x = sample('any', {2, 3}, 1):requires_grad_()
    local y = sample('any', {1, 3}, 2):requires_grad_()
    local cond = torch.tensor({{true, false, true}, {false, false, true}})
    torch._op_counter(true)
    local a = torch.where(cond, x, y)            -- where, y broadcast
    local b = x:where(cond, 0.5)                 -- where: x where cond holds, else 0.5
    local c = torch.where(cond, 2, y)            -- where, a number first
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({where = 3}, counts)
    assert.are.equal('WhereBackward', a.grad_fn:name())
    assert.are.same({{x[1][1], 0.5, x[1][3]}, {0.5, 0.5, x[2][3]}}, b:detach():totable())
    -- from the definition: x takes g where cond holds (a and b), y where it does not (a and c), summed over rows
    torch.autograd.backward({a:sum(), b:sum(), c:sum()})
    assert.are.same({{2, 0, 2}, {0, 0, 2}}, x.grad:totable())
    assert.are.same({{2, 4, 0}}, y.grad:totable())
  end)

  it('sees x[index] and x[mask] as the registry index_select between views', function()
    local x = sample('any', {3, 4}, 1):requires_grad_()
    local all = torch.ones(3, 4):bool()
    torch._op_counter(true)
    local a = x[torch.tensor({{3, 1}, {3, 3}})]  -- index_select, view
    local b = x[torch.tensor({true, false, true})]   -- index_select, view (one leading dim: nothing to merge)
    local c = x[torch.tensor(true)]              -- unsqueeze, index_select, view
    local d = x[all]                             -- flatten, index_select, view
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({index_select = 4, view = 4, flatten = 1, unsqueeze = 1}, counts)
    assert.are.same({2, 2, 4}, a:size():totable())
    assert.are.same({2, 4}, b:size():totable())
    assert.are.same({1, 3, 4}, c:size():totable())
    assert.are.same(x[3]:totable(), a[1][1]:totable())
    -- from the definition: a row's gradient counts how often it was picked
    torch.autograd.backward({a:sum(), b:sum(), c:sum(), d:sum()})
    assert.are.same({{4, 4, 4, 4}, {2, 2, 2, 2}, {6, 6, 6, 6}}, x.grad:totable())
  end)

  it('sees argmax, argmin and argsort through the dispatcher, as selections that give indices', function()
    local x = torch.tensor({{1, 5, 2}, {7, 0, 7}})
    torch._op_counter(true)
    local a = x:argmax()                         -- argmax of every element: the first 7
    local b = torch.argmin(x, 2, true)           -- argmin along dim 2, kept
    local c = x:argsort(2, true)                 -- sort, its indices alone
    local counts = torch._op_counts()
    torch._op_counter(false)
    assert.are.same({argmax = 1, argmin = 1, sort = 1}, counts)
    assert.are.equal(4, a:item())
    assert.are.same({{1}, {2}}, b:totable())
    assert.are.same({{2, 3, 1}, {1, 3, 2}}, c:totable())
  end)
end)
