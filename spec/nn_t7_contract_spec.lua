-- Torch7's Module contract under the Torch7 dialect (th --torch7): m:training() and
-- m.train, the user's writes into parameters and module outputs, full reductions of
-- them as numbers, plain tensors as parameters, getParameters' flattening, listModules,
-- findModules, replace, reset, clearState, backward without forward, and the
-- containers' error context. The PyTorch dialect keeps its answers (checked beside).
local torch = require 'torch'
local nn = require 'nn'

local in_torch7 = dofile('spec/support/dialect.lua').in_torch7

local function max_diff(a, b)
  return (a:double():reshape(-1) - b:double():reshape(-1)):abs():max()
end

describe("Torch7's training flag", function()
  it('is m:training() / m:evaluate() with the field m.train in the Torch7 dialect', function()
    in_torch7(function()
      local seq = nn.Sequential():add(nn.Linear(2, 2)):add(nn.Dropout(0.5))
      assert.is_true(seq.train)
      seq:evaluate()
      assert.is_false(seq.train)
      assert.is_false(seq.modules[2].train)
      seq:training()
      assert.is_true(seq.modules[2].train)
      seq.modules[2].train = false                     -- the field, as Torch7's code sets it
      local x = torch.ones(4, 10)
      local d = nn.Dropout(0.5)
      d.train = false
      assert.are.equal(0, max_diff(d:forward(x), x))   -- evaluation: the identity
    end)
  end)

  it('stays the boolean m.training and the method m:train() in the PyTorch dialect', function()
    local m = nn.Linear(2, 2)
    assert.is_true(m.training)
    m:train(false)
    assert.is_false(m.training)
    m:eval()
    assert.are.equal('boolean', type(m.training))
  end)
end)

describe("the user's writes into parameters", function()
  it('happen in the Torch7 dialect, and the parameter still trains', function()
    in_torch7(function()
      local m = nn.Linear(3, 2)
      m.weight:fill(0.5)
      m.bias:zero()
      assert.are.equal(0.5, m.weight[1][2])
      assert.is_true(m.weight.requires_grad)
      local x = torch.Tensor({{1, 2, 3}})
      local y = m:forward(x)
      assert.are.equal(3, y[1][1])                     -- 0.5 * (1 + 2 + 3)
      m:zeroGradParameters()
      m:backward(x, torch.Tensor({{1, 1}}))
      assert.are.same({{1, 2, 3}, {1, 2, 3}}, m.gradWeight:totable())
      m.bias:resize(4)                                 -- Torch7 resized parameters too
      assert.are.equal(4, m.bias:size(1))
    end)
  end)

  it('are refused in the PyTorch dialect, as PyTorch', function()
    local m = nn.Linear(3, 2)
    local ok, err = pcall(function() m.weight:fill_(1) end)
    assert.is_false(ok)
    assert.truthy(err:find('a leaf Variable that requires grad', 1, true))
    ok, err = pcall(function() m.bias:resize_(4) end)
    assert.is_false(ok)
    assert.truthy(err:find('cannot resize a tensor that requires grad', 1, true))
  end)

  it("leave backward's graph alone when the user writes a module's output", function()
    in_torch7(function()
      local m = nn.Linear(2, 2)
      m.weight:copy(torch.Tensor({{1, 2}, {3, 4}}))
      m.bias:fill(-5)
      local x = torch.Tensor({1, 1})
      local y = m:forward(x)
      y:sign()                                         -- Torch7: y written in place
      assert.are.same({-1, 1}, y:totable())
      local gi = m:backward(x, torch.Tensor({1, 10}))
      assert.are.same({31, 42}, gi:totable())          -- W^T g, not through sign
    end)
  end)
end)

