-- Torch7's simple layers by their Torch7 names and constructor arguments: values
-- by definition, gradients by nn.Jacobian, Torch7's files both ways, and errors.
local torch = require 'torch'
local nn = require 'nn'

local PRECISION = 1e-5
local function t(v) return torch.tensor(v, {dtype = 'float64'}) end
local x = t({{-2.0, -0.25, 0.0}, {0.5, 1.5, 3.0}})

local function close(expected, got, tol)
  expected = torch.is_tensor(expected) and expected or t(expected)
  assert.are.same(expected:size():totable(), got:size():totable())
  assert.is_true((expected - got:double()):abs():max():item() <= (tol or 1e-12), tostring(got))
end

describe('Torch7 simple layers', function()
  it('add and multiply by learned tensors', function()
    local add = nn.Add(3):double()
    close(x + add.bias, add:forward(x))
    local scalar = nn.Add(3, true):double()
    assert.are.equal(1, scalar.bias:numel())
    close(x + scalar.bias:item(), scalar:forward(x))
    local cadd = nn.CAdd(2, 1):double()
    close(x + cadd.bias:expand(2, 3), cadd:forward(x))
    local mul = nn.Mul():double()
    close(x * mul.weight:item(), mul:forward(x))
    local cmul = nn.CMul(3):double()
    close(x * cmul.weight:view(1, 3), cmul:forward(x))
    close(x * nn.CMul(torch.LongStorage({2, 3})):double().weight, nn.CMul(2, 3):double():forward(x), 10)
  end)

  it('take views: Narrow, Select, Replicate, Transpose, Squeeze, Unsqueeze', function()
    close({{-0.25, 0}, {1.5, 3}}, nn.Narrow(2, 2, 2):forward(x))
    close({{0}, {3}}, nn.Narrow(-1, 3):forward(x))
    close({{-0.25, 0}, {1.5, 3}}, nn.Narrow(2, 2, -1):forward(x))
    close({{-2, -0.25}, {0.5, 1.5}}, nn.Narrow(2, -2):forward(x))
    close({0, 3}, nn.Select(2, -1):forward(x))
    close({0.5, 1.5, 3}, nn.Select(1, 2):forward(x))
    assert.are.same({4, 2, 3}, nn.Replicate(4):forward(x):size():totable())
    assert.are.same({2, 4, 3}, nn.Replicate(4, 1, 1):forward(x):size():totable())
    close(x:t(), nn.Transpose({1, 2}):forward(x))
    assert.is_true(nn.Transpose({1, 2}):forward(x):is_contiguous())
    assert.are.same({3, 4, 2}, nn.Transpose({1, 3}, {1, 2}):forward(torch.zeros(2, 3, 4)):size():totable())
    assert.are.same({2, 3}, nn.Squeeze():forward(torch.zeros(2, 1, 3, 1)):size():totable())
    assert.are.same({2, 3, 1}, nn.Squeeze(1):forward(torch.zeros(1, 2, 3, 1)):size():totable())
    assert.are.same({1, 3}, nn.Squeeze(nil, 2):forward(torch.zeros(1, 1, 3)):size():totable())
    assert.are.same({2, 1, 3}, nn.Unsqueeze(2):forward(x):size():totable())
    assert.are.same({5, 2, 1, 3}, nn.Unsqueeze(2, 2):forward(torch.zeros(5, 2, 3)):size():totable())
  end)

  it('pad, reduce and index', function()
    close({{-2, -0.25, 0, 9, 9}, {0.5, 1.5, 3, 9, 9}}, nn.Padding(2, 2, nil, 9):forward(x))
    close({{9, -2, -0.25, 0}, {9, 0.5, 1.5, 3}}, nn.Padding(2, -1, nil, 9):forward(x))
    close({{-2, 7, -0.25, 0}, {0.5, 7, 1.5, 3}}, nn.Padding(1, -1, 1, 7, 2):forward(x))
    close({0, 3}, nn.Max(2):forward(x))
    close({-2, -0.25, 0}, nn.Min(1):forward(x))
    close({-0.75, 5 / 3}, nn.Mean(-1):forward(x), 1e-12)
    close({-2.25, 5}, nn.Sum(2):forward(x))
    close({{-0.75}, {5 / 3}}, nn.Sum(2, nil, true, false):forward(x), 1e-12)
    close({-0.75, 5 / 3}, nn.Sum(1, 1, true):forward(x), 1e-12)
    close({3}, nn.Max(1):forward(t({1, 3, 2})))
    close({{0.5, 1.5, 3}, {-2, -0.25, 0}},
          nn.Index(1):forward({x, torch.tensor({2, 1}, {dtype = 'int64'})}))
    close({{0, 1, 0}, {0, 0, 1}}, nn.OneHot(3):forward(torch.tensor({2, 3}, {dtype = 'int64'})))
    close({-2, -0.25, 0, 0.5, 1.5, 3}, nn.Collapse(2):forward(x))
    assert.are.same({2, 12}, nn.Collapse(2):forward(torch.zeros(2, 3, 4)):size():totable())
  end)

  it('compute distances and cosines', function()
    local euclidean = nn.Euclidean(3, 2):double()
    local w = euclidean.weight
    local out = euclidean:forward(x)
    for j = 1, 2 do
      assert.is_near((x:select(1, 2) - w:select(2, j)):norm():item(), out:select(1, 2):select(1, j):item(), 1e-12)
    end
    local weighted = nn.WeightedEuclidean(3, 2):double()
    torch.no_grad(function() weighted.diagCov:fill_(2) end)
    assert.is_near(2 * (x:select(1, 1) - weighted.weight:select(2, 1)):norm():item(),
                   weighted:forward(x):select(1, 1):select(1, 1):item(), 1e-12)
    local cosine = nn.Cosine(3, 2):double()
    local row, x2 = cosine.weight:select(1, 1):detach(), x:select(1, 2)
    assert.is_near(row:dot(x2):item() / (row:norm():item() * x2:norm():item()),
                   cosine:forward(x):select(1, 2):select(1, 1):item(), 1e-9)
    close({{0, 0}}, nn.Cosine(2, 2):double():forward(t({{0, 0}})))
  end)

  it('normalize, pass, reverse and zero gradients, and give constants', function()
    local n2 = nn.Normalize(2):forward(t({{3, 4}}))
    close({{0.6, 0.8}}, n2, 1e-9)
    close({{0.75, -1}}, nn.Normalize(math.huge):forward(t({{3, -4}})), 1e-9)
    close(x, nn.GradientReversal():forward(x))
    local ones = torch.ones(2, 3, {dtype = 'float64'})
    local reversal, zero = nn.GradientReversal(0.5), nn.ZeroGrad()
    reversal:forward(x)
    close(-0.5 * ones, reversal:backward(x, ones))
    close(x, zero:forward(x))
    close(ones * 0, zero:backward(x, ones))
    close({{5}, {5}}, nn.Constant(5, 1):forward(x))
    close({5}, nn.Constant(5):forward(x))
    assert.are.equal('torch.FloatTensor', nn.Copy('torch.DoubleTensor', 'torch.FloatTensor'):forward(x):type())
  end)

  it("give Torch7's transfer functions by Torch7's names", function()
    close(x:relu(), nn.RReLU():evaluate():forward(x:clamp(0, 10)))
    close({{-2 * 11 / 48, -0.25 * 11 / 48, 0}, {0.5, 1.5, 3}}, nn.RReLU():evaluate():forward(x), 1e-12)
    local train = nn.RReLU(0.1, 0.2):forward(-torch.ones(1000, {dtype = 'float64'}))
    assert.is_true(train:max():item() <= -0.1 and train:min():item() >= -0.2)
    close({{0, 0, 0, 2, 0.25, 0}, {0.5, 1.5, 3, 0, 0, 0}}, nn.CReLU(1):forward(x))
    assert.are.same({2, 4}, nn.CReLU(1):forward(t({{1, 2}, {3, 4}})):size():totable())
    assert.are.same({4, 2}, nn.CReLU(2):forward(t({{1, 2}, {3, 4}})):size():totable())
    local image = torch.randn(2, 3, 4, 5, {dtype = 'float64'})
    close(torch.ones(2, 4, 5, {dtype = 'float64'}), nn.SpatialSoftMax():forward(image):sum(2), 1e-12)
    close(torch.ones(4, 5, {dtype = 'float64'}), nn.SpatialSoftMax():forward(image[1]):sum(1), 1e-12)
    close({{-1, -0.25, 0}, {0.5, 1, 1}}, nn.HardTanh():forward(x))
    close({{-1, -0.25, 0}, {0.5, 1.5, 2}}, nn.HardTanh(-1, 2):forward(x))
    close(((x * 2):exp() + 1):log() / 2, nn.SoftPlus(2):forward(x), 1e-12)
    close(x:softmax(2), nn.SoftMax():forward(x), 1e-12)
    close((-x):softmax(2), nn.SoftMin():forward(x), 1e-12)
    close(x:log_softmax(2), nn.LogSoftMax():forward(x), 1e-12)
  end)

  it('pass the Jacobian check', function()
    local input = torch.zeros(3, 4, {dtype = 'float64'})
    local mods = {nn.Add(4), nn.Add(4, true), nn.CAdd(3, 4), nn.CAdd(1, 4), nn.Mul(), nn.CMul(4), nn.CMul(3, 4),
                  nn.Narrow(2, 2, 2), nn.Select(2, -1), nn.Replicate(3), nn.Replicate(2, 2, 1), nn.Transpose({1, 2}),
                  nn.Squeeze(), nn.Unsqueeze(2), nn.Padding(2, 2), nn.Padding(2, -1, 2, 5, 2), nn.Max(2), nn.Min(1),
                  nn.Sum(2), nn.Mean(-1), nn.Euclidean(4, 5), nn.WeightedEuclidean(4, 5), nn.Cosine(4, 2),
                  nn.Collapse(1), nn.Normalize(2), nn.Normalize(1.5), nn.CReLU(1), nn.SpatialSoftMax(),
                  nn.RReLU():evaluate()}
    for _, m in ipairs(mods) do
      m:double()
      local err = nn.Jacobian.testJacobian(m, input)
      assert.is_true(err < PRECISION, torch.typename(m) .. ': ' .. err)
      for _, p in ipairs(m:parameters()) do
        p.grad = torch.zeros_like(p)
        err = nn.Jacobian.testJacobianParameters(m, input, p, p.grad)
        assert.is_true(err < PRECISION, torch.typename(m) .. ' parameters: ' .. err)
      end
    end
  end)

  it("are written to Torch7's files and read back with their settings", function()
    local input = torch.rand(3, 4, {dtype = 'float64'})
    for _, m in ipairs({nn.Add(4), nn.CMul(3, 4), nn.Mul(), nn.CAdd(4), nn.Narrow(2, 2, 2), nn.Select(1, 2),
                        nn.Replicate(2, 2), nn.Transpose({1, 2}), nn.Unsqueeze(1), nn.Padding(1, -2, 2, 3),
                        nn.Sum(2, nil, true), nn.Max(1), nn.Mean(2), nn.Euclidean(4, 2), nn.WeightedEuclidean(4, 2),
                        nn.Cosine(4, 2), nn.Normalize(2), nn.CReLU(1), nn.SpatialSoftMax(), nn.HardTanh(-0.5, 0.5),
                        nn.SoftPlus(2), nn.ELU(0.5), nn.SoftMin()}) do
      local ferr, berr = nn.Jacobian.testIO(m:double(), input)
      assert.are.equal(0, ferr, torch.typename(m))
      assert.are.equal(0, berr, torch.typename(m))
    end
  end)

  it('name the module and the shapes in errors', function()
    assert.has_error(function() nn.CMul(4):forward(torch.zeros(2, 3)) end,
                     'nn.CMul: parameter of size 4 does not fit input of size 2x3')
    assert.has_error(function() nn.Narrow(2, 3, 2):forward(torch.zeros(2, 3)) end,
                     'nn.Narrow: offset 3, length 2 do not fit dim 2 of input of size 2x3')
    assert.has_error(function() nn.Select(3, 1):forward(torch.zeros(2, 3)) end,
                     'nn.Select: dimension 3 is out of range for input of size 2x3')
    assert.has_error(function() nn.Max(3):forward(torch.zeros(2, 3)) end,
                     'nn.Max: dim 3 is out of range for input of size 2x3')
    assert.has_error(function() nn.Euclidean(4, 2):forward(torch.zeros(2, 3)) end,
                     'nn.Euclidean: expected input of size 4 or (batch, 4), got 2x3')
    assert.has_error(function() nn.Cosine(4, 2):forward(torch.zeros(3)) end,
                     'nn.Cosine: expected input of size 4 or (batch, 4), got 3')
    assert.has_error(function() nn.OneHot(3):forward(torch.tensor({4})) end,
                     'nn.OneHot: indices must lie in 1..3, got input of size 1 with values 4..4')
    assert.has_error(function() nn.Normalize(2):forward(torch.zeros(2, 3, 4)) end,
                     'nn.Normalize: expected a vector or a batch of rows, got input of size 2x3x4')
    assert.has_error(function() nn.RReLU(0.5, 0.1) end, 'nn.RReLU: expected 0 <= l <= u, got 0.5, 0.1')
  end)
end)

describe('nn.Reshape', function()
  it("follows Torch7's batch rule: a 1 x n input is a batch of one, batchMode says which", function()
    local r = nn.Reshape(4, 8)
    assert.are.same({1, 4, 8}, r:forward(torch.randn(1, 32)):size():totable())
    assert.are.same({4, 8}, r:forward(torch.randn(32)):size():totable())
    assert.are.same({3, 4, 8}, r:forward(torch.randn(3, 32)):size():totable())
    assert.are.same({4, 8}, nn.Reshape(4, 8, false):forward(torch.randn(1, 32)):size():totable())
    assert.are.same({2, 4, 8}, nn.Reshape(4, 8, true):forward(torch.randn(2, 32)):size():totable())
    assert.are.same({2, 16}, nn.Reshape(2, 16):forward(torch.randn(4, 8)):size():totable())
  end)
end)
