-- Torch7's criteria (lib/nn/*Criterion.lua): forward gives a Lua number, backward the
-- gradient of the input. Values are worked out by hand from the formulas of torch/nn's
-- doc/criterion.md; every gradient is checked against central differences in float64.
local torch = require 'torch'
local nn = require 'nn'

local function D(t) return torch.tensor(t, {dtype = 'float64'}) end
local function L(t) return torch.tensor(t, {dtype = 'int64'}) end

local function near(got, want, tol)
  tol = tol or 1e-10
  assert.are.equal('number', type(got), 'forward must give a number')
  assert(math.abs(got - want) <= tol * math.max(1, math.abs(want)),
         string.format('got %.15g, want %.15g', got, want))
end

-- the tensors of an input (a tensor or a table of them), in order
local function tensors(v, out)
  out = out or {}
  if torch.is_tensor(v) then out[#out + 1] = v
  else for _, x in ipairs(v) do tensors(x, out) end end
  return out
end

-- d crit:forward(input, target) / d input by central differences, beside crit:backward
-- (after a forward, as Torch7's contract has it)
local function check_gradient(crit, input, target, tol)
  crit:forward(input, target)
  local analytic = tensors(crit:backward(input, target))
  local xs = tensors(input)
  assert.are.equal(#xs, #analytic, 'one gradient per input tensor')
  local h = 1e-6
  for k, x in ipairs(xs) do
    assert.are.same(x:size():totable(), analytic[k]:size():totable())
    local flat, grad = x:view(-1), analytic[k]:reshape(-1)
    for i = 1, flat:numel() do
      local v = flat[i]
      flat[i] = v + h
      local up = crit:forward(input, target)
      flat[i] = v - h
      local down = crit:forward(input, target)
      flat[i] = v
      local numeric = (up - down) / (2 * h)
      assert(math.abs(numeric - grad[i]) <= (tol or 1e-6) * math.max(1, math.abs(numeric)),
             string.format('%s: d/d input %d[%d]: numeric %.10g, backward %.10g', torch.typename(crit), k, i,
                           numeric, grad[i]))
    end
  end
end

-- uniform values in [lo, hi), reproducible
local function rand(lo, hi, ...)
  return torch.rand({...}, {dtype = 'float64'}) * (hi - lo) + lo
end

describe("Torch7's elementwise criteria", function()
  it('MSECriterion: sum (x - y)^2, over n with sizeAverage', function()
    local x, y = D({1, 2, 3}), D({1, 1, 1})
    near(nn.MSECriterion():forward(x, y), 5 / 3)
    near(nn.MSECriterion(false):forward(x, y), 5)
    local crit = nn.MSECriterion()
    near(crit:forward(D({{1, 2}, {3, 4}}), torch.zeros(2, 2, {dtype = 'float64'})), 7.5)
    near(crit.output, 7.5)
    assert.are.same({2 / 3 * 0, 2 / 3, 4 / 3}, nn.MSECriterion():backward(x, y):totable())
    -- Torch7 reads a target of as many elements in the input's shape
    near(nn.MSECriterion():forward(D({{1, 2, 3}}), y), 5 / 3)
    crit.sizeAverage = false
    near(crit:forward(x, y), 5)
  end)

  it('AbsCriterion and SmoothL1Criterion', function()
    local zero = torch.zeros(3, {dtype = 'float64'})
    near(nn.AbsCriterion():forward(D({1, -2, 3}), zero), 2)
    near(nn.AbsCriterion(false):forward(D({1, -2, 3}), zero), 6)
    -- 0.5 d^2 below 1, |d| - 0.5 above
    near(nn.SmoothL1Criterion():forward(D({0.5, 2, -3}), zero), (0.125 + 1.5 + 2.5) / 3)
    near(nn.SmoothL1Criterion(false):forward(D({0.5, 2, -3}), zero), 4.125)
  end)

  it('DistKLDivCriterion: sum y (log y - x) where y > 0', function()
    local x = D({0.5, 0.5}):log()
    near(nn.DistKLDivCriterion():forward(x, D({0.25, 0.75})), (0.25 * math.log(0.5) + 0.75 * math.log(1.5)) / 2)
    near(nn.DistKLDivCriterion(false):forward(x, D({0, 1})), -math.log(0.5))
  end)

  it('BCECriterion: -(y log x + (1 - y) log(1 - x)), weighted per element or per column', function()
    local x, y = D({0.5, 0.8}), D({1, 0})
    near(nn.BCECriterion():forward(x, y), -(math.log(0.5) + math.log(0.2)) / 2, 1e-9)
    near(nn.BCECriterion(D({2, 1})):forward(x, y), -(2 * math.log(0.5) + math.log(0.2)) / 2, 1e-9)
    near(nn.BCECriterion(nil, false):forward(x, y), -(math.log(0.5) + math.log(0.2)), 1e-9)
    -- a batch: the weights weigh each column
    local xb, yb = D({{0.5, 0.8}, {0.25, 0.5}}), D({{1, 0}, {0, 1}})
    near(nn.BCECriterion(D({2, 1})):forward(xb, yb),
         -(2 * math.log(0.5) + math.log(0.2) + 2 * math.log(0.75) + math.log(0.5)) / 4, 1e-9)
    -- 0 and 1 give a finite loss (eps inside the logs)
    assert.is_true(nn.BCECriterion():forward(D({0, 1}), D({1, 0})) < 30)
  end)

  it('MarginCriterion and SoftMarginCriterion: hinge and logistic losses of targets 1 / -1', function()
    local x, y = D({0.5, -2, 2}), D({1, 1, -1})
    near(nn.MarginCriterion():forward(x, y), (0.5 + 3 + 3) / 3)
    near(nn.MarginCriterion(2):forward(x, y), (1.5 + 4 + 4) / 3)
    local crit = nn.MarginCriterion()
    crit.sizeAverage = false
    near(crit:forward(x, y), 6.5)
    near(nn.SoftMarginCriterion():forward(D({0, 1}), D({1, -1})), (math.log(2) + math.log(1 + math.exp(1))) / 2)
    -- other targets scale x, as in Torch7's formulas
    near(nn.MarginCriterion():forward(D({0.5}), D({0.5})), 0.75)
    near(nn.SoftMarginCriterion():forward(D({2}), D({0.5})), math.log(1 + math.exp(-1)))
  end)

  it('HingeEmbeddingCriterion: x for y = 1, max(0, margin - x) for y = -1', function()
    local x, y = D({0.3, 0.4, 2}), D({1, -1, -1})
    near(nn.HingeEmbeddingCriterion():forward(x, y), 0.9 / 3)
    near(nn.HingeEmbeddingCriterion(3):forward(x, y), (0.3 + 2.6 + 1) / 3)
    near(nn.HingeEmbeddingCriterion():forward(D({0.25}), -1), 0.75)
  end)

  it('SpatialAutoCropMSECriterion: MSE against the centre of a larger target', function()
    local target = torch.arange(1, 17, {dtype = 'float64'}):view(1, 4, 4)
    -- the centre 2x2 of 1..16 in rows of 4: 6, 7, 10, 11
    local x = D({{{6, 7}, {10, 12}}})
    near(nn.SpatialAutoCropMSECriterion():forward(x, target), 1 / 4)
    near(nn.SpatialAutoCropMSECriterion(false):forward(x:view(1, 1, 2, 2), target:view(1, 1, 4, 4)), 1)
    -- an odd margin: the extra column falls at the end
    near(nn.SpatialAutoCropMSECriterion():forward(D({{{5, 6, 7}, {9, 10, 11}}}), target), 0)
  end)

  it('WeightedMSECriterion: MSE against the target times the weight', function()
    local crit = nn.WeightedMSECriterion(D({1, 2}))
    near(crit:forward(D({{1, 1}, {0, 0}}), D({{1, 1}, {1, 1}})), (0 + 1 + 1 + 4) / 4)
    near(crit:forward(D({1, 1}), D({1, 1})), 1 / 2)
    assert.is_true(torch.isTypeOf(crit, 'nn.MSECriterion'))
  end)
end)

describe("Torch7's class criteria", function()
  it('ClassNLLCriterion: -x[y], the weighted mean over the batch, ignoreIndex', function()
    local x1 = D({-1, -2, -3})
    near(nn.ClassNLLCriterion():forward(x1, 2), 2)
    near(nn.ClassNLLCriterion():forward(x1, L({2})), 2)
    -- one sample: sizeAverage divides by its own weight
    near(nn.ClassNLLCriterion(D({1, 2, 3})):forward(x1, 2), 2)
    near(nn.ClassNLLCriterion(D({1, 2, 3}), false):forward(x1, 2), 4)
    local x2 = D({{-1, -2, -3}, {-4, -5, -6}})
    near(nn.ClassNLLCriterion():forward(x2, L({3, 1})), 3.5)
    near(nn.ClassNLLCriterion():forward(x2, D({3, 1})), 3.5)
    near(nn.ClassNLLCriterion(D({1, 2, 3})):forward(x2, L({3, 1})), 13 / 4)
    near(nn.ClassNLLCriterion(nil, false):forward(x2, L({3, 1})), 7)
    near(nn.ClassNLLCriterion(nil, true, 1):forward(x2, L({3, 1})), 3)
    near(nn.ClassNLLCriterion(nil, true, 1):forward(x2, L({1, 1})), 0)
    assert.are.same({{0, 0, -0.75}, {-0.25, 0, 0}},
                    nn.ClassNLLCriterion(D({1, 2, 3})):backward(x2, L({3, 1})):totable())
    assert.are.equal(3, #nn.ClassNLLCriterion(D({1, 2, 3})))
  end)

  it('ClassNLLCriterion without weights: backward gives -1/N (or -1) at each label, for the input backward is given', function()
    local x2 = D({{-1, -2, -3}, {-4, -5, -6}})
    local crit = nn.ClassNLLCriterion()
    near(crit:forward(x2, L({3, 1})), 3.5)
    assert.are.same({{0, 0, -0.5}, {-0.5, 0, 0}}, crit:backward(x2, L({3, 1})):totable())
    crit = nn.ClassNLLCriterion(nil, false)
    near(crit:forward(x2, L({2, 2})), 7)
    assert.are.same({{0, -1, 0}, {0, -1, 0}}, crit:backward(x2, L({2, 2})):totable())
    -- one sample: the gradient has the input's shape
    crit = nn.ClassNLLCriterion()
    local x1 = D({-1, -2, -3})
    near(crit:forward(x1, 3), 3)
    assert.are.same({0, 0, -1}, crit:backward(x1, 3):totable())
    -- backward on other labels than forward's, or on a target changed in place since: its own
    local t = L({1, 1})
    crit:forward(x2, t)
    assert.are.same({{0, -0.5, 0}, {0, 0, -0.5}}, crit:backward(x2, L({2, 3})):totable())
    crit:forward(x2, t)
    t[1] = 3
    assert.are.same({{0, 0, -0.5}, {-0.5, 0, 0}}, crit:backward(x2, t):totable())
    -- an input that requires grad: the loss and gradient carry no history
    local xg = x2:clone():requires_grad_()
    near(crit:forward(xg, L({3, 1})), 3.5)
    local g = crit:backward(xg, L({3, 1}))
    assert.is_false(g.requires_grad)
    assert.are.same({{0, 0, -0.5}, {-0.5, 0, 0}}, g:totable())
  end)

  it('ClassNLLCriterion without weights: -x[y] by definition for every layout, dtype and target type', function()
    -- the definition, element by element: -(1/N) sum_i x[i][y_i] and -1/N at [i][y_i]
    local function expected(x, y, mean)
      local n, total = x:size(1), 0
      local g = torch.zeros(x:size(1), x:size(2), {dtype = 'float64'})
      for i = 1, n do
        total = total - x[i][y[i]]
        g[i][y[i]] = mean and -1 / n or -1
      end
      return mean and total / n or total, g
    end
    local base = torch.randn(3, 5, {dtype = 'float64'})
    local labels = {4, 1, 5}
    local cases = {
      {base, L(labels)},
      {base:float(), torch.tensor(labels, {dtype = 'float32'})},          -- Torch7's float labels
      {base:t():contiguous():t(), D(labels)},                             -- a column-major input
      {torch.randn(5, 3, {dtype = 'float64'}):t(), L(labels)},           -- a transposed view
      {base, L({{4}, {1}, {5}})},                                         -- labels as a column
      {base, L({4, 0, 1, 0, 5, 0}):view(3, 2):select(2, 1)},             -- labels with a stride
    }
    for k, c in ipairs(cases) do
      for _, mean in ipairs({true, false}) do
        local x, y = c[1], c[2]
        local crit = nn.ClassNLLCriterion(nil, mean)
        local want, want_g = expected(x:double(), labels, mean)
        local tol = x.dtype == 'float32' and 1e-5 or 1e-12
        assert.is_true(math.abs(crit:forward(x, y) - want) < tol, 'case ' .. k)
        local g = crit:backward(x, y)
        assert.are.equal(x.dtype, g.dtype)
        assert.is_true((g:double() - want_g):abs():max() < tol, 'case ' .. k)
      end
    end
    -- one sample given as a 1-D input and a one-element tensor
    local crit = nn.ClassNLLCriterion()
    near(crit:forward(D({-1, -2, -3}), L({3})), 3)
    assert.are.same({0, 0, -1}, crit:backward(D({-1, -2, -3}), L({3})):totable())
    -- a label equal to ignoreIndex: left out of the sum and of the count
    crit = nn.ClassNLLCriterion(nil, true, 5)
    near(crit:forward(base, L(labels)), -(base[1][4] + base[2][1]) / 2)
    assert.are.same({0, 0, 0, 0, 0}, crit:backward(base, L(labels))[3]:totable())
  end)

  it('CrossEntropyCriterion: LogSoftMax then ClassNLLCriterion (crit.nll)', function()
    near(nn.CrossEntropyCriterion():forward(D({0, 0}), 1), math.log(2))
    local x = D({{0, 0, 0}, {math.log(2), 0, 0}})
    near(nn.CrossEntropyCriterion():forward(x, L({2, 1})), math.log(6) / 2)
    near(nn.CrossEntropyCriterion(nil, false):forward(x, L({2, 1})), math.log(6))
    near(nn.CrossEntropyCriterion(D({1, 3, 1})):forward(x, L({2, 1})), (3 * math.log(3) + math.log(2)) / 4)
    -- a convolution's N x C x 1 x 1 output is squeezed, as Torch7 did
    near(nn.CrossEntropyCriterion():forward(x:view(2, 3, 1, 1), L({2, 1})), math.log(6) / 2)
    assert.are.same({2, 3, 1, 1}, nn.CrossEntropyCriterion():backward(x:view(2, 3, 1, 1), L({2, 1})):size():totable())
    -- sizeAverage set on the criterion passes on to crit.nll; set on crit.nll alone, it holds
    local crit = nn.CrossEntropyCriterion()
    crit.sizeAverage = false
    near(crit:forward(x, L({2, 1})), math.log(6))
    assert.is_false(crit.nll.sizeAverage)
    crit = nn.CrossEntropyCriterion()
    crit.nll.sizeAverage = false
    near(crit:forward(x, L({2, 1})), math.log(6))
  end)

  it('SpatialClassNLLCriterion: ClassNLLCriterion at each pixel', function()
    -- class 1's map [-1, -2], class 2's [-3, -4]; labels 1 then 2
    local x = D({{{{-1, -2}}, {{-3, -4}}}})
    near(nn.SpatialClassNLLCriterion():forward(x, L({{{1, 2}}})), 2.5)
    near(nn.SpatialClassNLLCriterion(D({1, 3})):forward(x, L({{{1, 2}}})), 13 / 4)
    near(nn.SpatialClassNLLCriterion(nil, false):forward(x, L({{{1, 2}}})), 5)
    near(nn.SpatialClassNLLCriterion():forward(x[1], L({{1, 2}})), 2.5)
  end)

  it('MultiMarginCriterion: sum over i ~= y of max(0, margin - x[y] + x[i])^p / C', function()
    local x, y = D({0.1, 0.2, 0.4}), 3
    near(nn.MultiMarginCriterion():forward(x, y), (0.7 + 0.8) / 3)
    near(nn.MultiMarginCriterion(2):forward(x, y), (0.49 + 0.64) / 3)
    near(nn.MultiMarginCriterion(1, D({1, 1, 2})):forward(x, y), 2 * 1.5 / 3)
    near(nn.MultiMarginCriterion(1, nil, 0.5):forward(x, y), (0.2 + 0.3) / 3)
    local xb = D({{0.1, 0.2, 0.4}, {0.1, 0.2, 0.4}})
    near(nn.MultiMarginCriterion():forward(xb, L({3, 1})), (1.5 / 3 + (1.1 + 1.3) / 3) / 2)
  end)

  it("MultiLabelMarginCriterion: the labels before the first 0 against the other classes", function()
    -- torch/nn's documented example: labels 3 and 1 of 4 classes
    local x, y = D({0.1, 0.2, 0.4, 0.8}), L({3, 1, 0, 4})
    near(nn.MultiLabelMarginCriterion():forward(x, y), (0.8 + 1.4 + 1.1 + 1.7) / 4)
    local xb, yb = D({{0.1, 0.2, 0.4, 0.8}, {0.1, 0.2, 0.4, 0.8}}), L({{3, 1, 0, 4}, {4, 0, 0, 0}})
    -- sample 2: label 4 (0.8) against 0.1, 0.2, 0.4
    near(nn.MultiLabelMarginCriterion():forward(xb, yb), (5 / 4 + (0.3 + 0.4 + 0.6) / 4) / 2)
  end)

  it('MultiLabelSoftMarginCriterion: the binary cross-entropy of sigmoid(x)', function()
    near(nn.MultiLabelSoftMarginCriterion():forward(D({0, 0}), D({1, 0})), math.log(2))
    near(nn.MultiLabelSoftMarginCriterion(D({1, 3})):forward(D({0, 0}), D({1, 0})), 2 * math.log(2))
    near(nn.MultiLabelSoftMarginCriterion(D({1, 3})):forward(D({{0, 0}, {0, 0}}), D({{1, 0}, {0, 1}})), 2 * math.log(2))
    near(nn.MultiLabelSoftMarginCriterion():forward(D({2}), D({1})), math.log(1 + math.exp(-2)))
  end)

  it('ClassSimplexCriterion: MSE against the vertices of a regular simplex', function()
    local crit = nn.ClassSimplexCriterion(3)
    local s = crit.simplex
    assert.are.same({3, 3}, s:size():totable())
    for i = 1, 3 do
      near((s[i] * s[i]):sum():item(), 1)
      for j = i + 1, 3 do near((s[i] * s[j]):sum():item(), -1 / 2) end
    end
    near(crit:forward(D({1, 0, 0}), 1), 0)
    near(crit:forward(torch.zeros(3, {dtype = 'float64'}), 2), 1 / 3)
    near(crit:forward(torch.zeros(2, 3, {dtype = 'float64'}), L({2, 3})), 1 / 3)
    local four = nn.ClassSimplexCriterion(4).simplex
    for i = 1, 4 do
      near(four[i][4], 0)
      for j = i + 1, 4 do near((four[i] * four[j]):sum():item(), -1 / 3) end
    end
    assert.are.same({2, 1}, crit:getTopPrediction(D({{-0.5, 0.9, 0}, {1, 0, 0}})):totable())
  end)
end)

describe("Torch7's criteria of pairs", function()
  it('L1HingeEmbeddingCriterion: the L1 distance, or max(0, margin - it)', function()
    local pair = {D({1, 2}), D({2, 4})}
    near(nn.L1HingeEmbeddingCriterion():forward(pair, 1), 3)
    near(nn.L1HingeEmbeddingCriterion(2):forward(pair, -1), 0)
    near(nn.L1HingeEmbeddingCriterion(5):forward(pair, -1), 2)
    near(nn.L1HingeEmbeddingCriterion(5):forward({D({{1, 2}, {0, 0}}), D({{2, 4}, {1, 0}})}, D({-1, 1})), (2 + 1) / 2)
  end)

  it('CosineEmbeddingCriterion: 1 - cos for y = 1, max(0, cos - margin) for y = -1', function()
    local pair = {D({1, 0}), D({1, 1})}
    local cos = 1 / math.sqrt(2)
    near(nn.CosineEmbeddingCriterion():forward(pair, 1), 1 - cos, 1e-9)
    near(nn.CosineEmbeddingCriterion(0.5):forward(pair, -1), cos - 0.5, 1e-9)
    local batch = {D({{1, 0}, {1, 0}}), D({{1, 1}, {0, 1}})}
    near(nn.CosineEmbeddingCriterion():forward(batch, D({1, -1})), (1 - cos) / 2, 1e-9)
  end)

  it('MarginRankingCriterion: max(0, -y (x1 - x2) + margin)', function()
    near(nn.MarginRankingCriterion():forward({D({1}), D({2})}, 1), 2)
    near(nn.MarginRankingCriterion():forward({D({1}), D({2})}, -1), 0)
    near(nn.MarginRankingCriterion(0.5):forward({D({1, 3}), D({2, 1})}, D({1, 1})), (1.5 + 0) / 2)
    local g = nn.MarginRankingCriterion():backward({D({1}), D({2})}, 1)
    assert.are.same({{-1}, {1}}, {g[1]:totable(), g[2]:totable()})
  end)

  it('DistanceRatioCriterion: -log(exp(-X) / (exp(-X) + exp(-Y)))', function()
    near(nn.DistanceRatioCriterion():forward({D({0}), D({0})}), math.log(2))
    near(nn.DistanceRatioCriterion():forward({D({1, 2}), D({2, 1})}),
         (math.log(1 + math.exp(-1)) + math.log(1 + math.exp(1))) / 2)
    near(nn.DistanceRatioCriterion(false):forward({D({1, 2}), D({2, 1})}),
         math.log(1 + math.exp(-1)) + math.log(1 + math.exp(1)))
  end)
end)

describe("Torch7's criterion containers", function()
  it('MultiCriterion: the weighted sum of criteria on one input', function()
    local x, y = D({1, 2, 3}), D({1, 1, 1})
    local crit = nn.MultiCriterion():add(nn.MSECriterion(), 0.5):add(nn.AbsCriterion())
    near(crit:forward(x, y), 0.5 * 5 / 3 + 1)
    local g = crit:backward(x, y)
    local want = nn.MSECriterion():backward(x, y) * 0.5 + nn.AbsCriterion():backward(x, y)
    assert.is_true(g:equal(want))
    assert.has_error(function() nn.MultiCriterion():add(42) end, nil)
  end)

  it('ParallelCriterion: criterion i on input[i] and target[i], or the one target repeated', function()
    local x, y = D({1, 2, 3}), D({1, 1, 1})
    local crit = nn.ParallelCriterion():add(nn.MSECriterion(), 0.5):add(nn.AbsCriterion(), 2)
    near(crit:forward({x, x}, {y, y}), 0.5 * 5 / 3 + 2 * 1)
    local g = crit:backward({x, x}, {y, y})
    assert.is_true(g[1]:equal(nn.MSECriterion():backward(x, y) * 0.5))
    assert.is_true(g[2]:equal(nn.AbsCriterion():backward(x, y) * 2))
    near(nn.ParallelCriterion(true):add(nn.MSECriterion()):add(nn.AbsCriterion()):forward({x, x}, y), 5 / 3 + 1)
  end)

  it('ModuleCriterion: a criterion after input and target modules', function()
    local x, y = D({{0.5, -1}, {2, 0}}), D({{1, 1}, {0, 0}})
    local crit = nn.ModuleCriterion(nn.MSECriterion(), nn.Tanh())
    near(crit:forward(x, y), nn.MSECriterion():forward(x:tanh(), y), 1e-12)
    local want = nn.MSECriterion():backward(x:tanh(), y) * (1 - x:tanh() ^ 2)
    assert.is_true((crit:backward(x, y) - want):abs():max():item() < 1e-12)
    local both = nn.ModuleCriterion(nn.MSECriterion(), nil, nn.Tanh())
    near(both:forward(x, y), nn.MSECriterion():forward(x, y:tanh()), 1e-12)
  end)

  it('CriterionTable: a criterion as a module of {input, target}', function()
    local x, y = D({1, 2, 3}), D({1, 1, 1})
    local m = nn.CriterionTable(nn.MSECriterion())
    near(m:forward({x, y}), 5 / 3)
    local g = m:backward({x, y})
    assert.is_true(g[1]:equal(nn.MSECriterion():backward(x, y)))
  end)
end)

-- each criterion at random inputs away from its kinks, 1-D and 2-D
local CASES = {
  {'MSECriterion', function() return nn.MSECriterion(), rand(-1, 1, 3, 4), rand(-1, 1, 3, 4) end},
  {'MSECriterion 1-D sum', function() return nn.MSECriterion(false), rand(-1, 1, 5), rand(-1, 1, 5) end},
  {'AbsCriterion', function() return nn.AbsCriterion(), rand(1, 2, 3, 4), rand(-1, 0, 3, 4) end},
  {'SmoothL1Criterion', function()
    return nn.SmoothL1Criterion(), D({{0.2, -0.5, 3}, {-2, 0.7, 1.5}}), torch.zeros(2, 3, {dtype = 'float64'})
  end},
  {'DistKLDivCriterion', function()
    return nn.DistKLDivCriterion(), rand(-1, 1, 2, 3):log_softmax(2), rand(0, 1, 2, 3):softmax(2)
  end},
  {'BCECriterion', function() return nn.BCECriterion(), rand(0.1, 0.9, 3, 2), rand(0, 1, 3, 2):round() end},
  {'BCECriterion weights', function()
    return nn.BCECriterion(D({0.5, 2})), rand(0.1, 0.9, 3, 2), rand(0, 1, 3, 2):round()
  end},
  {'MarginCriterion', function() return nn.MarginCriterion(), D({0.2, -0.5, 3, 0.4}), D({1, 1, 1, -1}) end},
  {'SoftMarginCriterion', function() return nn.SoftMarginCriterion(), rand(-2, 2, 2, 3), D({{1, -1, 1}, {-1, -1, 1}}) end},
  {'ClassNLLCriterion', function()
    return nn.ClassNLLCriterion(D({0.5, 1, 2})), rand(-1, 1, 4, 3):log_softmax(2), L({1, 3, 2, 3})
  end},
  {'ClassNLLCriterion 1-D', function() return nn.ClassNLLCriterion(), rand(-1, 1, 3):log_softmax(1), 2 end},
  {'CrossEntropyCriterion', function() return nn.CrossEntropyCriterion(), rand(-1, 1, 4, 3), L({1, 3, 2, 3}) end},
  {'CrossEntropyCriterion 1-D', function() return nn.CrossEntropyCriterion(D({1, 2, 3})), rand(-1, 1, 3), 3 end},
  {'SpatialClassNLLCriterion', function()
    return nn.SpatialClassNLLCriterion(D({1, 2})), rand(-1, 1, 2, 2, 2, 3):log_softmax(2), L({{{1, 2, 2}, {1, 1, 2}}, {{2, 2, 1}, {1, 2, 1}}})
  end},
  {'MultiMarginCriterion', function()
    return nn.MultiMarginCriterion(1), D({{0.1, 0.5, 0.3}, {0.9, -0.2, 0.45}}), L({2, 1})
  end},
  {'MultiMarginCriterion p=2 weights', function()
    return nn.MultiMarginCriterion(2, D({1, 2, 3})), D({0.1, 0.5, 0.3}), 3
  end},
  {'MultiLabelMarginCriterion', function()
    return nn.MultiLabelMarginCriterion(), D({{0.1, 0.2, 0.4, 0.8}, {0.3, 0.25, -0.4, 0.6}}), L({{3, 1, 0, 4}, {2, 0, 0, 0}})
  end},
  {'MultiLabelSoftMarginCriterion', function()
    return nn.MultiLabelSoftMarginCriterion(D({1, 2, 0.5})), rand(-2, 2, 2, 3), D({{1, 0, 1}, {0, 0, 1}})
  end},
  {'HingeEmbeddingCriterion', function() return nn.HingeEmbeddingCriterion(), D({0.3, 0.4, 2, 0.1}), D({1, -1, -1, 1}) end},
  {'L1HingeEmbeddingCriterion', function()
    return nn.L1HingeEmbeddingCriterion(), {D({0.1, 0.5, -0.3}), D({0.2, 0.1, 0.3})}, -1
  end},
  {'CosineEmbeddingCriterion', function()
    return nn.CosineEmbeddingCriterion(0.1), {rand(-1, 1, 3, 4), rand(-1, 1, 3, 4)}, D({1, -1, 1})
  end},
  {'MarginRankingCriterion', function()
    return nn.MarginRankingCriterion(0.5), {D({0.1, 0.9, -0.3}), D({0.2, 0.1, 0.3})}, D({1, -1, 1})
  end},
  {'ClassSimplexCriterion', function() return nn.ClassSimplexCriterion(4), rand(-1, 1, 3, 4), L({1, 4, 2}) end},
  {'DistanceRatioCriterion', function() return nn.DistanceRatioCriterion(), {rand(0, 2, 4), rand(0, 2, 4)}, nil end},
  {'WeightedMSECriterion', function() return nn.WeightedMSECriterion(D({1, 2, 3})), rand(-1, 1, 2, 3), rand(-1, 1, 2, 3) end},
  {'SpatialAutoCropMSECriterion', function()
    return nn.SpatialAutoCropMSECriterion(), rand(-1, 1, 2, 1, 2, 3), rand(-1, 1, 2, 1, 4, 4)
  end},
  {'ModuleCriterion', function()
    return nn.ModuleCriterion(nn.MSECriterion(), nn.Tanh()), rand(-1, 1, 2, 3), rand(-1, 1, 2, 3)
  end},
  {'MultiCriterion', function()
    return nn.MultiCriterion():add(nn.MSECriterion(), 0.5):add(nn.SoftMarginCriterion(), 2), rand(-1, 1, 2, 3),
           D({{1, -1, 1}, {-1, -1, 1}})
  end},
  {'ParallelCriterion', function()
    return nn.ParallelCriterion():add(nn.MSECriterion(), 0.5):add(nn.ClassNLLCriterion(), 2),
           {rand(-1, 1, 2, 3), rand(-1, 1, 2, 3):log_softmax(2)}, {rand(-1, 1, 2, 3), L({3, 1})}
  end},
}

describe("Torch7's criteria: gradients", function()
  for _, case in ipairs(CASES) do
    it(case[1] .. ': backward against central differences', function()
      torch.manual_seed(7)
      local crit, input, target = case[2]()
      check_gradient(crit, input, target)
      assert.are.equal(crit.gradInput, crit.gradInput)
    end)
  end
end)

-- an input's tensors cast to a dtype
local function cast(v, dtype)
  if torch.is_tensor(v) then return v:is_floating_point() and v:to(dtype) or v end
  if type(v) ~= 'table' then return v end
  local out = {}
  for i, x in ipairs(v) do out[i] = cast(x, dtype) end
  return out
end

describe("Torch7's criteria in float32", function()
  it('give a number close to float64 and a float32 gradient', function()
    for _, case in ipairs(CASES) do
      torch.manual_seed(7)
      local crit, input, target = case[2]()
      local want = crit:forward(input, target)
      local got = crit:forward(cast(input, 'float32'), cast(target, 'float32'))
      assert.are.equal('number', type(got), case[1])
      assert(math.abs(got - want) <= 1e-5 * math.max(1, math.abs(want)), case[1] .. ': ' .. got .. ' vs ' .. want)
      for _, g in ipairs(tensors(crit:backward(cast(input, 'float32'), cast(target, 'float32')))) do
        assert.are.equal('float32', g.dtype, case[1])
      end
    end
  end)
end)

describe("Torch7's criteria, both ways", function()
  it('crit(input, target) gives the loss on the autograd graph', function()
    local x = rand(-1, 1, 2, 3):requires_grad_()
    local y = rand(-1, 1, 2, 3)
    local crit = nn.MSECriterion()
    local loss = crit(x, y)
    assert.is_true(torch.is_tensor(loss))
    assert.are.equal(0, loss:dim())
    loss:backward()
    assert.is_true((x.grad - crit:backward(x, y)):abs():max():item() < 1e-12)
    -- forward of an input on the graph gives a number, and backward a gradient without history
    near(crit:forward(x, y), loss:item())
    assert.is_false(crit:backward(x, y).requires_grad)
  end)

  it('answer numbers in the Torch7 dialect too', function()
    torch.dialect('torch7')
    local ok, err = pcall(function()
      local x = torch.Tensor({{-1, -2, -3}, {-4, -5, -6}})
      assert.are.equal('torch.DoubleTensor', torch.type(x))
      near(nn.ClassNLLCriterion():forward(x, torch.Tensor({3, 1})), 3.5)
      near(nn.MSECriterion():forward(torch.Tensor({1, 2, 3}), torch.Tensor({1, 1, 1})), 5 / 3)
      near(nn.CrossEntropyCriterion():forward(torch.Tensor({0, 0}), 1), math.log(2))
      near(nn.MSECriterion():forward(torch.FloatTensor({1, 2, 3}), torch.FloatTensor({1, 1, 1})), 5 / 3, 1e-6)
      local g = nn.MSECriterion():backward(torch.Tensor({1, 2, 3}), torch.Tensor({1, 1, 1}))
      assert.are.same({0, 2 / 3, 4 / 3}, g:totable())
    end)
    torch.dialect('pytorch')
    assert(ok, err)
  end)

  it('train a model the Torch7 way', function()
    torch.manual_seed(3)
    local model = nn.Sequential(nn.Linear(4, 3), nn.LogSoftmax(2))
    local crit = nn.ClassNLLCriterion()
    local x, y = torch.randn(8, 4), L({1, 2, 3, 1, 2, 3, 1, 2})
    local first, last
    for step = 1, 30 do
      model:zeroGradParameters()
      local out = model:forward(x)
      local loss = crit:forward(out, y)
      model:backward(x, crit:backward(out, y))
      model:updateParameters(0.5)
      first, last = first or loss, loss
    end
    assert.is_true(last < first * 0.8, first .. ' -> ' .. last)
  end)
end)

describe("Torch7's criteria: errors", function()
  local function fails(fn, ...)
    local ok, err = pcall(fn)
    assert.is_false(ok)
    err = tostring(err)
    assert.truthy(err:find('nn_criterion_torch7_spec.lua:%d+:'), 'not at the caller\'s line: ' .. err)
    for _, part in ipairs({...}) do assert.truthy(err:find(part, 1, true), err) end
  end

  it('name the criterion and the shapes', function()
    fails(function() nn.MSECriterion():forward(D({1, 2, 3}), D({1, 2})) end,
          'nn.MSECriterion', 'input of size 3 and target of size 2')
    fails(function() nn.ClassNLLCriterion():forward(D({{-1, -2}}), L({3})) end,
          'nn.ClassNLLCriterion', 'class label 3 is out of range 1..2')
    fails(function() nn.ClassNLLCriterion():forward(D({{-1, -2}}), L({0})) end, 'class label 0 is out of range')
    fails(function() nn.ClassNLLCriterion():forward(D({{-1, -2}, {-1, -2}}), L({1})) end,
          'nn.ClassNLLCriterion', 'expected 2 class labels, got a target of size 1')
    fails(function() nn.ClassNLLCriterion():forward(D({{-1, -2}}), D({1.5})) end, 'whole numbers')
    fails(function() nn.ClassNLLCriterion(D({1, 2, 3})):forward(D({{-1, -2}}), 1) end, 'one element per class (2)')
    fails(function() nn.CrossEntropyCriterion():forward(torch.zeros(2, 2, 2, {dtype = 'float64'}), 1) end,
          'nn.CrossEntropyCriterion', 'size 2x2x2')
    fails(function() nn.CrossEntropyCriterion():forward(torch.zeros(2, 2, {dtype = 'float64'}), 1) end,
          'expected 2 class labels, got one number')
    fails(function() nn.BCECriterion():forward(D({1.5}), D({1})) end, 'nn.BCECriterion', '[0, 1]')
    fails(function() nn.HingeEmbeddingCriterion():forward(D({1, 2}), D({1, 0})) end, 'nn.HingeEmbeddingCriterion', '1 or -1')
    fails(function() nn.MarginCriterion():forward(D({1, 2}), D({1, 0, 1})) end, 'nn.MarginCriterion', 'size 2', 'size 3')
    fails(function() nn.MultiMarginCriterion():forward(D({1, 2}), 3) end, 'nn.MultiMarginCriterion', 'out of range 1..2')
    fails(function() nn.MultiMarginCriterion(3) end, 'nn.MultiMarginCriterion', 'p must be 1 or 2')
    fails(function() nn.MultiLabelMarginCriterion():forward(D({1, 2}), L({3, 0})) end, 'nn.MultiLabelMarginCriterion', '3 is out of range')
    fails(function() nn.SpatialClassNLLCriterion():forward(torch.zeros(1, 2, 3, 3, {dtype = 'float64'}), L({{1}})) end,
          'nn.SpatialClassNLLCriterion', '1x2x3x3', '1x3x3')
    fails(function() nn.CosineEmbeddingCriterion():forward(D({1, 2}), 1) end, 'nn.CosineEmbeddingCriterion', '{x1, x2}')
    fails(function() nn.MarginRankingCriterion():forward({D({1, 2}), D({1})}, D({1, 1})) end, 'nn.MarginRankingCriterion', 'size 2', 'size 1')
    fails(function() nn.WeightedMSECriterion(D({1, 2, 3})):forward(D({{1, 2}}), D({{1, 2}})) end, 'nn.WeightedMSECriterion', 'size 3')
    fails(function() nn.ClassSimplexCriterion(1) end, 'nn.ClassSimplexCriterion', 'nClasses')
    fails(function() nn.ParallelCriterion():add(nn.MSECriterion()):forward({D({1})}, D({1})) end, 'nn.ParallelCriterion', 'target')
    fails(function() nn.MSECriterion():forward(L({1, 2}), D({1, 2})) end, 'nn.MSECriterion', 'floating point', 'int64')
  end)
end)

describe("Torch7's criteria, forward then backward", function()
  local function near(got, want)
    local g = got:totable()
    assert.are.equal(#want, #g)
    for i = 1, #want do assert.is_true(math.abs(g[i] - want[i]) < 1e-12, i .. ': ' .. g[i] .. ' vs ' .. want[i]) end
  end
  it('differentiate the loss forward computed, and compute it again when the input changed since', function()
    local c = nn.MSECriterion()
    local x = torch.tensor({1, 2, 3}, {dtype = 'float64'})
    local t = torch.tensor({0, 0, 1}, {dtype = 'float64'})
    assert.is_true(math.abs(c:forward(x, t) - (1 + 4 + 4) / 3) < 1e-12)
    near(c:backward(x, t), {2 / 3, 4 / 3, 4 / 3})                 -- 2 (x - t) / n
    c:forward(x, t)
    x:mul_(2)                                                      -- changed in place since
    near(c:backward(x, t), {4 / 3, 8 / 3, 10 / 3})
    c:forward(x, t)
    local other = torch.tensor({0, 0, 0}, {dtype = 'float64'})
    near(c:backward(x, other), {4 / 3, 8 / 3, 12 / 3})             -- another target
    near(c:backward(x, other), {4 / 3, 8 / 3, 12 / 3})             -- backward twice
  end)
end)
