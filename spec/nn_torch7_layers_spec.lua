-- Torch7's simple layers by their Torch7 names and arguments: values by
-- definition, gradients by nn.Jacobian, and Torch7's files both ways.
local torch = require 'torch'
local nn = require 'nn'

local PRECISION = 1e-5
local x = torch.tensor({{-2.0, -0.25, 0.0}, {0.5, 1.5, 3.0}}, {dtype = 'float64'})

local function values(m, input) return m:forward(input):totable() end
local function close(a, b)
  for i = 1, #a do for j = 1, #a[i] do assert.is_near(b[i][j], a[i][j], 1e-12) end end
end

describe('Torch7 simple layers', function()
  it('compute their definitions', function()
    close(values(nn.Abs(), x), {{2, 0.25, 0}, {0.5, 1.5, 3}})
    close(values(nn.Square(), x), {{4, 0.0625, 0}, {0.25, 2.25, 9}})
    close(values(nn.Power(3), x), {{-8, -0.015625, 0}, {0.125, 3.375, 27}})
    close(values(nn.MulConstant(2), x), {{-4, -0.5, 0}, {1, 3, 6}})
    close(values(nn.AddConstant(1), x), {{-1, 0.75, 1}, {1.5, 2.5, 4}})
    close(values(nn.Clamp(-1, 1), x), {{-1, -0.25, 0}, {0.5, 1, 1}})
    close(values(nn.HardShrink(0.5), x), {{-2, 0, 0}, {0, 1.5, 3}})
    close(values(nn.SoftShrink(0.5), x), {{-1.5, 0, 0}, {0, 1, 2.5}})
    close(values(nn.SoftSign(), x), {{-2 / 3, -0.2, 0}, {1 / 3, 0.6, 0.75}})
    close(values(nn.Threshold(0.4, -7), x), {{-7, -7, -7}, {0.5, 1.5, 3}})
    close(values(nn.TanhShrink(), x), {{-2 - math.tanh(-2), -0.25 - math.tanh(-0.25), 0},
                                      {0.5 - math.tanh(0.5), 1.5 - math.tanh(1.5), 3 - math.tanh(3)}})
    local glu = nn.GatedLinearUnit():forward(torch.tensor({{1.0, 2.0}}, {dtype = 'float64'}))
    assert.is_near(1 / (1 + math.exp(-2)), glu[1][1], 1e-12)
    local pos = x:abs() + 0.5
    close(values(nn.Sqrt(), pos), pos:sqrt():totable())
    close(values(nn.Exp(), x), x:exp():totable())
    close(values(nn.Log(), pos), pos:log():totable())
    assert.is_true(nn.Contiguous():forward(x:t()):is_contiguous())
  end)

  it('pass the Jacobian check', function()
    local input = torch.zeros(3, 4, {dtype = 'float64'})
    for _, m in ipairs({nn.Abs(), nn.Square(), nn.Power(2), nn.MulConstant(-1.5), nn.AddConstant(2), nn.Clamp(-1, 1),
                        nn.HardShrink(), nn.SoftShrink(), nn.SoftSign(), nn.TanhShrink(), nn.Threshold(0.3, 2),
                        nn.GatedLinearUnit(), nn.Exp(), nn.Contiguous()}) do
      local err = nn.Jacobian.testJacobian(m, input)
      assert.is_true(err < PRECISION, torch.typename(m) .. ': ' .. err)
    end
    assert.is_true(nn.Jacobian.testJacobian(nn.Sqrt(), input, 0.5, 2) < PRECISION)
    assert.is_true(nn.Jacobian.testJacobian(nn.Log(), input, 0.5, 2) < PRECISION)
  end)

  it("are written to Torch7's files and read back with their settings", function()
    for _, m in ipairs({nn.Power(3), nn.Clamp(-2, 0.5), nn.Threshold(0.1, 5), nn.SoftShrink(0.2), nn.Abs()}) do
      local ferr, berr = nn.Jacobian.testIO(m, torch.zeros(2, 3, {dtype = 'float64'}))
      assert.are.equal(0, ferr)
      assert.are.equal(0, berr)
    end
  end)

  it('name the module in bad arguments', function()
    assert.has_error(function() nn.Power('2') end, 'nn.Power: expected a number power, got string')
    assert.has_error(function() nn.Clamp(1, -1) end, 'nn.Clamp: expected numbers min <= max, got 1, -1')
    assert.has_error(function() nn.GatedLinearUnit():forward(torch.zeros(2, 3)) end,
                     'nn.GatedLinearUnit: dim 2 of the input has odd size 3')
  end)
end)