describe('full reductions in the Torch7 dialect', function()
  it("give numbers for parameters, gradients and outputs", function()
    in_torch7(function()
      local m = nn.Linear(2, 2)
      m.weight:fill(1)
      m.bias:fill(0.5)
      assert.are.equal('number', type(m.weight:sum()))
      assert.are.equal(4, m.weight:sum())
      assert.is_true(math.abs(m.bias:norm() - math.sqrt(0.5)) < 1e-12)
      local out = m:forward(torch.Tensor({1, 1}))
      assert.are.equal(5, out:sum())                   -- (1 + 1 + 0.5) * 2
      assert.are.equal(0, (m.weight - torch.ones(2, 2)):abs():max())
    end)
  end)

  it('keep a tensor for a value the user asked gradients of', function()
    in_torch7(function()
      local w = torch.ones(3, {requires_grad = true})
      local m = nn.Linear(3, 1)
      local s = m(w):sum()                             -- through the user's leaf w
      assert.is_true(torch.is_tensor(s))
      s:backward()
      assert.are.same({3}, w.grad:size():totable())
    end)
  end)
end)

describe('plain tensors in parameter slots', function()
  it('become the parameter, the same object, in the Torch7 dialect', function()
    in_torch7(function()
      local m = nn.Linear(3, 2)
      local w = torch.Tensor(2, 3):fill(2)
      m.weight = w
      assert.are.equal(w, m.weight)
      local ps = m:parameters()
      assert.are.equal(w, ps[1])
      local out = m:forward(torch.Tensor({1, 0, 0}))
      assert.is_true(math.abs(out:sum() - (4 + m.bias:sum())) < 1e-12)
      local g = torch.Tensor(2, 3):fill(0)
      m.gradWeight = g                                 -- the gradient of weight from now on
      m:backward(torch.Tensor({1, 0, 0}), torch.Tensor({1, 1}))
      assert.are.same({{1, 0, 0}, {1, 0, 0}}, m.gradWeight:totable())
    end)
  end)

  it('are refused in the PyTorch dialect', function()
    local m = nn.Linear(3, 2)
    local ok, err = pcall(function() m.weight = torch.zeros(2, 3) end)
    assert.is_false(ok)
    assert.truthy(err:find("cannot assign 'torch.FloatTensor' as parameter 'weight'", 1, true))
  end)
end)

describe("getParameters, Torch7's flattening", function()
  it('keeps values and makes every parameter and gradient a view', function()
    in_torch7(function()
      local n = nn.Sequential():add(nn.Linear(10, 10))
      local w0 = n.modules[1].weight:clone()
      local p, g = n:getParameters()
      assert.are.equal(110, p:nElement())
      assert.are.equal(110, g:nElement())
      assert.are.equal(0, (p[{{1, 100}}] - n.modules[1].weight):norm())
      assert.are.equal(0, (n.modules[1].weight - w0):norm())
      p:fill(3)
      assert.are.equal(3, n.modules[1].bias[4])
      n:forward(torch.ones(10))
      n:backward(torch.ones(10), torch.ones(10))
      assert.are.equal(10, g[{{101, 110}}]:sum())      -- the bias gradient, 1 each
    end)
  end)

  it('keeps shared parameters shared, once, and takes appended modules', function()
    in_torch7(function()
      local n = nn.Sequential():add(nn.Linear(10, 10))
      n:add(n.modules[1]:clone('weight', 'bias', 'gradWeight', 'gradBias'))
      local p = n:getParameters()
      assert.are.equal(110, p:nElement())
      n:reset()
      assert.are.equal(0, (p[{{1, 100}}] - n.modules[2].weight):norm())
      n:add(nn.Linear(10, 10))
      p = n:getParameters()
      assert.are.equal(220, p:nElement())
      assert.are.equal(0, (p[{{111, 210}}] - n.modules[3].weight):norm())
      assert.are.equal(0, (p[{{1, 100}}] - n.modules[1].weight):norm())
    end)
  end)

  it('gathers compact tensors in their layout and refuses tensors with holes', function()
    in_torch7(function()
      local l = nn.Linear(10, 10)
      l.weight = torch.Tensor(10, 10):t():fill(1)      -- transposed: compact
      local tmp = torch.Tensor(10, 10):fill(2)
      l.bias = tmp:select(1, 2)                        -- 10 of 100: the rest left out
      local p = l:getParameters()
      assert.are.equal(110, p:nElement())
      assert.are.equal(110, p:storage():size())
      assert.are.equal(1, l.weight:mean())
      assert.are.equal(2, l.bias:mean())
      assert.are.same({1, 10}, {l.weight:stride(1), l.weight:stride(2)})
      local bad = nn.Linear(10, 10)
      bad.bias = torch.Tensor(10, 10):fill(2):select(2, 2)   -- stride 10: holes
      local ok, err = pcall(bad.getParameters, bad)
      assert.is_false(ok)
      assert.truthy(err:find('not compact', 1, true))
    end)
  end)
end)

