-- Torch7's Module contract on moontorch's nn: output and gradInput, the
-- parameter methods, getParameters, clone sharing, a class written as Torch7's
-- (updateOutput and updateGradInput, no autograd) training inside Sequential,
-- nn.Jacobian's checks, Torch7's printing.
local torch = require 'torch'
local nn = require 'nn'

local PRECISION = 1e-5

local function double(t) return t:to('float64') end

-- nn.SpecScale: y = x * weight (a vector over the last dim), Torch7's way
local Scale = torch.class('nn.SpecScale', 'nn.Module')
function Scale:__init(n)
  nn.Module.__init(self)
  self.weight = torch.randn(n, {dtype = 'float64'})
  self.gradWeight = torch.zeros(n, {dtype = 'float64'})
end
function Scale:updateOutput(input)
  self.output = input * self.weight
  return self.output
end
function Scale:updateGradInput(input, gradOutput)
  self.gradInput = gradOutput * self.weight
  return self.gradInput
end
function Scale:accGradParameters(input, gradOutput, scale)
  self.gradWeight:add_((input * gradOutput):sum(1) * (scale or 1))
end

describe('Torch7 Module contract', function()
  it('forward and backward keep output and gradInput', function()
    local m = double(nn.Linear(3, 2))
    local x = torch.randn(4, 3, {dtype = 'float64'})
    local y = m:forward(x)
    assert.are.equal(y, m.output)
    local gi = m:backward(x, torch.ones(4, 2, {dtype = 'float64'}))
    assert.are.equal(gi, m.gradInput)
    assert.are.same({4, 3}, gi:size():totable())
    assert.is_true(torch.allclose(gi, torch.ones(4, 2, {dtype = 'float64'}):mm(m.weight:detach())))
  end)

  it('parameters() gives the weights and their gradients by position', function()
    local m = nn.Linear(3, 2)
    local x = torch.randn(4, 3)
    m:zeroGradParameters()
    m:forward(x)
    m:backward(x, torch.ones(4, 2))
    local ws, gws = m:parameters()
    assert.are.equal(2, #ws)
    assert.are.equal(m.weight, ws[1])
    assert.is_true(torch.equal(m.gradWeight, gws[1]))
    assert.is_true(torch.allclose(gws[2], torch.full({2}, 4.0)))
  end)

  it('getParameters flattens into one storage that the modules keep using', function()
    local m = nn.Sequential(nn.Linear(3, 2), nn.Tanh(), nn.Linear(2, 1))
    local w, gw = m:getParameters()
    assert.are.equal(3 * 2 + 2 + 2 + 1, w:numel())
    torch.no_grad(function() w:fill_(0.5) end)
    assert.are.equal(0.5, m[1].weight[1][1])
    local x = torch.randn(5, 3)
    m:zeroGradParameters()
    m:forward(x)
    m:backward(x, torch.ones(5, 1))
    assert.is_true(gw:abs():sum():item() > 0)
    assert.is_true(torch.equal(gw:narrow(1, 1, 6):view(2, 3), m[1].gradWeight))
  end)

  it('clone(names) shares those parameters, clone() copies them', function()
    local m = nn.Linear(3, 2)
    local shared = m:clone('weight', 'bias', 'gradWeight', 'gradBias')
    local copy = m:clone()
    torch.no_grad(function() m.weight:fill_(1) end)
    assert.are.equal(1, shared.weight[1][1])
    assert.are_not.equal(1, copy.weight[1][1])
  end)

  it('updateParameters and accUpdateGradParameters move the weights by the gradient', function()
    local m = double(nn.Linear(3, 2))
    local x, go = torch.randn(4, 3, {dtype = 'float64'}), torch.randn(4, 2, {dtype = 'float64'})
    local w0 = m.weight:detach():clone()
    local c = m:clone()
    m:zeroGradParameters()
    m:forward(x)
    m:backward(x, go)
    m:updateParameters(0.1)
    c:forward(x)
    c:accUpdateGradParameters(x, go, 0.1)
    assert.is_true(torch.allclose(m.weight, c.weight))
    assert.is_true(torch.allclose(m.weight, w0 - go:t():mm(x) * 0.1))
  end)

  it("a class with only updateOutput/updateGradInput/accGradParameters trains inside Sequential", function()
    torch.manual_seed(3)
    local model = nn.Sequential(double(nn.Linear(3, 3)), nn.SpecScale(3), double(nn.Linear(3, 1)))
    local w, gw = model:getParameters()
    assert.are.equal(12 + 3 + 4, w:numel())
    local x = torch.randn(16, 3, {dtype = 'float64'})
    local y = x:sum(2):view(16, 1)
    local first, last
    for i = 1, 200 do
      gw:zero_()
      local out = model:forward(x)
      local diff = out - y
      local loss = (diff ^ 2):mean():item()
      model:backward(x, diff * (2 / 16))
      torch.no_grad(function() w:add_(gw, {alpha = -0.05}) end)
      first, last = first or loss, loss
    end
    assert.is_true(last < first * 0.05, 'loss ' .. first .. ' -> ' .. last)
    assert.is_true(model[2].gradWeight:abs():sum():item() > 0)
  end)

  it('the same class also trains PyTorch style (model(x), loss:backward())', function()
    local model = nn.Sequential(nn.SpecScale(2))
    local x = torch.randn(3, 2, {dtype = 'float64', requires_grad = true})
    local out = model(x)
    out:sum():backward()
    assert.is_true(torch.allclose(x.grad, model[1].weight:view(1, 2):expand(3, 2)))
    assert.is_true(torch.allclose(model[1].gradWeight, x:detach():sum(1)))
  end)

  it('Sequential.modules is the list of children; modules() still lists descendants', function()
    local m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Tanh()))
    assert.are.equal(2, #m.modules)
    assert.are.equal(m[1], m.modules[1])
    assert.are.equal(4, #m:modules())
  end)
end)

describe('nn.Jacobian', function()
  it('checks the input Jacobian of modules', function()
    local x = torch.randn(2, 4, {dtype = 'float64'})
    for _, m in ipairs({nn.Linear(4, 3), nn.Tanh(), nn.Sigmoid(), nn.SpecScale(4),
                        nn.Sequential(nn.Linear(4, 2), nn.Tanh())}) do
      local err = nn.Jacobian.testJacobian(double(m), x)
      assert.is_true(err < PRECISION, torch.typename(m) .. ': ' .. err)
    end
  end)

  it('checks parameters, updates, writing and reading back', function()
    local m = double(nn.Linear(4, 3))
    local x = torch.randn(2, 4, {dtype = 'float64'})
    assert.is_true(nn.Jacobian.testJacobianParameters(m, x, m.weight, m.gradWeight) < PRECISION)
    assert.is_true(nn.Jacobian.testJacobianParameters(m, x, m.bias, m.gradBias) < PRECISION)
    assert.is_true(nn.Jacobian.testJacobianUpdateParameters(m, x, m.weight) < PRECISION)
    local s = nn.SpecScale(4)
    assert.is_true(nn.Jacobian.testJacobianParameters(s, x, s.weight, s.gradWeight) < PRECISION)
    local ferr, berr = nn.Jacobian.testIO(m, x)
    assert.are.equal(0, ferr)
    assert.are.equal(0, berr)
    for name, err in pairs(nn.Jacobian.testAllUpdate(m, x, 'weight', 'gradWeight')) do
      assert.is_true(err < PRECISION, name .. ': ' .. err)
    end
  end)

  it('finds a wrong backward', function()
    local Wrong = torch.class('nn.SpecWrongGrad', 'nn.Module')
    function Wrong:updateOutput(input) self.output = input * 2; return self.output end
    function Wrong:updateGradInput(input, gradOutput) self.gradInput = gradOutput * 3; return self.gradInput end
    local err = nn.Jacobian.testJacobian(nn.SpecWrongGrad(), torch.randn(3, {dtype = 'float64'}))
    assert.is_true(math.abs(err - 1) < 1e-6)
  end)

  it('names the module at fault', function()
    assert.has_error(function() nn.Jacobian.testJacobian(nn.Tanh(), 3) end,
                     'nn.Jacobian.testJacobian: expected an input tensor, got number')
  end)
end)

describe('Torch7 printing', function()
  it("__tostring__ gives Torch7's text", function()
    local m = nn.Sequential(nn.Linear(2, 3), nn.Tanh())
    local text = m:__tostring__()
    assert.is_truthy(text:find('nn.Sequential {\n  [input -> (1) -> (2) -> output]', 1, true))
    assert.is_truthy(text:find('(1): nn.Linear(2 -> 3)', 1, true))
    assert.is_truthy(text:find('(2): nn.Tanh\n}', 1, true))
  end)
end)

describe("Torch7's criteria in Torch7's files", function()
  it('write their settings under Torch7\'s names and read back giving the same loss', function()
    local x = torch.tensor({{0.2, -1.0, 0.5}, {1.5, 0.3, -0.2}}, {dtype = 'float64'})
    local cls = torch.tensor({3, 1}, {dtype = 'int64'})
    local w = torch.tensor({0.5, 2, 1}, {dtype = 'float64'})
    local cases = {
      {nn.MSECriterion(false), torch.zeros(2, 3, {dtype = 'float64'}), {sizeAverage = false}},
      {nn.ClassNLLCriterion(w, false), cls, {sizeAverage = false}},
      {nn.MultiMarginCriterion(2, w, 0.5), cls, {p = 2, margin = 0.5}},
      {nn.MarginCriterion(0.3), torch.tensor({{1, -1, 1}, {-1, 1, 1}}, {dtype = 'float64'}), {margin = 0.3}},
    }
    for _, case in ipairs(cases) do
      local c, target, fields = case[1], case[2], case[3]
      local name = torch.typename(c)
      local path = os.tmpname()
      torch.save(path, c, 'binary')
      local back = torch.load(path)
      os.remove(path)
      assert.are.equal(name, torch.typename(back))
      for k, v in pairs(fields) do assert.are.equal(v, back[k], name .. '.' .. k) end
      if c.weights then assert.are.same(c.weights:totable(), back.weights:totable()) end
      assert.are.equal(c:forward(x, target), back:forward(x, target), name)
    end
  end)
end)
