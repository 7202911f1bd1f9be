-- The C convolution kernels (src/tensor/mt_conv.c) behind torch._conv2d and
-- torch._conv_transpose2d: values against a naive loop written here, on
-- strides, asymmetric padding, dilation and groups, float32 and float64;
-- gradients and second derivatives by gradcheck (src/autograd/ag_conv.c).
local torch = require 'torch'

-- conv2d by definition: y[n][o][i][j] = b[o] + sum over the group's channels
-- and taps of x at (i * sh - pt + a * dh, j * sw - pl + q * dw), zero outside
local function naive_conv2d(x, w, b, s, pad, d, groups)
  local N, C, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  local O, Cg, KH, KW = w:size(1), w:size(2), w:size(3), w:size(4)
  local pt, pb, pl, pr = pad[1], pad[2], pad[3], pad[4]
  local OH = (H + pt + pb - d[1] * (KH - 1) - 1) // s[1] + 1
  local OW = (W + pl + pr - d[2] * (KW - 1) - 1) // s[2] + 1
  local xv, wv = x:double():totable(), w:double():totable()
  local y = torch.zeros(N, O, OH, OW, {dtype = 'float64'})
  local Og = O // groups
  for n = 1, N do
    for o = 1, O do
      local g0 = (o - 1) // Og * Cg
      for i = 1, OH do
        for j = 1, OW do
          local sum = b and b[o] or 0
          for c = 1, Cg do
            for a = 1, KH do
              for q = 1, KW do
                local r = (i - 1) * s[1] - pt + (a - 1) * d[1] + 1
                local t = (j - 1) * s[2] - pl + (q - 1) * d[2] + 1
                if r >= 1 and r <= H and t >= 1 and t <= W then
                  sum = sum + xv[n][g0 + c][r][t] * wv[o][c][a][q]
                end
              end
            end
          end
          y[n][o][i][j] = sum
        end
      end
    end
  end
  return y
end

local function close(want, got, tol)
  local diff = (want:double() - got:double()):abs():max():item()
  assert.is_true(diff <= tol, string.format('max difference %g (tolerance %g)', diff, tol))
end