describe("Torch7's module walks", function()
  it('listModules lists self then each child, depth first', function()
    local lin, tanh, id = nn.Linear(2, 2), nn.Tanh(), nn.Identity()
    local inner = nn.Sequential():add(lin):add(tanh)
    local ct = nn.ConcatTable():add(inner):add(id)
    local add = nn.CAddTable()
    local top = nn.Sequential():add(ct):add(add)
    local list = top:listModules()
    assert.are.equal(7, #list)
    assert.are.equal(top, list[1])
    assert.are.equal(ct, list[2])
    assert.are.equal(inner, list[3])
    assert.are.equal(lin, list[4])
    assert.are.equal(tanh, list[5])
    assert.are.equal(id, list[6])
    assert.are.equal(add, list[7])
  end)

  it('findModules finds by class name with the containers', function()
    local a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    local inner = nn.Sequential():add(b)
    local top = nn.Sequential():add(a):add(nn.Tanh()):add(inner)
    local found, containers = top:findModules('nn.Linear')
    assert.are.equal(2, #found)
    assert.are.equal(a, found[1])
    assert.are.equal(top, containers[1])
    assert.are.equal(b, found[2])
    assert.are.equal(inner, containers[2])
  end)

  it('replace puts what the function returns in place of each module', function()
    local s = nn.Sequential():add(nn.Linear(2, 2)):add(nn.Sigmoid())
    s:replace(function(m) return torch.type(m) == 'nn.Sigmoid' and nn.Tanh() or m end)
    assert.are.equal('nn.Tanh', torch.type(s:get(2)))
    local x = torch.randn(3, 2)
    local y = s(x)
    assert.is_true(max_diff(y, torch.tanh(s:get(1)(x))) < 1e-6)
    local single = nn.Tanh():replace(function() return nn.Sigmoid() end)
    assert.are.equal('nn.Sigmoid', torch.type(single))
  end)

  it('zeroGradParameters and updateParameters see every change to the structure between steps', function()
    in_torch7(function()
      -- p moves by -lr * its gradient (1 after a sum's backward); checked against p's value before
      local function step(model, x, lr)
        model:zeroGradParameters()
        model:backward(x, model:forward(x):clone():fill(1))
        model:updateParameters(lr)
      end
      local x = torch.ones(1, 2)
      local a = nn.Linear(2, 2)
      local model = nn.Sequential():add(a)
      step(model, x, 0.5)                                 -- the walk is made and kept
      local b = nn.Linear(2, 2)                           -- a child added after it
      model:add(b)
      local bb = b.bias:clone()
      step(model, x, 0.5)
      assert.is_true(max_diff(b.bias, bb - 0.5) < 1e-6)  -- d sum / d bias = 1
      local w = nn.Parameter(torch.zeros(2))              -- a parameter replaced by another
      b.bias = w
      step(model, x, 0.25)
      assert.is_true(max_diff(w, torch.full({2}, -0.25)) < 1e-6)
      local c = nn.Linear(2, 2)                           -- a child replaced in place
      model[2] = c
      local cb = c.bias:clone()
      step(model, x, 0.5)
      assert.is_true(max_diff(c.bias, cb - 0.5) < 1e-6)
      model:remove(2)                                     -- a child taken out is left alone
      local cb2 = c.bias:clone()
      step(model, x, 0.5)
      assert.is_true(max_diff(c.bias, cb2) == 0)
      local d = nn.Linear(2, 2)                           -- a module whose bias is shared with a's
      model:add(d)
      d:share(a, 'bias')
      local ab = a.bias:clone()
      local through_d = d.weight:sum(1):view(2)          -- d sum / d a's output: d.weight^T 1
      step(model, x, 0.5)
      assert.are.equal(a.bias, d.bias)
      assert.is_true(max_diff(a.bias, ab - (through_d + 1) * 0.5) < 1e-5)  -- moved once, by both gradients
    end)
  end)

  it('reset draws new values in place, with Torch7 stdv', function()
    in_torch7(function()
      local s = nn.Sequential():add(nn.Linear(4, 4))
      local w = s.modules[1].weight
      local before = w:clone()
      s:reset()
      assert.are.equal(w, s.modules[1].weight)
      assert.is_true((w - before):norm() > 0)
      assert.is_true(w:abs():max() <= 0.5)             -- 1/sqrt(4)
      local b = nn.Sequential():add(nn.Bilinear(2, 2, 3))    -- no reset of its own
      b:reset(0.01)
      local bw = b.modules[1].weight
      assert.is_true(bw:abs():max() <= 0.01 * math.sqrt(3))
      assert.is_true(bw:std() > 0)
    end)
  end)

  it('clearState drops the outputs and keeps the module working', function()
    in_torch7(function()
      local m = nn.Sequential():add(nn.Linear(3, 2)):add(nn.Tanh())
      m:forward(torch.ones(3))
      assert.is_not_nil(m.modules[2].output)
      assert.are.equal(m, m:clearState())
      assert.is_true(m.modules[2].output == nil or m.modules[2].output:nElement() == 0)
      local y = m:forward(torch.ones(3))
      assert.are.same({2}, y:size():totable())
    end)
  end)
end)

describe("Torch7's dropout arguments", function()
  it("v1 keeps the kept elements unscaled and scales by 1-p in evaluation", function()
    local d = nn.Dropout(0.25, true)
    local x = torch.ones(1000)
    local y = d(x)
    for i = 1, 1000 do assert.is_true(y[i] == 0 or y[i] == 1) end
    d:eval()
    assert.are.same({0.75, 0.75}, d(torch.ones(2)):totable())
    local s = nn.Dropout(0.5, false, false, true)          -- stochastic inference
    s:eval()
    local z = s(torch.ones(1000))
    assert.is_true(z:eq(0):sum():item() > 0)
    assert.is_true(z:eq(2):sum():item() > 0)               -- v2: scaled by 1/(1-p)
  end)

  it('SpatialDropout drops whole feature maps unscaled, and scales by 1-p in evaluation', function()
    local d = nn.SpatialDropout(0.5)
    assert.are.equal('nn.SpatialDropout', torch.type(d))
    local y = d(torch.ones(2, 50, 3, 3))
    for n = 1, 2 do
      for c = 1, 50 do
        local v = y[n][c][1][1]
        assert.is_true(v == 0 or v == 1)
        assert.are.equal(9 * v, y[n][c]:sum():item())
      end
    end
    d:eval()
    assert.are.equal(0.5, d(torch.ones(1, 2, 2, 2))[1][1][1][1])
  end)
end)

describe("Torch7's batch normalizations", function()
  it("take Torch7's arguments, one sample in evaluation, and Torch7's files", function()
    in_torch7(function()
      local m = nn.SpatialBatchNormalization(3, 1e-3, 0.2, false)
      assert.are.equal(1e-3, m.eps)
      assert.are.equal(0.2, m.momentum)
      assert.is_nil(m.weight)
      local bn = nn.BatchNormalization(2)
      bn.running_mean:copy(torch.Tensor({1, 2}))
      bn.running_var:copy(torch.Tensor({4, 9}))
      bn.weight:copy(torch.Tensor({2, 3}))
      bn.bias:copy(torch.Tensor({0.5, -1}))
      bn:evaluate()
      local y = bn:forward(torch.Tensor({3, 8}))           -- (x - mean) / sqrt(var + eps) * w + b
      assert.is_true(math.abs(y[1] - (2 / math.sqrt(4 + 1e-5) * 2 + 0.5)) < 1e-9)
      assert.is_true(math.abs(y[2] - (6 / math.sqrt(9 + 1e-5) * 3 - 1)) < 1e-9)
      local f = torch.MemoryFile('rw'):binary()
      f:writeObject(bn)
      f:seek(1)
      local back = f:readObject()
      f:close()
      assert.are.equal('nn.BatchNorm1d', torch.typename(back))      -- moontorch's class of that name
      assert.are.same({4, 9}, back.running_var:totable())
      assert.are.same({2, 3}, back.weight:totable())
      assert.is_false(back.train)
    end)
  end)
end)

describe("Torch7's type()", function()
  it('converts every floating tensor field and keeps shared memory shared', function()
    in_torch7(function()
      local function net()
        local s = nn.Sequential():add(nn.Linear(3, 2)):add(nn.Linear(3, 2))
        s.modules[1].bias:fill(1)
        s.modules[2].bias:fill(2)
        return s
      end
      local a = net()
      a.modules[1].scratch = torch.Tensor(4)
      local w = a.modules[1].weight
      a:float()
      assert.are.equal('torch.FloatTensor', a.modules[1].bias:type())
      assert.are.equal('torch.FloatTensor', a.modules[1].scratch:type())
      assert.are.equal(w, a.modules[1].weight)           -- the parameter object stays
      local b = net()
      local base = torch.Tensor(15):fill(1)
      b.modules[1].bias = base:narrow(1, 1, 10)
      b.modules[2].bias = base:narrow(1, 6, 10)          -- overlapping views
      b:float()
      b.modules[1].bias:fill(3)
      assert.are.equal(3, b.modules[2].bias[1])
      assert.are.equal(1, b.modules[2].bias[6])
      local c1, c2 = net(), net()
      c2.modules[1].bias:set(c1.modules[1].bias)
      local cache = {}
      c1:type('torch.FloatTensor', cache)
      c2:type('torch.FloatTensor', cache)                -- one cache: still shared
      c1.modules[1].bias:fill(5)
      assert.are.equal(5, c2.modules[1].bias[1])
      local d1, d2 = net(), net()
      d2.modules[1].bias:set(d1.modules[1].bias)
      nn.utils.recursiveType({d1, d2}, 'torch.FloatTensor')
      d1.modules[1].bias:fill(7)
      assert.are.equal(7, d2.modules[1].bias[1])
      assert.are.equal('torch.FloatTensor', d2.modules[2].weight:type())
    end)
  end)
end)

describe("Torch7's backward", function()
  it('runs forward on the given input when there was none', function()
    in_torch7(function()
      local m = nn.Tanh()
      local x = torch.Tensor({0.5, -1, 2})
      local gi = m:backward(x, torch.Tensor({1, 2, 3}))
      for i = 1, 3 do
        local t = math.tanh(x[i])
        assert.is_true(math.abs(gi[i] - i * (1 - t * t)) < 1e-12)
      end
      local h = nn.HardTanh()
      local g2 = h:updateGradInput(torch.Tensor({0.5, 3}), torch.Tensor({1, 1}))
      assert.are.same({1, 0}, g2:totable())
    end)
  end)

  it("reads a gradOutput of the output's element count in the output's shape", function()
    in_torch7(function()
      local m = nn.CMaxTable()
      local a, b = torch.Tensor({{1, 3}, {2, 4}}), torch.Tensor({{4, 2}, {3, 1}})
      m:forward({a, b})
      local gi = m:backward({a, b}, torch.Tensor({5, 6, 7, 8}))
      assert.are.same({{0, 6}, {0, 8}}, gi[1]:totable())
      assert.are.same({{5, 0}, {7, 0}}, gi[2]:totable())
    end)
  end)
end)

describe("the containers' errors", function()
  it("name each container on the way, Torch7's way, in the Torch7 dialect", function()
    in_torch7(function()
      local p = nn.Parallel(1, 1):add(nn.Linear(1, 1))
      local c = nn.Concat(1):add(p)
      local model = nn.Sequential():add(nn.Identity()):add(c):add(nn.Identity())
      local ok, err = pcall(function() model:forward(torch.randn(1, 2, 2)) end)
      assert.is_false(ok)
      assert.truthy(err:find('In 2 module of nn.Sequential:\nIn 1 module of nn.Concat:\n'
                             .. 'In 1 module of nn.Parallel:\n', 1, true), err)
      assert.truthy(err:find('size mismatch', 1, true))
    end)
  end)

  it('pass through unchanged in the PyTorch dialect', function()
    local model = nn.Sequential(nn.Identity(), nn.Linear(1, 1))
    local ok, err = pcall(function() model(torch.randn(2, 2)) end)
    assert.is_false(ok)
    assert.is_nil(err:find('module of', 1, true))
    assert.truthy(err:find('nn.Linear: expected input with 1 features', 1, true))
  end)
end)

describe("Torch7's gradInput = nil (nobody reads this gradient)", function()
  -- Linear(2, 1) with weight {1, 2} and bias 0.5 at x = {{1, 1}, {2, 0}}, gradOutput ones:
  -- gradWeight = gradOutput^T x = {3, 1}, gradBias = 2, gradInput = gradOutput W = rows {1, 2}
  local function model_of()
    local lin = nn.Linear(2, 1)
    torch.no_grad(function() lin.weight:copy(torch.tensor({{1, 2}})); lin.bias:fill(0.5) end)
    return nn.Sequential():add(lin):add(nn.Identity()), lin
  end
  local x, go
  local function in_torch7_with_data(fn)
    in_torch7(function()
      x, go = torch.Tensor({{1, 1}, {2, 0}}), torch.ones(2, 1)   -- the dialect's default type
      fn()
    end)
  end

  it("on a Sequential's first module skips gradInput and keeps the parameters' gradients", function()
    in_torch7_with_data(function()
      local model, lin = model_of()
      model:zeroGradParameters()
      model:forward(x)
      local gi = model:backward(x, go)
      assert.are.equal(0, max_diff(gi, torch.tensor({{1, 2}, {1, 2}})))
      lin.gradInput = nil
      model:zeroGradParameters()
      model:forward(x)
      assert.is_nil(model:backward(x, go))
      assert.is_nil(model.gradInput)
      assert.is_nil(lin.gradInput)
      assert.is_false(x.requires_grad)
      assert.is_nil(x.grad)
      assert.are.equal(0, max_diff(lin.gradWeight, torch.tensor({{3, 1}})))
      assert.are.equal(2, lin.gradBias[1])
      model:updateParameters(0.5)                      -- w - 0.5 gradWeight
      assert.are.equal(0, max_diff(lin.weight, torch.tensor({{-0.5, 1.5}})))
      lin.gradInput = torch.Tensor()                    -- wanted again
      model:forward(x)
      assert.are.equal(0, max_diff(model:backward(x, go), torch.tensor({{-0.5, 1.5}, {-0.5, 1.5}})))
    end)
  end)

  it('on a module itself, and nested Sequentials through their first modules', function()
    in_torch7_with_data(function()
      local model, lin = model_of()
      local outer = nn.Sequential():add(model):add(nn.Identity())
      lin.gradInput = nil
      outer:forward(x)
      assert.is_nil(outer:backward(x, go))
      assert.are.equal(0, max_diff(lin.gradWeight, torch.tensor({{3, 1}})))
      local solo = model_of().modules[1]
      solo.gradInput = nil
      solo:forward(x)
      assert.is_nil(solo:backward(x, go))
    end)
  end)

  it("reads nil in a class written as Torch7's, whose updateGradInput checks it", function()
    in_torch7_with_data(function()
      local Half, parent = torch.class('nn.SpecHalfGrad', 'nn.Module')
      function Half:__init() parent.__init(self) end
      function Half:updateOutput(input) self.output = input * 0.5; return self.output end
      function Half:updateGradInput(input, gradOutput)
        if self.gradInput then self.gradInput = gradOutput * 0.5; return self.gradInput end
      end
      local m = nn.SpecHalfGrad()
      assert.is_true(torch.is_tensor(m.gradInput))     -- Torch7's empty buffer at first
      m.gradInput = nil
      assert.is_nil(m.gradInput)
      m:forward(x)
      assert.is_nil(m:backward(x, go:expand(2, 2)))
      m.gradInput = torch.Tensor()
      m:forward(x)
      assert.are.equal(0, max_diff(m:backward(x, torch.ones(2, 2)), torch.full({2, 2}, 0.5)))
    end)
  end)
end)
