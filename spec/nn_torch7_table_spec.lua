-- Torch7's table layers and containers by their Torch7 names and arguments:
-- values by definition, gradients by gradcheck and nn.Jacobian, gradInput
-- tables shaped as the input, errors naming the module and the shapes.
local torch = require 'torch'
local nn = require 'nn'

local PRECISION = 1e-5
local function t(v) return torch.tensor(v, {dtype = 'float64'}) end
local function randn(...) return torch.randn({...}, {dtype = 'float64'}) end
local function leaf(...) return torch.randn({...}, {dtype = 'float64', requires_grad = true}) end
local function near(expected, got, tol)
  assert.are.same(expected:size():totable(), got:size():totable())
  assert.is_true((expected - got):abs():max():item() <= (tol or 1e-12))
end

-- the tensors of a (nested) output, flattened and joined: one tensor for gradcheck
local function flat(out, acc)
  acc = acc or {}
  if torch.is_tensor(out) then acc[#acc + 1] = out:reshape(-1)
  else for _, o in ipairs(out) do flat(o, acc) end end
  return acc
end
-- gradcheck of module m called on the table of its arguments
local function check(m, inputs)
  return torch.gradcheck(function(...) return torch.cat(flat(m({...}))) end, inputs)
end

describe('Torch7 table layers', function()
  it('split and join tensors', function()
    local x = randn(2, 3, 4)
    local parts = nn.SplitTable(2):forward(x)
    assert.are.equal(3, #parts)
    near(x:select(2, 2), parts[2])
    assert.are.equal(4, #nn.SplitTable(-1):forward(x))
    assert.are.equal(3, #nn.SplitTable(1, 2):forward(x))          -- a batch of 2-D inputs: dim 2
    near(torch.cat({x, x}, 3), nn.JoinTable(3):forward({x, x}))
    near(torch.cat({x, x}, 2), nn.JoinTable(1, 2):forward({x, x}))
    near(torch.cat({x, x}, 3), nn.JoinTable(-1):forward({x, x}))
    local round = nn.Sequential(nn.SplitTable(1), nn.JoinTable(1))
    assert.is_true(nn.Jacobian.testJacobian(round, torch.zeros(3, 2, {dtype = 'float64'})) < PRECISION)
    assert.is_true(check(nn.JoinTable(2), {leaf(2, 3), leaf(2, 1)}))
  end)

  it('narrow, select and flatten tables', function()
    local a, b, c = randn(2), randn(3), randn(4)
    local out = nn.NarrowTable(2, 2):forward({a, b, c})
    assert.are.equal(2, #out)
    near(b, out[1]); near(c, out[2])
    assert.are.equal(1, #nn.NarrowTable(3):forward({a, b, c}))
    near(c, nn.SelectTable(-1):forward({a, b, c}))
    near(a, nn.SelectTable(1):forward({a, {b, c}}))
    local f = nn.FlattenTable():forward({a, {b, {c}}})
    assert.are.equal(3, #f)
    near(c, f[3])
  end)

  it('give gradInput tables shaped as the input, zeros where an entry is unused', function()
    local m = nn.SelectTable(2)
    local a, b, c = randn(2), randn(3), randn(4)
    m:forward({a, {b, c}})
    local g = m:backward({a, {b, c}}, {t({1, 2, 3}), t({1, 2, 3, 4})})
    near(torch.zeros(2, {dtype = 'float64'}), g[1])
    near(t({1, 2, 3}), g[2][1])
    near(t({1, 2, 3, 4}), g[2][2])
    local gi = m:updateGradInput({a, {b, c}}, {t({1, 1, 1}), t({2, 2, 2, 2})})
    near(torch.zeros(2, {dtype = 'float64'}), gi[1])
    near(t({2, 2, 2, 2}), gi[2][2])
    local ft = nn.FlattenTable()
    ft:forward({a, {b, {c}}})
    local fg = ft:backward({a, {b, {c}}}, {t({1, 1}), t({2, 2, 2}), t({3, 3, 3, 3})})
    near(t({3, 3, 3, 3}), fg[2][2][1])
  end)

  it('combine tensors elementwise', function()
    local a, b, c = t({1, -2, 3}), t({4, 5, -6}), t({0.5, 2, 1})
    near(t({5.5, 5, -2}), nn.CAddTable():forward({a, b, c}))
    near(t({-3, -7, 9}), nn.CSubTable():forward({a, b}))
    near(t({2, -20, -18}), nn.CMulTable():forward({a, b, c}))
    near(t({0.25, -0.4, -0.5}), nn.CDivTable():forward({a, b}))
    near(t({4, 5, 3}), nn.CMaxTable():forward({a, b, c}))
    near(t({0.5, -2, -6}), nn.CMinTable():forward({a, b, c}))
    local m = nn.CMaxTable()
    m:forward({a, b})
    local g = m:backward({a, b}, t({5, 6, 7}))
    near(t({0, 0, 7}), g[1]); near(t({5, 6, 0}), g[2])
    for _, mod in ipairs({nn.CAddTable(), nn.CSubTable(), nn.CMulTable(), nn.CDivTable(), nn.CMaxTable(),
                          nn.CMinTable()}) do
      assert.is_true(check(mod, {leaf(2, 3), leaf(2, 3)}), torch.typename(mod))
    end
    assert.is_true(check(nn.CMulTable(), {leaf(4), leaf(4), leaf(4)}))
  end)

  it('compute products and distances of pairs', function()
    local a, b = t({{1, 2, 2}, {3, 0, 4}}), t({{2, 0, 1}, {3, 0, 4}})
    near(t({4, 25}), nn.DotProduct():forward({a, b}))
    near(t({32}), nn.DotProduct():forward({t({1, 2, 3}), t({4, 5, 6})}))
    near(t({4 / (3 * math.sqrt(5)), 1}), nn.CosineDistance():forward({a, b}), 1e-9)
    near(t({math.sqrt(6), 0}), nn.PairwiseDistance():forward({a, b}), 1e-9)
    near(t({4, 0}), nn.PairwiseDistance(1):forward({a, b}), 1e-9)
    near(t({5}), nn.PairwiseDistance(2):forward({t({3, 0}), t({0, 4})}), 1e-9)
    for _, mod in ipairs({nn.DotProduct(), nn.CosineDistance(), nn.PairwiseDistance(), nn.PairwiseDistance(3)}) do
      assert.is_true(check(mod, {leaf(3, 4), leaf(3, 4)}), torch.typename(mod))
      assert.is_true(check(mod, {leaf(5), leaf(5)}), torch.typename(mod))
    end
  end)

  it('multiply matrices and vectors', function()
    local A, B = randn(2, 3), randn(3, 4)
    near(A:mm(B), nn.MM():forward({A, B}))
    near(A:mm(B), nn.MM(true, false):forward({A:t(), B}))
    near(A:mm(B), nn.MM(true, true):forward({A:t(), B:t()}))
    local bA, bB = randn(5, 2, 3), randn(5, 3, 4)
    near(bA[2]:mm(bB[2]), nn.MM():forward({bA, bB})[2])
    local v = randn(3)
    near(A:mv(v), nn.MV():forward({A, v}))
    near(A:mv(v), nn.MV(true):forward({A:t(), v}))
    near(bA[4]:mv(v), nn.MV():forward({bA, v:view(1, 3):expand(5, 3)})[4])
    assert.is_true(check(nn.MM(false, true), {leaf(2, 3), leaf(4, 3)}))
    assert.is_true(check(nn.MM(), {leaf(2, 2, 3), leaf(2, 3, 2)}))
    assert.is_true(check(nn.MV(true), {leaf(3, 2), leaf(3)}))
    assert.is_true(check(nn.MV(), {leaf(2, 2, 3), leaf(2, 3)}))
  end)

  it('mix experts by a gater', function()
    local g, e1, e2 = t({0.25, 0.75}), t({1, 2}), t({3, 4})
    near(t({2.5, 3.5}), nn.MixtureTable():forward({g, {e1, e2}}))
    near(t({2.5, 3.5}), nn.MixtureTable():forward({g, torch.stack({e1, e2})}))
    local bg, be = t({{1, 0}, {0.5, 0.5}}), {t({{1, 2}, {3, 4}}), t({{5, 6}, {7, 8}})}
    near(t({{1, 2}, {5, 6}}), nn.MixtureTable():forward({bg, be}))
    near(t({{1, 2}, {5, 6}}), nn.MixtureTable():forward({bg, torch.stack(be, 2)}))
    assert.is_true(torch.gradcheck(function(gater, x, y) return nn.MixtureTable()({gater, {x, y}}) end,
                                   {leaf(3, 2), leaf(3, 4), leaf(3, 4)}))
    assert.is_true(torch.gradcheck(function(gater, x) return nn.MixtureTable()({gater, x}) end,
                                   {leaf(3, 2), leaf(3, 2, 4)}))
  end)
end)

describe('Torch7 table containers', function()
  it('Parallel applies a child to each slice and joins the outputs', function()
    local p = nn.Parallel(1, 1):add(nn.Linear(3, 2)):add(nn.Linear(3, 4))
    p:double()
    local x = randn(2, 3)
    near(torch.cat({p[1]:forward(x[1]), p[2]:forward(x[2])}, 1), p:forward(x))
    assert.is_true(nn.Jacobian.testJacobian(p, torch.zeros(2, 3, {dtype = 'float64'})) < PRECISION)
  end)

  it('DepthConcat pads smaller outputs with zeros, centred', function()
    local dc = nn.DepthConcat(1):add(nn.Identity()):add(nn.Identity())
    local a = t({{1, 2, 3}, {4, 5, 6}})
    near(torch.cat({a, a}, 1), dc:forward(a))
    local m = nn.DepthConcat(2):add(nn.Identity()):add(nn.Linear(3, 3))
    m:double()
    local x = randn(2, 3)
    near(torch.cat({x, m[2]:forward(x)}, 2), m:forward(x))
    local small = nn.DepthConcat(1):add(nn.Identity()):add(nn.Sequential(nn.SplitTable(2), nn.SelectTable(2),
                                                                        nn.Reshape(2, 1)))
    near(t({{1, 2, 3}, {4, 5, 6}, {0, 2, 0}, {0, 5, 0}}), small:forward(a))
    assert.is_true(nn.Jacobian.testJacobian(small, torch.zeros(2, 3, {dtype = 'float64'})) < PRECISION)
  end)

  it('MapTable applies one module, its parameters shared, to each entry', function()
    local lin = nn.Linear(3, 2):double()
    local map = nn.MapTable(lin)
    local xs = {randn(3), randn(3), randn(3)}
    local out = map:forward(xs)
    assert.are.equal(3, #out)
    assert.are.equal(3, map:size())
    near(lin:forward(xs[2]), out[2])
    map:zeroGradParameters()
    map:forward(xs)
    map:backward(xs, {t({1, 0}), t({1, 0}), t({1, 0})})
    near(xs[1] + xs[2] + xs[3], lin.gradWeight[1])
    assert.are.equal(lin, map:get(3))
    assert.are.equal(1, map:clearState():size())
  end)

  it('ConcatTable and ParallelTable take tables in and give gradInput tables', function()
    local ct = nn.ConcatTable():add(nn.SelectTable(1)):add(nn.CAddTable())
    local a, b = randn(2), randn(2)
    local out = ct:forward({a, b})
    near(a, out[1]); near(a + b, out[2])
    local g = ct:backward({a, b}, {t({1, 1}), t({2, 3})})
    near(t({3, 4}), g[1]); near(t({2, 3}), g[2])
    local pt = nn.ParallelTable():add(nn.CMulTable()):add(nn.Identity())
    local y = pt:forward({{a, b}, a})
    near(a * b, y[1])
    local pg = pt:backward({{a, b}, a}, {t({1, 1}), t({5, 5})})
    near(b, pg[1][1]); near(a, pg[1][2]); near(t({5, 5}), pg[2])
    local seq = nn.Sequential(nn.ConcatTable():add(nn.Identity()):add(nn.Identity()), nn.CMulTable())
    assert.is_true(nn.Jacobian.testJacobian(seq, torch.zeros(4, {dtype = 'float64'})) < PRECISION)
    local concat = nn.Concat(1):add(nn.Identity()):add(nn.Identity())
    near(torch.cat({a, a}, 1), concat:forward(a))
  end)

  it("are written to Torch7's files and read back with their settings", function()
    local mods = {nn.JoinTable(2, 1), nn.SplitTable(1), nn.PairwiseDistance(3), nn.MM(true, false), nn.MV(true),
                  nn.Sequential(nn.SplitTable(1), nn.NarrowTable(1, 2), nn.JoinTable(1)),
                  nn.Parallel(1, 1):add(nn.Identity()):add(nn.Identity()),
                  nn.Sequential(nn.ConcatTable():add(nn.Identity()):add(nn.Identity()), nn.CSubTable())}
    for _, m in ipairs(mods) do
      local f = torch.MemoryFile()
      f:binary()
      f:writeObject(m)
      f:seek(1)
      local back = f:readObject()
      assert.are.equal(torch.typename(m), torch.typename(back))
    end
    local f = torch.MemoryFile()
    f:binary()
    f:writeObject(nn.PairwiseDistance(3))
    f:seek(1)
    assert.are.equal(3, f:readObject().norm)
  end)
end)

describe('Torch7 table modules in bad arguments', function()
  it('name the module and the shapes', function()
    assert.has_error(function() nn.JoinTable(1):forward({randn(2, 3), randn(2, 4)}) end,
                     'nn.JoinTable: cannot join {2x3, 2x4} along dim 1')
    assert.has_error(function() nn.CAddTable():forward({randn(2, 3), randn(3)}) end,
                     'nn.CAddTable: inputs of different shapes {2x3, 3}')
    assert.has_error(function() nn.CSubTable():forward({randn(2)}) end,
                     'nn.CSubTable: expected a table of 2 tensors, got {2}')
    assert.has_error(function() nn.MM():forward({randn(2, 3), randn(2, 3)}) end,
                     'nn.MM: cannot multiply 2x3 by 2x3')
    assert.has_error(function() nn.MV():forward({randn(2, 3), randn(2)}) end,
                     'nn.MV: cannot multiply 2x3 by 2')
    assert.has_error(function() nn.SelectTable(3):forward({randn(2)}) end,
                     'nn.SelectTable: index 3 out of range for {2}')
    assert.has_error(function() nn.SplitTable(3):forward(randn(2, 3)) end,
                     'nn.SplitTable: dim 3 out of range for an input of size 2x3')
    assert.has_error(function() nn.DotProduct():forward({randn(2, 3), randn(2, 4)}) end,
                     'nn.DotProduct: inputs of different shapes {2x3, 2x4}')
    assert.has_error(function() nn.MixtureTable():forward({randn(3), {randn(2), randn(2)}}) end,
                     'nn.MixtureTable: expected a table of 3 tensors, got {2, 2}')
    assert.has_error(function() nn.Parallel(1, 1):add(nn.Identity()):forward(randn(2, 3)) end,
                     'nn.Parallel: an input of size 2x3 has more slices along dim 1 than the 1 modules (one per slice)')
    -- as Torch7's: modules past the last slice are unused
    local p = nn.Parallel(1, 1):add(nn.MulConstant(2)):add(nn.MulConstant(3)):add(nn.MulConstant(5))
    assert.are.same({2, 4, 9, 12}, p:forward(torch.tensor({{1, 2}, {3, 4}}, {dtype = 'float64'})):totable())
  end)
end)
