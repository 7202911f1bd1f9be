-- What a node saves for backward: an op whose derivative is written from its
-- result (exp, tanh, sigmoid, ...) saves the result alone, as PyTorch's; its
-- input may then change in place, its result may not.
local torch = require 'torch'
local support = dofile('spec/support/gradients.lua')
local close = support.close

-- op -> its derivative at v (a Lua number), and inputs where it is defined
local from_result = {
  exp = {function(v) return math.exp(v) end},
  expm1 = {function(v) return math.exp(v) end},
  tanh = {function(v) return 1 - math.tanh(v) ^ 2 end},
  sigmoid = {function(v) local s = 1 / (1 + math.exp(-v)) return s * (1 - s) end},
  sqrt = {function(v) return 0.5 / math.sqrt(v) end},
  rsqrt = {function(v) return -0.5 * v ^ -1.5 end},
  reciprocal = {function(v) return -1 / (v * v) end},
  tan = {function(v) return 1 + math.tan(v) ^ 2 end},
  relu = {function(v) return v > 0 and 1 or 0 end, {-0.5, 0.75, 2.0}},
}
local default_values = {0.25, 0.5, 1.5}
local names = {}
for name in pairs(from_result) do names[#names + 1] = name end
table.sort(names)

-- PyTorch's node name: 'expm1' -> 'Expm1Backward'
local function node_name(op) return op:sub(1, 1):upper() .. op:sub(2) .. 'Backward' end

describe('ops whose derivative reads their result', function()
  for _, op in ipairs(names) do
    local derivative, values = from_result[op][1], from_result[op][2] or default_values

    it(op .. ' saves only its result: its input may change in place afterwards', function()
      local leaf = torch.tensor(values, {dtype = 'float64'}):requires_grad_()
      local x = leaf * 1
      local y = x[op](x)
      assert.are.equal(node_name(op), y.grad_fn:name())
      assert.are.equal(1, #y.grad_fn.saved_shapes)
      x:add_(10)                                 -- recorded in place on the input
      torch.no_grad(function() x:mul_(3) end)    -- and behind autograd's back
      y:sum():backward()
      local want = {}
      for i, v in ipairs(values) do want[i] = derivative(v) end
      close(leaf.grad, torch.tensor(want, {dtype = 'float64'}), 1e-12)
    end)

    it(op .. ' still refuses a backward after its result changed in place', function()
      local leaf = torch.tensor(values, {dtype = 'float64'}):requires_grad_()
      local y = leaf[op](leaf)
      y:mul_(2)
      local ok, err = pcall(function() y:sum():backward() end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find('modified by an inplace operation', 1, true))
      assert.truthy(tostring(err):find('needed by ' .. node_name(op), 1, true))
      local z = leaf[op](leaf)
      torch.no_grad(function() z:add_(1) end)
      assert.has_error(function() z:sum():backward() end)
    end)
  end

  it('in place (x:exp_(), x:relu_(), ...) saves x itself: no copy of the result is kept', function()
    for _, op in ipairs({'exp', 'tanh', 'sigmoid', 'sqrt', 'rsqrt', 'relu'}) do
      local derivative = from_result[op][1]
      local values = from_result[op][2] or default_values
      local leaf = torch.tensor(values, {dtype = 'float64'}):requires_grad_()
      local x = leaf * 1
      x[op .. '_'](x)
      x:sum():backward()
      local want = {}
      for i, v in ipairs(values) do want[i] = derivative(v) end
      close(leaf.grad, torch.tensor(want, {dtype = 'float64'}), 1e-12)
      local y = leaf * 1
      y[op .. '_'](y)
      y:add_(1)                                  -- y is what the node saved
      local ok, err = pcall(function() y:sum():backward() end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find('needed by ' .. node_name(op), 1, true))
    end
    local big = torch.randn(512, 512):requires_grad_()
    collectgarbage(); collectgarbage()
    local before = torch.memory_stats().allocated
    local h = big * 1
    h:relu_()
    collectgarbage(); collectgarbage()
    local held, size = torch.memory_stats().allocated - before, 512 * 512 * 4
    assert.is_true(held >= size and held < 1.5 * size, 'held ' .. held .. ', h alone is ' .. size)
  end)

  it('softmax and log_softmax save only their result', function()
    for _, op in ipairs({'softmax', 'log_softmax'}) do
      local leaf = torch.tensor({{0.1, -0.4, 0.9}, {1.2, 0.3, -0.8}}, {dtype = 'float64'}):requires_grad_()
      local x = leaf * 1
      local y = x[op](x, 2)
      assert.are.equal(1, #y.grad_fn.saved_shapes)
      local w = torch.tensor({{1, 2, 3}, {-1, 0.5, 2}}, {dtype = 'float64'})
      x:zero_()
      ;(y * w):sum():backward()
      local want = support.numeric_grad(function(t) return (t[op](t, 2) * w):sum() end,
                                        torch.tensor({{0.1, -0.4, 0.9}, {1.2, 0.3, -0.8}}, {dtype = 'float64'}))
      close(leaf.grad, want, 1e-8)
      local z = leaf[op](leaf, 2)
      z:add_(1)
      assert.has_error(function() z:sum():backward() end)
    end
  end)

  it('gives second derivatives through the saved result (create_graph)', function()
    local second = {
      exp = function(v) return math.exp(v) end,
      tanh = function(v) local t = math.tanh(v) return -2 * t * (1 - t * t) end,
      sigmoid = function(v) local s = 1 / (1 + math.exp(-v)) return s * (1 - s) * (1 - 2 * s) end,
      sqrt = function(v) return -0.25 * v ^ -1.5 end,
      reciprocal = function(v) return 2 / v ^ 3 end,
    }
    for op, f in pairs(second) do
      local x = torch.tensor(default_values, {dtype = 'float64'}):requires_grad_()
      local g = torch.autograd.grad(x[op](x):sum(), x, {create_graph = true})[1]
      local gg = torch.autograd.grad(g:sum(), x)[1]
      local want = {}
      for i, v in ipairs(default_values) do want[i] = f(v) end
      close(gg, torch.tensor(want, {dtype = 'float64'}), 1e-10)
    end
  end)

  it('ops reading their input save the input alone, ops reading neither save nothing', function()
    local x = torch.rand(3, {dtype = 'float64'}):add_(0.5):requires_grad_()
    for _, op in ipairs({'log', 'sin', 'gelu', 'abs', 'square'}) do
      assert.are.equal(1, #x[op](x).grad_fn.saved_shapes)
    end
    for _, op in ipairs({'neg', 'floor', 'round', 'sign', 'frac'}) do
      assert.are.equal(0, #x[op](x).grad_fn.saved_shapes)
    end
    -- GELU's tanh approximation is one op too, not a chain of saved intermediates
    local F = require 'nn.functional'
    assert.are.equal(1, #F.gelu(x, {approximate = 'tanh'}).grad_fn.saved_shapes)
  end)

  it('keeps one activation per layer of a chain of products and tanh, not two', function()
    local n, layers = 256, 8
    local ws = {}
    for i = 1, layers do ws[i] = (torch.randn(n, n) / 16):requires_grad_() end
    local x = torch.randn(n, n)
    collectgarbage(); collectgarbage()
    local before = torch.memory_stats().allocated
    local h = x
    for i = 1, layers do h = h:mm(ws[i]):tanh() end
    collectgarbage(); collectgarbage()
    local held = torch.memory_stats().allocated - before
    local act = n * n * 4
    -- each tanh result (the next product's input); the products' results are freed
    assert.is_true(held >= layers * act, 'held ' .. held)
    assert.is_true(held < (layers + 1) * act, 'held ' .. held .. ' bytes, one activation is ' .. act)
    h:sum():backward()
    assert.is_not_nil(ws[1].grad)
  end)

  -- A plain backward (no create_graph) takes relu's, tanh's and sigmoid's derivative in
  -- one kernel; it must give what the definition gives, in float32 and float64, on
  -- contiguous and strided results, and what create_graph's recorded formula gives.
  it('relu, tanh and sigmoid give the derivative from the definition in one pass', function()
    local v = torch.linspace(-3, 3, 601)
    v[301] = 0                                             -- relu's kink: gradient 0 at 0
    local g = torch.linspace(-2, 1, 601)
    local defs = {
      relu = function(x) return x > 0 and 1 or 0 end,
      tanh = function(x) return 1 - math.tanh(x) ^ 2 end,
      sigmoid = function(x) local s = 1 / (1 + math.exp(-x)) return s * (1 - s) end,
    }
    for op, def in pairs(defs) do
      for _, dtype in ipairs({'float32', 'float64'}) do
        for _, strided in ipairs({false, true}) do
          local base = strided and torch.stack({v, v * 0}, 2):select(2, 1) or v
          local x = base:to(dtype):detach():requires_grad_()
          local y = x[op](x)
          local gg = (strided and torch.stack({g, g}, 2):select(2, 1) or g):to(dtype)   -- a strided gradient too
          local plain = torch.autograd.grad(y, x, {grad_outputs = gg, retain_graph = true})[1]
          local recorded = torch.autograd.grad(y, x, {grad_outputs = gg, create_graph = true})[1]:detach()
          local want = torch.zeros(601, {dtype = 'float64'})
          for i = 1, 601 do want[i] = g[i] * def(x[i]) end
          local tol = dtype == 'float32' and 1e-6 or 1e-12
          assert.is_true((plain:double() - want):abs():max():item() <= tol, op .. ' ' .. dtype)
          assert.is_true((plain - recorded):abs():max():item() <= tol, op .. ' ' .. dtype .. ' against create_graph')
        end
      end
    end
  end)
end)
