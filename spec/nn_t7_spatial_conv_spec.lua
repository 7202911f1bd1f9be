-- Torch7's Spatial* convolution family on moontorch's nn: SpatialConvolutionMM (2-D
-- weight), SpatialDilatedConvolution, SpatialFullConvolution's noBias, SpatialDepthWise-
-- Convolution, SpatialConvolutionLocal, SpatialConvolutionMap / SpatialFullConvolutionMap
-- and nn.tables, SpatialSubSampling, the local normalizations (Subtractive, Divisive,
-- Contrastive), Torch7's assignments to weight/bias/gradWeight, and Torch7 files.
-- Expected values: PyTorch's (spec/ref/gen_nn_t7_spatial_conv.py) or the definitions.
local torch = require 'torch'
local nn = require 'nn'
local raises = dofile('spec/support/raises.lua')
local REF = dofile('spec/ref/nn_t7_spatial_conv_ref.lua')

-- S(shape, off, scale): element j (row-major, 0-based) = sin(j * scale + off), as the generator's
local function S(shape, off, scale)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return (torch.arange(0, n, {dtype = 'float64'}) * (scale or 1) + (off or 0)):sin():reshape(table.unpack(shape))
end

local function ref(name)
  local r = REF[name]
  return torch.tensor(r.values, {dtype = 'float64'}):reshape(table.unpack(r.size))
end

local function close(a, b, tol, what)
  a, b = a:detach(), b:detach()
  assert.are.same(b:size():totable(), a:size():totable())
  local d = (a:to('float64') - b:to('float64')):abs():max():item()
  assert(d <= (tol or 1e-10), (what or '') .. ' max difference ' .. d)
end

local function set(p, v) torch.no_grad(function() p:copy_(v:reshape(p:size())) end) end

local in_torch7 = dofile('spec/support/dialect.lua').in_torch7

describe('nn.SpatialConvolutionMM', function()
  local function mm()
    local m = nn.SpatialConvolutionMM(2, 3, 3, 2, 2, 1, 1, 0):double()
    set(m.weight, S({3, 12}, 0.5, 0.7))
    set(m.bias, S({3}, 1.0))
    return m
  end

  it('keeps its weight as a matrix and computes PyTorch conv2d', function()
    local m = mm()
    assert.are.same({3, 12}, m.weight:size():totable())
    assert.are.same({3}, m.bias:size():totable())
    assert.are.same({2, 3, 3, 2, 2, 1, 1, 0}, {m.nInputPlane, m.nOutputPlane, m.kW, m.kH, m.dW, m.dH, m.padW, m.padH})
    local x = S({2, 2, 5, 6})
    close(m:forward(x), ref('mm_y'))
    close(m:forward(x[2]), ref('mm_y')[2])
  end)

  it('backward gives gradInput and a matrix gradWeight as PyTorch', function()
    local m = mm()
    local x = S({2, 2, 5, 6})
    m:zeroGradParameters()
    local y = m:forward(x)
    local gi = m:backward(x, S(y:size():totable(), 0.3, 1.3))
    close(gi, ref('mm_gi'))
    assert.are.same({3, 12}, m.gradWeight:size():totable())
    close(m.gradWeight, ref('mm_gw'))
    close(m.gradBias, ref('mm_gb'))
  end)

  it('padH defaults to padW, and noBias drops the bias', function()
    local m = nn.SpatialConvolutionMM(2, 3, 3, 2, 2, 1, 1)
    assert.are.equal(1, m.padH)
    m = mm():noBias()
    assert.is_nil(m.bias)
    assert.is_nil(m.gradBias)
    assert.truthy(m:__tostring__():find('without bias', 1, true))
    local b = ref('mm_y') - S({3}, 1.0):reshape(1, 3, 1, 1)
    close(m:forward(S({2, 2, 5, 6})), b)
  end)

  it('refuses inputs of the wrong planes or dims, naming the module', function()
    local m = mm()
    raises('nn.SpatialConvolutionMM: input has 3 planes, expected 2', function() m:forward(torch.randn(3, 5, 6)) end)
    raises('nn.SpatialConvolutionMM: expected a 3-D', function() m:forward(torch.randn(5, 6)) end)
    raises('nn.SpatialConvolutionMM: nOutputPlane must be an integer', nn.SpatialConvolutionMM, 2, 0, 3)
  end)

  it('reset(stdv) draws within +-stdv * sqrt(3), by default within 1 / sqrt(nIn * kH * kW)', function()
    local m = nn.SpatialConvolutionMM(4, 5, 3, 3)
    assert(m.weight:detach():abs():max():item() <= 1 / math.sqrt(36))
    m:reset(0.01)
    assert(m.weight:detach():abs():max():item() <= 0.01 * math.sqrt(3) + 1e-12)
    assert(m.bias:detach():abs():max():item() <= 0.01 * math.sqrt(3) + 1e-12)
    assert(m.weight:detach():abs():max():item() > 0)
  end)

  it('feeds nn.DepthConcat', function()
    local dc = nn.DepthConcat(1)
    dc:add(nn.SpatialConvolutionMM(2, 3, 1, 1)):add(nn.SpatialConvolutionMM(2, 4, 3, 3))
    dc:double()
    local y = dc:forward(torch.randn(2, 6, 6, {dtype = 'float64'}))
    assert.are.same({7, 6, 6}, y:size():totable())
  end)
end)