-- {x size, weight size, stride, pads (top, bottom, left, right), dilation, groups}
local CASES = {
  {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
  {{1, 4, 9, 8}, {4, 2, 3, 2}, {2, 1}, {0, 0, 1, 1}, {1, 2}, 2},
  {{3, 4, 6, 6}, {4, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4},      -- depthwise
  {{2, 2, 10, 9}, {6, 2, 5, 3}, {2, 3}, {2, 2, 1, 1}, {2, 1}, 1},
  {{1, 3, 5, 5}, {2, 3, 2, 2}, {1, 1}, {0, 1, 0, 1}, {1, 1}, 1},      -- 'same' with an even kernel
  {{2, 5, 4, 11}, {3, 5, 1, 4}, {1, 2}, {0, 0, 3, 0}, {1, 3}, 1},
}

local function conv(x, w, b, cs)
  local s, p, d = cs[3], cs[4], cs[5]
  return torch._conv2d(x, w, b, s[1], s[2], p[1], p[2], p[3], p[4], d[1], d[2], cs[6])
end

describe('torch._conv2d', function()
  for _, dtype in ipairs({'float32', 'float64'}) do
    it('matches the definition in ' .. dtype, function()
      torch.manual_seed(7)
      for _, cs in ipairs(CASES) do
        local x = torch.randn(cs[1][1], cs[1][2], cs[1][3], cs[1][4], {dtype = dtype})
        local w = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = dtype})
        local b = torch.randn(cs[2][1], {dtype = dtype})
        local want = naive_conv2d(x, w, b, cs[3], cs[4], cs[5], cs[6])
        local got = conv(x, w, b, cs)
        assert.are.same(want:size():totable(), got:size():totable())
        assert.are.equal(dtype, got.dtype)
        close(want, got, dtype == 'float32' and 1e-4 or 1e-12)
        close(naive_conv2d(x, w, nil, cs[3], cs[4], cs[5], cs[6]), conv(x, w, nil, cs), dtype == 'float32' and 1e-4 or 1e-12)
      end
    end)
  end

  it('reads non-contiguous inputs and gives an empty batch', function()
    torch.manual_seed(3)
    local x = torch.randn(3, 2, 6, 5):transpose(3, 4)
    local w = torch.randn(2, 2, 3, 3):transpose(3, 4)
    close(naive_conv2d(x, w, nil, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1), torch._conv2d(x, w, nil, 1, 1, 1, 1, 1, 1, 1, 1, 1), 1e-4)
    local e = torch._conv2d(torch.zeros(0, 2, 5, 5), torch.randn(4, 2, 3, 3), nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    assert.are.same({0, 4, 3, 3}, e:size():totable())
  end)

  it('has derivatives to second order (gradcheck, gradgradcheck)', function()
    torch.manual_seed(11)
    for i, cs in ipairs(CASES) do
      if i <= 4 then
        local x = torch.randn(cs[1][1], cs[1][2], math.min(cs[1][3], 6), math.min(cs[1][4], 6), {dtype = 'float64', requires_grad = true})
        local w = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = 'float64', requires_grad = true})
        local b = torch.randn(cs[2][1], {dtype = 'float64', requires_grad = true})
        local f = function(a, v, c) return conv(a, v, c, cs) end
        assert.is_true(torch.autograd.gradcheck(f, {x, w, b}))
        assert.is_true(torch.autograd.gradgradcheck(f, {x, w, b}))
      end
    end
  end)

  -- The float32 kernels take different roads by shape (column planes, the last positions of
  -- several images packed in one vector, outer-product or lane-sum weight gradients, phase
  -- planes, im2col for strides; the bias gradient fused into the weight gradient's pass):
  -- each must give float64's gradients.
  it('gives float32 gradients (input, weight, fused bias) equal to float64 on every kernel path', function()
    local PATHS = {
      {{4, 3, 14, 14}, {24, 3, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},   -- 'same': rows as wide as the image
      {{3, 2, 9, 11}, {80, 2, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},    -- 'valid'; channels past 64
      {{3, 6, 9, 11}, {80, 6, 3, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},    -- the same, taps enough for outer products
      {{5, 1, 28, 28}, {32, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},   -- a first layer: few taps, lane sums
      {{2, 8, 7, 7}, {8, 1, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8},      -- depthwise: lane sums
      {{2, 4, 8, 8}, {6, 2, 5, 5}, {1, 1}, {1, 3, 2, 0}, {1, 2}, 2},      -- asymmetric pads, dilation
      {{2, 3, 6, 6}, {16, 3, 3, 3}, {1, 1}, {3, 3, 3, 3}, {1, 1}, 1},     -- input gradient crops
      {{2, 48, 48, 48}, {16, 48, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, -- planes past the cache: phase planes
      {{2, 3, 9, 9}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},     -- strided
      {{37, 16, 28, 28}, {32, 16, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, -- many chunks, two threads
      {{13, 20, 14, 14}, {40, 20, 3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1}, -- packed row ends, partial packs
    }
    local threads = torch.getnumthreads()
    torch.setnumthreads(2)
    torch.manual_seed(17)
    for i, cs in ipairs(PATHS) do
      local x64 = torch.randn(cs[1][1], cs[1][2], cs[1][3], cs[1][4], {dtype = 'float64'})
      local w64 = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = 'float64'}) * 0.3
      local b64 = torch.randn(cs[2][1], {dtype = 'float64'})
      local grads = {}
      for _, dtype in ipairs({'float64', 'float32'}) do
        local x, w, b = x64:detach():to(dtype):requires_grad_(), w64:detach():to(dtype):requires_grad_(),
                        b64:detach():to(dtype):requires_grad_()
        local y = conv(x, w, b, cs)
        local r = torch.arange(0, y:numel(), {dtype = 'float64'}):view(y:size()):mul(0.37):sin():to(dtype)
        local loss = (y * r):sum()
        loss:backward()
        grads[dtype] = {x.grad, w.grad, b.grad}
      end
      for k, name in ipairs({'input', 'weight', 'bias'}) do
        local want, got = grads.float64[k], grads.float32[k]
        local diff = (want - got:double()):abs():max():item()
        local scale = want:abs():max():item()
        assert.is_true(diff <= 2e-5 * (1 + scale),
          string.format('case %d, %s gradient: max difference %g at scale %g', i, name, diff, scale))
      end
    end
    torch.setnumthreads(threads)
  end)

  it('raises on bad shapes and parameters, naming the op', function()
    local x, w = torch.randn(1, 3, 5, 5), torch.randn(4, 3, 3, 3)
    local function raises(pattern, ...)
      local ok, err = pcall(torch._conv2d, ...)
      assert.is_false(ok)
      assert.truthy(tostring(err):find(pattern, 1, true), tostring(err))
    end
    raises('conv2d: expected a 4-D input', torch.randn(3, 5, 5), w, nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: given groups=1', torch.randn(1, 2, 5, 5), w, nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: stride must be positive', x, w, nil, 0, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: kernel size 3x3', torch.randn(1, 3, 2, 2), w, nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: expected a bias of size 4', x, w, torch.randn(3), 1, 1, 0, 0, 0, 0, 1, 1, 1)
    raises('conv2d: out_channels', x, torch.randn(3, 3, 3, 3), nil, 1, 1, 0, 0, 0, 0, 1, 1, 2)
    raises('conv2d: expected float32 or float64', x:long(), w:long(), nil, 1, 1, 0, 0, 0, 0, 1, 1, 1)
  end)
end)

describe('torch._conv_transpose2d', function()
  it('is the adjoint of conv2d in its input', function()
    -- <conv(x, w), u> = <x, conv_transpose(u, w)> for every x, u
    torch.manual_seed(5)
    for _, cs in ipairs({{{2, 4, 7, 6}, {6, 2, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 2},
                         {{1, 3, 5, 5}, {4, 3, 2, 3}, {1, 1}, {0, 1}, {2, 1}, 1}}) do
      local x = torch.randn(cs[1][1], cs[1][2], cs[1][3], cs[1][4], {dtype = 'float64'})
      local w = torch.randn(cs[2][1], cs[2][2], cs[2][3], cs[2][4], {dtype = 'float64'})
      local s, p, d = cs[3], cs[4], cs[5]
      local y = torch._conv2d(x, w, nil, s[1], s[2], p[1], p[1], p[2], p[2], d[1], d[2], cs[6])
      local u = torch.randn(y:size(), {dtype = 'float64'})
      -- the transposed convolution's input is the convolution's output: u (n, o, ...), weight (o, c / g, ...)
      local out_pad = {x:size(3) - ((y:size(3) - 1) * s[1] - 2 * p[1] + d[1] * (w:size(3) - 1) + 1),
                       x:size(4) - ((y:size(4) - 1) * s[2] - 2 * p[2] + d[2] * (w:size(4) - 1) + 1)}
      local z = torch._conv_transpose2d(u, w, nil, s[1], s[2], p[1], p[2], out_pad[1], out_pad[2], d[1], d[2], cs[6])
      assert.are.same(x:size():totable(), z:size():totable())
      assert.is_true(math.abs((y * u):sum():item() - (x * z):sum():item()) < 1e-9)
    end
  end)

  it('matches PyTorch on a small case, with bias', function()
    -- torch.nn.functional.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)
    -- with x = arange(8).view(1,2,2,2)/8, w = arange(18).view(2,1,3,3)/18, b = [0.5]
    local x = torch.arange(0, 8, {dtype = 'float64'}):view(1, 2, 2, 2) / 8
    local w = torch.arange(0, 18, {dtype = 'float64'}):view(2, 1, 3, 3) / 18
    local y = torch._conv_transpose2d(x, w, torch.tensor({0.5}, {dtype = 'float64'}), 2, 2, 1, 1, 1, 1, 1, 1, 1)
    assert.are.same({1, 1, 4, 4}, y:size():totable())
    local want = {0.861111111111111, 1.32638888888889, 0.979166666666667, 1.02083333333333, 1.375, 2.45833333333333,
                  1.61111111111111, 1.72222222222222, 1.09722222222222, 1.79861111111111, 1.21527777777778,
                  1.28472222222222, 1.26388888888889, 2.17361111111111, 1.42361111111111, 1.49305555555556}
    close(torch.tensor(want, {dtype = 'float64'}), y:reshape(-1), 1e-12)
  end)

  it('has derivatives to second order', function()
    torch.manual_seed(13)
    local x = torch.randn(2, 4, 4, 3, {dtype = 'float64', requires_grad = true})
    local w = torch.randn(4, 3, 3, 2, {dtype = 'float64', requires_grad = true})
    local b = torch.randn(6, {dtype = 'float64', requires_grad = true})
    local f = function(a, v, c) return torch._conv_transpose2d(a, v, c, 2, 1, 1, 0, 1, 0, 1, 2, 2) end
    assert.is_true(torch.autograd.gradcheck(f, {x, w, b}))
    assert.is_true(torch.autograd.gradgradcheck(f, {x, w, b}))
  end)
end)
