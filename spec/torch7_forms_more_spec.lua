-- torch7_forms_more_spec.lua: Torch7's forms that torch/nn's tests lean on,
-- under the Torch7 dialect (in-place scatter, fractional sizes cut, the
-- result-first repeatTensor and cat) and the PyTorch dialect's answers beside
-- them; nn.Parallel's slice count and SpatialFullConvolution's dual input.
local torch = require 'torch'
local nn = require 'nn'

local function in_torch7(fn)
  local before = torch.dialect()
  torch.dialect('torch7')
  local ok, err = pcall(fn)
  torch.dialect(before)
  if not ok then error(err, 0) end
end

describe("Torch7's forms", function()
  it('x:scatter writes into x in the Torch7 dialect, returns a new tensor in PyTorch\'s', function()
    in_torch7(function()
      local x = torch.zeros(4)
      local r = x:scatter(1, torch.LongTensor({2, 4}), torch.Tensor({5, 6}))
      assert.are.same({0, 5, 0, 6}, x:totable())
      assert.is_true(rawequal(r, x))
    end)
    local x = torch.zeros(4)
    local r = x:scatter(1, torch.tensor({2, 4}, {dtype = 'int64'}), torch.tensor({5, 6}, {dtype = 'float32'}))
    assert.are.same({0, 0, 0, 0}, x:totable())
    assert.are.same({0, 5, 0, 6}, r:totable())
  end)

  it('cuts a fractional size toward zero in the Torch7 dialect and refuses it in PyTorch\'s', function()
    in_torch7(function()
      assert.are.same({2, 3}, torch.rand(2, 3.5):size():totable())
      assert.are.same({2, 3}, torch.zeros(2.9, 3):size():totable())
      assert.are.same({4}, torch.ones(4.5):size():totable())
    end)
    assert.has_error(function() torch.rand(2, 3.5) end)
  end)

  it('torch.repeatTensor(res, src, sizes...) and x:cat(list) write into the first tensor', function()
    in_torch7(function()
      local r = torch.Tensor()
      local got = torch.repeatTensor(r, torch.Tensor({1, 2}), 2, 2)
      assert.is_true(rawequal(got, r))
      assert.are.same({{1, 2, 1, 2}, {1, 2, 1, 2}}, r:totable())
      local x = torch.Tensor(1)
      x:cat({torch.Tensor({1, 2}), torch.Tensor({3})})
      assert.are.same({1, 2, 3}, x:totable())
      local y = torch.Tensor()
      y:cat(torch.Tensor({{1}, {2}}), torch.Tensor({{3}, {4}}), 2)
      assert.are.same({{1, 3}, {2, 4}}, y:totable())
    end)
  end)

  it("x:addmm(a, b) and its kin add into x, which must have the result's size (Torch7's size mismatch)", function()
    in_torch7(function()
      local a, b = torch.Tensor({{1, 2}, {3, 4}}), torch.Tensor({{5, 6}, {7, 8}})
      local M = torch.Tensor({{1, 1}, {1, 1}})
      local r = M:addmm(a, b)                             -- M + a b, in M
      assert.are.same({{20, 23}, {44, 51}}, M:totable())
      assert.are.equal(M, r)
      local bias = torch.Tensor({10, 20})
      local ok, err = pcall(function() local y = bias:addmm(a, b) return y end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find('addmm: size mismatch: x is 2 and the result 2x2', 1, true), tostring(err))
      assert.are.same({10, 20}, bias:totable())             -- left as it was
      local v = torch.Tensor({1, 1})
      v:addmv(a, torch.Tensor({1, 1}))                      -- v + a (1, 1)
      assert.are.same({4, 8}, v:totable())
      assert.has_error(function() local y = torch.Tensor({1}):addmv(a, torch.Tensor({1, 1})) return y end)
      local c = torch.Tensor({1, 2})
      c:addcmul(torch.Tensor({2, 3}), torch.Tensor({4, 5}))  -- c + 2*4, 3*5
      assert.are.same({9, 17}, c:totable())
    end)
  end)
end)

describe('nn.Parallel and the dual input of SpatialFullConvolution', function()
  it('nn.Parallel runs one module per slice, leaving the modules past the last slice unused', function()
    local p = nn.Parallel(1, 1):add(nn.MulConstant(2)):add(nn.MulConstant(3)):add(nn.MulConstant(5))
    assert.are.same({2, 4, 9, 12}, p:forward(torch.tensor({{1, 2}, {3, 4}}, {dtype = 'float64'})):totable())
    assert.has_error(function() p:forward(torch.randn(4, 2)) end,
                     'nn.Parallel: an input of size 4x2 has more slices along dim 1 than the 3 modules (one per slice)')
  end)

  it('SpatialFullConvolution({input, target}) gives the target\'s size and a one-element zero for it', function()
    -- 1 plane of 3x3, kernel 3, stride 2, pad 1: (3 - 1) * 2 - 2 + 3 = 5, so a 6x6 target needs adj 1
    local m = nn.SpatialFullConvolution(1, 1, 3, 3, 2, 2, 1, 1)
    local ref = nn.SpatialFullConvolution(1, 1, 3, 3, 2, 2, 1, 1, 1, 1)
    torch.no_grad(function() ref.weight:copy_(m.weight); ref.bias:copy_(m.bias) end)
    local input, target = torch.randn(1, 3, 3), torch.zeros(6, 6)
    local out = m:forward({input, target})
    assert.are.same({1, 6, 6}, out:size():totable())
    assert.is_true((out - ref:forward(input)):abs():max():item() == 0)
    local g = torch.randn(1, 6, 6)
    local gi = m:backward({input, target}, g)
    assert.is_true((gi[1] - ref:backward(input, g)):abs():max():item() < 1e-6)
    assert.are.same({6, 6}, gi[2]:size():totable())
    assert.are.equal(1, #gi[2]:storage())
    assert.are.equal(0, gi[2]:storage()[1])
    assert.has_error(function() m:forward({input, torch.zeros(9, 9)}) end)   -- 5 + 4 is past the stride
  end)
end)