describe('nn.SpatialDilatedConvolution', function()
  it('is a dilated conv2d with Torch7 fields', function()
    local m = nn.SpatialDilatedConvolution(2, 2, 2, 2, 1, 1, 1, 1, 2, 3):double()
    assert.are.same({2, 3}, {m.dilationW, m.dilationH})
    set(m.weight, S({2, 2, 2, 2}, 0.2))
    set(m.bias, S({2}, 2.0))
    close(m:forward(S({2, 7, 6})), ref('dil_y'))
  end)
end)

describe('Torch7 assignments and noBias on the convolutions', function()
  it('SpatialFullConvolution: noBias, then a plain bias assigned back and reset', function()
    local m = nn.SpatialFullConvolution(2, 3, 3, 3, 2, 2):double()
    assert.are.same({2, 3, 3, 3, 2, 2}, {m.nInputPlane, m.nOutputPlane, m.kW, m.kH, m.dW, m.dH})
    local x = torch.randn(2, 4, 4, {dtype = 'float64'})
    local full = m:forward(x):detach():clone()
    local b = m.bias:detach():clone()
    m:noBias()
    assert.is_nil(m.bias)
    close(m:forward(x), full - b:reshape(3, 1, 1))
    local plain = torch.zeros(3, {dtype = 'float64'})
    raises("cannot assign 'torch.DoubleTensor' as parameter 'bias'", function() m.bias = plain end)
    in_torch7(function() m.bias = plain end)
    m.gradBias = torch.zeros(3, {dtype = 'float64'})
    assert.is_true(rawequal(m.bias, plain))
    assert.is_true(nn.is_parameter(m.bias))
    m:reset()
    assert(m.bias:detach():abs():max():item() > 0)
    m:zeroGradParameters()
    local y = m:forward(x)
    m:backward(x, torch.ones_like(y:detach()))
    -- d(sum of the outputs)/d bias[c]: the number of output positions
    close(m.gradBias, torch.full({3}, y:size(2) * y:size(3), {dtype = 'float64'}))
  end)

  it('in the Torch7 dialect a plain weight assigned becomes the parameter; gradWeight assigned becomes its gradient', function()
    local m = nn.SpatialConvolution(1, 1, 2, 2):double()
    local w = torch.ones(1, 1, 2, 2, {dtype = 'float64'})
    in_torch7(function() m.weight = w end)
    assert.is_true(rawequal(m.weight, w))
    local g = torch.zeros(1, 1, 2, 2, {dtype = 'float64'})
    m.gradWeight = g
    local x = torch.ones(1, 3, 3, {dtype = 'float64'})
    local y = m:forward(x)
    m:backward(x, torch.ones_like(y:detach()))
    close(g, torch.full({1, 1, 2, 2}, 4, {dtype = 'float64'}))
  end)
end)

describe('nn.SpatialDepthWiseConvolution', function()
  it('convolves each plane with its nOutputPlane filters, in Torch7 layout', function()
    local m = nn.SpatialDepthWiseConvolution(3, 2, 3, 3, 1, 1, 1, 1):double()
    assert.are.same({2, 27}, m.weight:size():totable())
    assert.are.same({2, 3}, m.bias:size():totable())
    set(m.weight, S({2, 27}, 0.1))
    set(m.bias, S({2, 3}, 0.4))
    close(m:forward(S({1, 3, 5, 5})), ref('dw_y'))
  end)
end)

describe('nn.SpatialConvolutionLocal', function()
  it('applies untied filters per output position, as PyTorch unfold + products', function()
    local m = nn.SpatialConvolutionLocal(2, 2, 5, 4, 3, 2, 1, 2):double()
    assert.are.same({2, 3}, {m.oH, m.oW})
    assert.are.same({2, 3, 2, 2, 2, 3}, m.weight:size():totable())
    assert.are.same({2, 2, 3}, m.bias:size():totable())
    set(m.weight, S({2, 3, 2, 2, 2, 3}, 0.9))
    set(m.bias, S({2, 2, 3}, 0.6))
    close(m:forward(S({2, 2, 4, 5})), ref('loc_y'))
    close(m:forward(S({2, 2, 4, 5})[1]), ref('loc_y')[1])
  end)

  it('has exact gradients (finite differences) and refuses another input size', function()
    local m = nn.SpatialConvolutionLocal(2, 3, 5, 4, 2, 2)
    m:double()
    local x = torch.randn(2, 4, 5, {dtype = 'float64'})
    assert(nn.Jacobian.testJacobian(m, x) < 1e-5)
    assert(nn.Jacobian.testJacobianParameters(m, x, m.weight, m.gradWeight) < 1e-5)
    raises('nn.SpatialConvolutionLocal: input is 4x6, expected 4x5', function() m:forward(torch.randn(2, 4, 6)) end)
  end)
end)

describe('the PyTorch contract', function()
  it('model(x) and loss:backward() fill the parameters .grad', function()
    local m = nn.SpatialSubSampling(2, 2, 2):double()
    set(m.weight, torch.tensor({2, 3}, {dtype = 'float64'}))
    local x = torch.ones(1, 2, 3, 3, {dtype = 'float64'})
    m(x):sum():backward()
    -- each of the 4 outputs of a plane sums a 2x2 window of ones: d/dweight = 4 * 4
    close(m.weight.grad, torch.tensor({16, 16}, {dtype = 'float64'}))
    close(m.bias.grad, torch.tensor({4, 4}, {dtype = 'float64'}))
    local opt = require('optim').SGD(m:parameters(), {lr = 0.5})
    opt:step()
    close(m.weight, torch.tensor({-6, -5}, {dtype = 'float64'}))
  end)
end)

describe('nn.tables and the connection-table convolutions', function()
  it('full, oneToOne and random tables', function()
    assert.are.same({{1, 1}, {2, 1}, {1, 2}, {2, 2}, {1, 3}, {2, 3}}, nn.tables.full(2, 3):tolist())
    assert.are.same({{1, 1}, {2, 2}, {3, 3}}, nn.tables.oneToOne(3):tolist())
    local t = nn.tables.random(5, 4, 3)
    assert.are.same({12, 2}, t:size():totable())
    for j = 1, 4 do
      local seen = {}
      for k = 1, 3 do
        local row = t[(j - 1) * 3 + k]:tolist()
        assert.are.equal(j, row[2])
        assert(row[1] >= 1 and row[1] <= 5 and not seen[row[1]], 'inputs of an output must be distinct')
        seen[row[1]] = true
      end
    end
    raises('nn.tables.random: nto must be an integer in 1..nin', nn.tables.random, 2, 3, 3)
  end)

  local tbl = torch.tensor({{1, 1}, {3, 1}, {2, 2}, {3, 2}, {1, 3}}, {dtype = 'float64'})

  it('SpatialConvolutionMap sums the connected planes cross-correlated with their kernels', function()
    local m = nn.SpatialConvolutionMap(tbl, 3, 2, 1, 2):double()
    assert.are.same({3, 3}, {m.nInputPlane, m.nOutputPlane})
    assert.are.same({5, 2, 3}, m.weight:size():totable())
    set(m.weight, S({5, 2, 3}, 0.3))
    set(m.bias, S({3}, 0.8))
    close(m:forward(S({3, 6, 5})), ref('map_y'))
    local x = torch.randn(2, 3, 6, 5, {dtype = 'float64'})
    assert(nn.Jacobian.testJacobian(m, x) < 1e-5)
    assert(nn.Jacobian.testJacobianParameters(m, x, m.weight, m.gradWeight) < 1e-5)
  end)

  it('SpatialFullConvolutionMap sums full convolutions', function()
    local m = nn.SpatialFullConvolutionMap(tbl, 3, 2, 2, 1):double()
    set(m.weight, S({5, 2, 3}, 0.3))
    set(m.bias, S({3}, 0.8))
    close(m:forward(S({3, 6, 5})), ref('fmap_y'))
  end)

  it('refuses a malformed connection table', function()
    raises('nn.SpatialConvolutionMap: expected a connection table', nn.SpatialConvolutionMap, torch.ones(3), 2, 2)
    raises('positive integer plane numbers', nn.SpatialConvolutionMap, torch.tensor({{0, 1}}), 2, 2)
  end)
end)

describe('nn.SpatialSubSampling', function()
  it('is weight * window sum + bias per plane', function()
    local m = nn.SpatialSubSampling(2, 3, 2, 2, 1):double()
    set(m.weight, torch.tensor({0.5, -1.5}, {dtype = 'float64'}))
    set(m.bias, torch.tensor({0.25, 2.0}, {dtype = 'float64'}))
    local x = S({2, 4, 7})
    local y = m:forward(x)
    close(y, ref('sub_y'))
    -- one value by the definition: plane 2, output (2, 3): rows 2..3, columns 5..7
    local s = x[2]:narrow(1, 2, 2):narrow(2, 5, 3):sum():item()
    local v = y:detach()[{2, 2, 3}]
    if torch.is_tensor(v) then v = v:item() end
    assert(math.abs(v - (-1.5 * s + 2.0)) < 1e-12)
    assert(nn.Jacobian.testJacobianParameters(m, x, m.weight, m.gradWeight) < 1e-5)
  end)
end)

describe('the local normalizations', function()
  local x = S({2, 2, 5, 6}, 0.1, 0.37):abs() + 0.05
  local kernels = {k2 = function() return torch.ones(3, 3, {dtype = 'float64'}) end,
                   k1 = function() return torch.tensor({1, 2, 1}, {dtype = 'float64'}) end}
  for name, kernel in pairs(kernels) do
    it('SpatialSubtractiveNormalization (' .. name .. ') removes the local mean', function()
      local m = nn.SpatialSubtractiveNormalization(2, kernel())
      close(m:forward(x), ref('subn_' .. name))
      close(m:forward(x[2]), ref('subn_' .. name)[2])
    end)
    it('SpatialDivisiveNormalization (' .. name .. ') divides by the local deviation', function()
      close(nn.SpatialDivisiveNormalization(2, kernel()):forward(x), ref('divn_' .. name))
    end)
    it('SpatialContrastiveNormalization (' .. name .. ') does both', function()
      close(nn.SpatialContrastiveNormalization(2, kernel()):forward(x), ref('con_' .. name))
    end)
  end

  it('leave the caller kernel alone, normalize their own, and convert with :float()', function()
    local k = torch.ones(3, 3, {dtype = 'float64'})
    local m = nn.SpatialContrastiveNormalization(2, k)
    assert.are.equal(1, k:max():item())
    close(m.normalizer:get(1).kernel, torch.full({3, 3}, 1 / 18, {dtype = 'float64'}))
    m:float()
    local y = m:forward(x:float())
    assert.are.equal('float32', y.dtype)
    close(y, ref('con_k2'), 1e-5)
  end)

  it('have exact gradients (finite differences)', function()
    local xx = torch.rand(2, 5, 4, {dtype = 'float64'}) + 0.1
    assert(nn.Jacobian.testJacobian(nn.SpatialSubtractiveNormalization(2, torch.ones(3)), xx) < 1e-5)
    assert(nn.Jacobian.testJacobian(nn.SpatialDivisiveNormalization(2, torch.ones(3, 3)), xx) < 1e-5)
  end)

  it('refuse an even kernel or the wrong planes', function()
    raises('odd sizes', nn.SpatialSubtractiveNormalization, 2, torch.ones(4, 3))
    raises('nn.SpatialDivisiveNormalization: the averaging kernel must be a 1-D or 2-D tensor',
           nn.SpatialDivisiveNormalization, 2, torch.ones(3, 3, 3))
    local m = nn.SpatialSubtractiveNormalization(2)
    raises('input has 3 planes, expected 2', function() m:forward(torch.rand(3, 9, 9)) end)
  end)
end)

describe("Torch7's format", function()
  it('round-trips the new classes with their values', function()
    local x = torch.rand(2, 3, 6, 5, {dtype = 'float64'})
    local mods = {
      nn.SpatialConvolutionMM(3, 2, 3, 2, 1, 1, 1),
      nn.SpatialDilatedConvolution(3, 2, 2, 2, 1, 1, 1, 1, 2, 2),
      nn.SpatialSubSampling(3, 2, 2),
      nn.SpatialDepthWiseConvolution(3, 2, 3, 3),
      nn.SpatialConvolutionLocal(3, 2, 5, 6, 3, 3),
      nn.SpatialConvolutionMap(nn.tables.random(3, 4, 2), 3, 3),
      nn.SpatialFullConvolutionMap(nn.tables.oneToOne(3), 2, 2),
      nn.SpatialSubtractiveNormalization(3, torch.ones(3)),
      nn.SpatialDivisiveNormalization(3, torch.ones(3, 3)),
      nn.SpatialContrastiveNormalization(3, torch.ones(5)),
    }
    for _, m in ipairs(mods) do
      m:double()
      local back = torch.deserialize(torch.serialize(m, 'binary'))
      assert.are.equal(torch.typename(m), torch.typename(back))
      close(back:forward(x), m:forward(x), 0, torch.typename(m))
    end
  end)
end)
