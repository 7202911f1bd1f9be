-- Torch7's volumetric (3-D) and temporal (1-D) layers and the nn.functional forms under them:
-- F.conv3d, conv_transpose3d, max_pool3d, avg_pool3d, max_unpool3d, fractional_max_pool3d and
-- 3-D replicate padding against PyTorch's values (spec/support/volumetric_reference.lua) and
-- max_pool3d's and avg_pool3d's C kernels against window-by-window maxima and means (ties,
-- NaN, strided inputs, errors),
-- their gradients against finite differences, and the Torch7 constructors (argument orders,
-- fields, :ceil(), noBias, dual input, unpooling, time-last fractional pooling, dropout
-- scaling), TemporalConvolution / SubSampling / DynamicKMaxPooling and WeightNorm.
local torch = require 'torch'
local nn = require 'nn'
local F = nn.functional
local G = dofile('spec/support/gradients.lua')
local raises = dofile('spec/support/raises.lua')
local REF = dofile('spec/support/volumetric_reference.lua')

-- sin(a * i + b) over the flat index, float64: the reference script's inputs
local function seq(shape, a, b)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return (torch.arange(0, n, {dtype = 'float64'}) * a + b):sin():view(shape)
end

-- y matches the reference entry (shape and every value)
local function matches(y, ref, tol)
  assert.are.same(ref.size, y:size():totable())
  G.close(y:double():contiguous(), torch.tensor(ref.values, {dtype = 'float64'}):view(ref.size), tol or 1e-8)
end

-- a scalar function of x: the output of fn(x) against a fixed projection
local function projected(fn, proj_seed)
  local proj
  return function(x)
    local y = fn(x)
    proj = proj or seq(y:size():totable(), 0.77, proj_seed or 0.3)
    return (y * proj):sum()
  end
end

describe('F.conv3d and F.conv_transpose3d', function()
  local x = seq({1, 4, 5, 6, 6}, 0.37, 0.1)
  local w = seq({4, 2, 2, 3, 2}, 0.23, 0.5)
  local b = seq({4}, 1.1, 0.2)

  it('computes PyTorch conv3d with stride, padding, dilation and groups', function()
    matches(F.conv3d(x, w, b, {stride = {2, 1, 2}, padding = {1, 0, 1}, dilation = {1, 2, 1}, groups = 2}), REF.conv3d)
  end)

  it("pads 'same' with an even kernel as PyTorch (the extra one after)", function()
    local w2 = seq({3, 4, 2, 2, 3}, 0.31, 0.2)
    matches(F.conv3d(seq({1, 4, 3, 4, 3}, 0.21, 0.4), w2, nil, {padding = 'same'}), REF.conv3d_same)
  end)

  it('computes PyTorch conv_transpose3d with output_padding, dilation and groups', function()
    local xt, wt, bt = seq({1, 4, 3, 2, 3}, 0.41, 0.3), seq({4, 1, 3, 2, 2}, 0.29, 0.7), seq({2}, 0.9, 0.4)
    matches(F.conv_transpose3d(xt, wt, bt, {stride = {2, 1, 2}, padding = {1, 0, 1}, output_padding = {1, 0, 1},
                                            groups = 2, dilation = {1, 2, 1}}), REF.convt3d)
  end)

  it('takes an unbatched (C, T, H, W) input', function()
    local y = F.conv3d(x[1], w, b, {groups = 2})
    G.close(y, F.conv3d(x, w, b, {groups = 2})[1])
  end)

  it('has the gradients of finite differences in input, weight and bias', function()
    local xs, ws, bs = seq({2, 2, 4, 4, 3}, 0.7, 0.2), seq({3, 2, 2, 2, 2}, 0.4, 0.1), seq({3}, 1.3, 0.3)
    local opts = {stride = {2, 1, 1}, padding = {1, 1, 0}, dilation = {1, 2, 1}}
    G.gradcheck(projected(function(v) return F.conv3d(v, ws, bs, opts) end), xs, 1e-6)
    G.gradcheck(projected(function(v) return F.conv3d(xs, v, bs, opts) end), ws, 1e-6)
    G.gradcheck(projected(function(v) return F.conv3d(xs, ws, v, opts) end), bs, 1e-6)
    local topts = {stride = {2, 1, 2}, padding = {1, 0, 1}, output_padding = {1, 0, 1}}
    G.gradcheck(projected(function(v) return F.conv_transpose3d(v, ws, bs:narrow(1, 1, 2), topts) end), xs:narrow(2, 1, 1):expand(2, 3, 4, 4, 3):contiguous(), 1e-6)
    G.gradcheck(projected(function(v) return F.conv_transpose3d(xs, v, nil, topts) end), seq({2, 2, 2, 2, 2}, 0.3, 0.6), 1e-6)
  end)

  it('refuses mismatched channels, small inputs and bad options, naming the function', function()
    raises('F.conv3d: input of size', F.conv3d, x, seq({4, 3, 2, 2, 2}, 1, 0))
    raises('smaller than the dilated kernel', F.conv3d, x, seq({2, 4, 6, 1, 1}, 1, 0))
    raises('F.conv3d: expected a 5-D weight', F.conv3d, x, seq({2, 4, 2, 2}, 1, 0))
    raises('F.conv3d: stride must hold positive integers', F.conv3d, x, w, b, {stride = 0, groups = 2})
    raises('F.conv3d: expected a 4-D (C, T, H, W) or 5-D', F.conv3d, seq({4, 5, 6}, 1, 0), w)
    raises('F.conv_transpose3d: output_padding', F.conv_transpose3d, x, seq({4, 1, 2, 2, 2}, 1, 0), nil,
           {stride = 2, output_padding = 2})
  end)
end)

describe('F.max_pool3d, F.avg_pool3d, F.max_unpool3d', function()
  local xp = seq({2, 2, 5, 6, 5}, 0.53, 0.2)

  it('finds PyTorch max_pool3d values and 1-based positions (ceil_mode, padding, dilation)', function()
    local v, i = F.max_pool3d(xp, {3, 2, 3}, {stride = {2, 2, 1}, padding = {1, 1, 1}, dilation = {1, 1, 2},
                                              ceil_mode = true, return_indices = true})
    matches(v, REF.maxpool)
    assert.are.equal('int64', i.dtype)
    matches(i, REF.maxpool_idx, 0)
  end)

  it('averages as PyTorch avg_pool3d, with and without the padding counted and a divisor', function()
    local opts = {stride = {2, 2, 2}, padding = {1, 1, 1}, ceil_mode = true}
    opts.count_include_pad = false
    matches(F.avg_pool3d(xp, {3, 2, 3}, opts), REF.avgpool_excl)
    opts.count_include_pad = true
    matches(F.avg_pool3d(xp, {3, 2, 3}, opts), REF.avgpool_incl)
    matches(F.avg_pool3d(xp, 2, {divisor_override = 3}), REF.avgpool_div)
  end)

  it('unpools the maxima back to their positions', function()
    local x = seq({1, 2, 4, 4, 6}, 0.91, 0.3)
    local v, i = F.max_pool3d(x, 2, {return_indices = true})
    local u = F.max_unpool3d(v, i, 2)
    assert.are.same({1, 2, 4, 4, 6}, u:size():totable())
    -- every pooled value sits at its position; everything else is zero
    G.close(u:reshape(1, 2, 96):gather(3, i:reshape(1, 2, 12)), v:reshape(1, 2, 12))
    assert.are.equal(24, u:ne(0):sum():item())
    raises('F.max_unpool3d: index', F.max_unpool3d, v, i * 100, 2)
  end)

  it('has the gradients of finite differences', function()
    local x = seq({1, 2, 4, 5, 4}, 1.37, 0.4)
    G.gradcheck(projected(function(v) return F.max_pool3d(v, {2, 3, 2}, {stride = 1, padding = {1, 1, 0},
                                                                       dilation = {1, 1, 2}}) end), x, 1e-6)
    G.gradcheck(projected(function(v) return F.avg_pool3d(v, {2, 3, 2}, {stride = {1, 2, 1}, padding = 1,
                                                                       ceil_mode = true}) end), x, 1e-6)
  end)

  it('refuses too much padding and too small inputs', function()
    raises('F.max_pool3d: padding', F.max_pool3d, xp, 2, {padding = 2})
    raises('F.avg_pool3d: input of size', F.avg_pool3d, xp, {6, 2, 2})
    raises('F.max_pool3d: kernel must hold positive integers', F.max_pool3d, xp, {0, 2, 2})
  end)
end)

-- max pooling by the definition, window by window: for x (N, C, T, H, W) the taps o * s - p + a * d
-- of each dim inside the input, the value and 1-based position (in the T * H * W volume) of the
-- first maximum in (t, h, w) order, a NaN beating any number (the first NaN stays); the output
-- length floor or ceil((n + 2 p - d (k - 1) - 1) / s) + 1, the last window starting inside the
-- input or its left padding (PyTorch's documented sizes)
local function max_pool3d_by_definition(x, k, s, p, d, ceil_mode)
  local N, C, T, H, W = table.unpack(x:size():totable())
  local xs, ins, outs = x:contiguous():_flat_values(), {T, H, W}, {}
  for i = 1, 3 do
    local num = ins[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1
    local o = (ceil_mode and -(-num // s[i]) or num // s[i]) + 1
    if ceil_mode and (o - 1) * s[i] >= ins[i] + p[i] then o = o - 1 end
    outs[i] = o
  end
  local vals, idx = {}, {}
  for plane = 0, N * C - 1 do
    for ot = 0, outs[1] - 1 do
      for oh = 0, outs[2] - 1 do
        for ow = 0, outs[3] - 1 do
          local best, at
          for a = 0, k[1] - 1 do
            local t = ot * s[1] - p[1] + a * d[1]
            for b = 0, k[2] - 1 do
              local h = oh * s[2] - p[2] + b * d[2]
              for c = 0, k[3] - 1 do
                local w = ow * s[3] - p[3] + c * d[3]
                if t >= 0 and t < T and h >= 0 and h < H and w >= 0 and w < W then
                  local pos = (t * H + h) * W + w
                  local v = xs[plane * T * H * W + pos + 1]
                  if best == nil or v > best or (v ~= v and best == best) then best, at = v, pos end
                end
              end
            end
          end
          vals[#vals + 1], idx[#idx + 1] = best, at + 1
        end
      end
    end
  end
  local shape = {N, C, outs[1], outs[2], outs[3]}
  return torch.tensor(vals, {dtype = 'float64'}):view(shape), torch.tensor(idx, {dtype = 'int64'}):view(shape)
end

describe("max_pool3d's C kernel (torch._max_pool3d_indices under F.max_pool3d)", function()
  -- few distinct values, so that windows hold ties
  local function tied(shape, a, b) return (seq(shape, a, b) * 2.5):floor() end
  -- {kernel, stride, padding, dilation, ceil_mode}
  local CASES = {
    {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, false},     -- the 2x2 (h, w) windows' own pass
    {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}, true},      -- ... with a last, partial window
    {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false},
    {{3, 2, 3}, {2, 2, 1}, {1, 1, 1}, {1, 1, 2}, true},
    {{2, 3, 2}, {1, 2, 3}, {0, 1, 1}, {2, 1, 1}, false},
    {{1, 3, 1}, {3, 1, 2}, {0, 0, 0}, {1, 2, 1}, true},
  }

  it('finds the maxima and their positions of the definition, ties to the first in (t, h, w) order', function()
    for _, dtype in ipairs({'float32', 'float64'}) do
      local inputs = {
        tied({2, 3, 5, 7, 9}, 0.61, 0.3):to(dtype),
        tied({2, 3, 9, 7, 5}, 0.47, 0.1):to(dtype):transpose(3, 5),                 -- not contiguous
        tied({3, 2, 5, 6, 8}, 0.83, 0.2):to(dtype):permute(2, 1, 3, 4, 5),          -- batch and channels swapped
        tied({2, 3, 5, 6, 12}, 0.29, 0.5):to(dtype):narrow(5, 3, 8),                -- a window of rows
      }
      for ci, c in ipairs(CASES) do
        for xi, x in ipairs(inputs) do
          local what = string.format('%s case %d input %d', dtype, ci, xi)
          local wv, wi = max_pool3d_by_definition(x, c[1], c[2], c[3], c[4], c[5])
          local v, i = F.max_pool3d(x, c[1], {stride = c[2], padding = c[3], dilation = c[4], ceil_mode = c[5],
                                               return_indices = true})
          assert.are.equal(dtype, v.dtype, what)
          assert.are.same(wi:size():totable(), i:size():totable(), what)
          assert(i:eq(wi):all():item(), what .. ': positions differ')
          G.close(v:double(), wv, 0)
        end
      end
    end
  end)

  it('lets a NaN win its windows, the first NaN of a window where there are two', function()
    local x = seq({1, 1, 4, 6, 5}, 0.7, 0.1)
    x[{1, 1, 2, 3, 2}] = 0 / 0
    x[{1, 1, 2, 3, 4}] = 0 / 0
    x[{1, 1, 4, 1, 1}] = 0 / 0
    for _, c in ipairs(CASES) do
      local _, wi = max_pool3d_by_definition(x, c[1], c[2], c[3], c[4], c[5])
      local v, i = F.max_pool3d(x, c[1], {stride = c[2], padding = c[3], dilation = c[4], ceil_mode = c[5],
                                           return_indices = true})
      assert(i:eq(wi):all():item(), 'positions differ')
      local flat = x:reshape(1, 1, 120)
      local nan = flat:gather(3, i:reshape(1, 1, -1)):ne(flat:gather(3, i:reshape(1, 1, -1)))
      assert.are.same(v:ne(v):reshape(1, 1, -1):totable(), nan:totable())
      assert(v:ne(v):any():item())
    end
  end)

  it('pools unbatched (C, T, H, W) input as a batch of one', function()
    local x = seq({3, 4, 5, 6}, 0.37, 0.2)
    local v, i = F.max_pool3d(x, {2, 3, 2}, {stride = 1, padding = {1, 1, 0}, return_indices = true})
    local bv, bi = F.max_pool3d(x:unsqueeze(1), {2, 3, 2}, {stride = 1, padding = {1, 1, 0}, return_indices = true})
    assert.are.same({3, 5, 5, 5}, v:size():totable())
    G.close(v, bv[1], 0)
    assert(i:eq(bi[1]):all():item())
  end)

  it('has the gradients of finite differences, on contiguous and strided inputs', function()
    local xs = {seq({1, 2, 4, 5, 6}, 1.37, 0.4), seq({2, 1, 6, 5, 4}, 1.13, 0.2):transpose(3, 5)}
    for _, x in ipairs(xs) do
      for _, c in ipairs(CASES) do
        G.gradcheck(projected(function(v) return F.max_pool3d(v, c[1], {stride = c[2], padding = c[3],
                                                                     dilation = c[4], ceil_mode = c[5]}) end), x, 1e-6)
      end
    end
  end)

  it('refuses bad shapes, types and geometry, naming max_pool3d and the sizes', function()
    local x = seq({1, 2, 4, 5, 6}, 0.3, 0.1)
    local function idx(t, ...) return torch._max_pool3d_indices(t, ...) end
    raises('max_pool3d: expected a 5-D input (n, c, t, h, w), got 2x4x5x6', idx, x[1], 2, 2, 2, 2, 2, 2, 0, 0, 0, 1, 1, 1)
    raises('max_pool3d: expected float32 or float64, got int64', idx, x:long(), 2, 2, 2, 2, 2, 2, 0, 0, 0, 1, 1, 1)
    raises('max_pool3d: kernel, stride and dilation must be positive, got 2, 0, 1', idx, x, 2, 2, 2, 2, 0, 2, 0, 0, 0,
           1, 1, 1)
    raises('max_pool3d: padding 2 must be between 0 and half the kernel size 3', idx, x, 3, 3, 3, 1, 1, 1, 1, 2, 1,
           1, 1, 1)
    raises('max_pool3d: kernel 2x6x2 (dilation 1x1x1) does not fit the input 1x2x4x5x6 padded by 0x0x0', idx, x,
           2, 6, 2, 1, 1, 1, 0, 0, 0, 1, 1, 1)
    raises('max_pool3d: kernel', idx, x, math.maxinteger, 2, 2, 1, 1, 1, 0, 0, 0, 1 << 62, 1, 1)
    raises('max_pool3d: kernel', idx, x, 2, 2, 2, 1, 1, 1, 0, 0, 0, math.maxinteger, 1, 1)
    raises('F.max_pool3d: input of size', F.max_pool3d, x, {2, 6, 2})
    raises('F.max_pool3d: input of size', F.max_pool3d, x, {2, 2, 4}, {dilation = {1, 1, 2}})
    raises('F.max_pool3d: expected a 4-D (C, T, H, W) or 5-D', F.max_pool3d, x[1][1], 2)
  end)
end)

-- average pooling by the definition: each window's sum over its taps inside the input, divided
-- by divisor_override, or by the window's size clipped to the padded input (count_include_pad),
-- or by its taps inside the input (PyTorch's avg_pool3d)
local function avg_pool3d_by_definition(x, k, s, p, ceil_mode, count_pad, divisor)
  local N, C, T, H, W = table.unpack(x:size():totable())
  local xs, ins, outs = x:contiguous():_flat_values(), {T, H, W}, {}
  for i = 1, 3 do
    local num = ins[i] + 2 * p[i] - k[i]
    local o = (ceil_mode and -(-num // s[i]) or num // s[i]) + 1
    if ceil_mode and (o - 1) * s[i] >= ins[i] + p[i] then o = o - 1 end
    outs[i] = o
  end
  local vals = {}
  for plane = 0, N * C - 1 do
    for ot = 0, outs[1] - 1 do
      for oh = 0, outs[2] - 1 do
        for ow = 0, outs[3] - 1 do
          local o, sum, taps, size = {ot, oh, ow}, 0, 0, 1
          for i = 1, 3 do
            local start = o[i] * s[i] - p[i]
            size = size * (math.min(start + k[i], ins[i] + p[i]) - start)
          end
          for a = 0, k[1] - 1 do
            local t = ot * s[1] - p[1] + a
            for b = 0, k[2] - 1 do
              local h = oh * s[2] - p[2] + b
              for c = 0, k[3] - 1 do
                local w = ow * s[3] - p[3] + c
                if t >= 0 and t < T and h >= 0 and h < H and w >= 0 and w < W then
                  sum, taps = sum + xs[plane * T * H * W + (t * H + h) * W + w + 1], taps + 1
                end
              end
            end
          end
          vals[#vals + 1] = sum / (divisor or (count_pad and size or taps))
        end
      end
    end
  end
  return torch.tensor(vals, {dtype = 'float64'}):view(N, C, outs[1], outs[2], outs[3])
end

describe("avg_pool3d's C kernel (torch._avg_pool3d under F.avg_pool3d)", function()
  -- {kernel, stride, padding, ceil_mode, count_include_pad, divisor_override}
  local CASES = {
    {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, false, true},
    {{2, 2, 2}, {2, 2, 2}, {1, 1, 0}, true, false},
    {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, false, true},
    {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, false, false},
    {{3, 2, 3}, {2, 2, 1}, {1, 1, 1}, true, true},
    {{2, 3, 2}, {1, 2, 3}, {0, 1, 1}, true, false, 5},
    {{1, 3, 4}, {3, 1, 2}, {0, 1, 2}, false, true, -2},
  }
  local function run(x, c)
    return F.avg_pool3d(x, c[1], {stride = c[2], padding = c[3], ceil_mode = c[4], count_include_pad = c[5],
                                  divisor_override = c[6]})
  end

  it('averages as the definition, on contiguous and strided float32 and float64 inputs', function()
    for _, dtype in ipairs({'float32', 'float64'}) do
      local inputs = {
        seq({2, 3, 5, 7, 9}, 0.61, 0.3):to(dtype),
        seq({2, 3, 9, 7, 5}, 0.47, 0.1):to(dtype):transpose(3, 5),
        seq({3, 2, 5, 6, 8}, 0.83, 0.2):to(dtype):permute(2, 1, 3, 4, 5),
        seq({2, 3, 5, 6, 12}, 0.29, 0.5):to(dtype):narrow(5, 3, 8),
      }
      for ci, c in ipairs(CASES) do
        for _, x in ipairs(inputs) do
          local y = run(x, c)
          assert.are.equal(dtype, y.dtype)
          G.close(y:double(), avg_pool3d_by_definition(x:double(), c[1], c[2], c[3], c[4], c[5], c[6]),
                  dtype == 'float32' and 1e-5 or 1e-12)
        end
      end
    end
  end)

  it('has the gradients of finite differences, on contiguous and strided inputs, and second ones', function()
    local xs = {seq({1, 2, 4, 5, 6}, 1.37, 0.4), seq({2, 1, 6, 5, 4}, 1.13, 0.2):transpose(3, 5)}
    for _, x in ipairs(xs) do
      for _, c in ipairs(CASES) do G.gradcheck(projected(function(v) return run(v, c) end), x, 1e-6) end
    end
    -- the gradient is the adjoint A^T g, recorded with create_graph: <A^T g, u>'s gradient in g is A u
    local x = seq({1, 2, 4, 5, 6}, 0.9, 0.1):requires_grad_()
    local u = seq({1, 2, 4, 5, 6}, 0.5, 0.2)
    for _, c in ipairs(CASES) do
      local g = seq(run(x, c):size():totable(), 0.3, 0.7):requires_grad_()
      local gx = torch.autograd.grad(run(x, c), x, {grad_outputs = g, create_graph = true})[1]
      G.close(torch.autograd.grad((gx * u):sum(), g)[1], run(u, c), 1e-12)
    end
  end)

  it('refuses bad shapes, types and geometry, naming avg_pool3d and the sizes', function()
    local x = seq({1, 2, 4, 5, 6}, 0.3, 0.1)
    local function avg(t, ...) return torch._avg_pool3d(t, ...) end
    raises('avg_pool3d: expected a 5-D input (n, c, t, h, w), got 2x4x5x6', avg, x[1], 2, 2, 2, 2, 2, 2, 0, 0, 0)
    raises('avg_pool3d: expected float32 or float64, got int64', avg, x:long(), 2, 2, 2, 2, 2, 2, 0, 0, 0)
    raises('avg_pool3d: kernel and stride must be positive, got 2, 0', avg, x, 2, 2, 2, 2, 0, 2, 0, 0, 0)
    raises('avg_pool3d: padding 2 must be between 0 and half the kernel size 3', avg, x, 3, 3, 3, 1, 1, 1, 1, 2, 1)
    raises('avg_pool3d: kernel 2x6x2 does not fit the input 1x2x4x5x6 padded by 0x0x0', avg, x, 2, 6, 2, 1, 1, 1,
           0, 0, 0)
    raises('avg_pool3d: kernel', avg, x, math.maxinteger, 2, 2, 1, 1, 1, 0, 0, 0)
    raises('avg_pool3d: padding', avg, x, 2, 2, 2, 1, 1, 1, math.mininteger, 0, 0)
    raises('F.avg_pool3d: input of size', F.avg_pool3d, x, {2, 6, 2})
    raises('F.avg_pool3d: divisor_override must be a non-zero number', F.avg_pool3d, x, 2, {divisor_override = 0})
  end)
end)

describe('3-D replicate padding and fractional max pooling', function()
  it("pads with mode 'replicate' and six pads as PyTorch (negative pads crop)", function()
    local x = seq({1, 2, 3, 3, 4}, 0.43, 0.6)
    matches(F.pad(x, {2, -1, 1, 0, -1, 2}, 'replicate'), REF.pad)
    G.gradcheck(projected(function(v) return F.pad(v, {2, -1, 1, 0, -1, 2}, {mode = 'replicate'}) end), x, 1e-6)
    local m = nn.ReplicationPad3d({2, -1, 1, 0, -1, 2})
    matches(m(x), REF.pad)
    raises('leave nothing', F.pad, x, {0, 0, 0, 0, -2, -1}, 'replicate')
  end)

  it('pools fractionally as PyTorch given the samples, with positions', function()
    local xp = seq({2, 2, 5, 6, 5}, 0.53, 0.2)
    local s = torch.tensor({{{0.1, 0.5, 0.9}, {0.3, 0.7, 0.2}}, {{0.6, 0.05, 0.45}, {0.8, 0.35, 0.55}}},
                           {dtype = 'float64'})
    local v, i = F.fractional_max_pool3d(xp, {2, 2, 3}, {output_size = {3, 4, 2}, _random_samples = s,
                                                         return_indices = true})
    matches(v, REF.frac)
    matches(i, REF.frac_idx, 0)
    G.gradcheck(projected(function(t) return F.fractional_max_pool3d(t, {2, 2, 3}, {output_size = {3, 4, 2},
                                                                                    _random_samples = s}) end), xp, 1e-6)
    raises('do not fit the input size', F.fractional_max_pool3d, xp, 3, {output_size = {4, 4, 4}})
  end)
end)

describe("Torch7's volumetric layers", function()
  it('VolumetricConvolution takes (nIn, nOut, kT, kW, kH, dT, dW, dH, padT, padW, padH)', function()
    local m = nn.VolumetricConvolution(2, 3, 2, 3, 1, 1, 2, 1, 0, 1, 0):double()
    assert.are.same({3, 2, 2, 1, 3}, m.weight:size():totable())
    assert.are.equal(3, m.nOutputPlane)
    local x = seq({2, 4, 3, 5}, 0.3, 0.2)
    local y = m:forward(x)
    -- T: 4 - 2 + 1; H: 3 - 1 + 1; W: (5 + 2 - 3) // 2 + 1
    assert.are.same({3, 3, 3, 3}, y:size():totable())
    G.close(y:detach(), F.conv3d(x, m.weight:detach(), m.bias:detach(), {stride = {1, 1, 2}, padding = {0, 0, 1}}))
    -- noBias, then a plain tensor as bias and its gradient, as Torch7's code writes them
    m:noBias()
    assert.is_nil(m.bias)
    local before = torch.dialect()
    torch.dialect('torch7')                         -- Torch7's code assigns a plain tensor
    local ok, err = pcall(function() m.bias = torch.zeros(3, {dtype = 'float64'}) end)
    torch.dialect(before)
    assert(ok, err)
    assert.is_true(nn.is_parameter(m.bias))
    m.gradBias = torch.zeros(3, {dtype = 'float64'})
    m:zeroGradParameters()
    m:forward(x)
    m:backward(x, torch.ones(3, 3, 3, 3, {dtype = 'float64'}))
    G.close(m.gradBias, torch.full({3}, 27, {dtype = 'float64'}))
    raises('nn.VolumetricConvolution: kT must be an integer', nn.VolumetricConvolution, 2, 3, 1.5, 3, 1)
  end)

  it('VolumetricFullConvolution sums kernels of ones as Torch7 documents, and fits a target size', function()
    local m = nn.VolumetricFullConvolution(3, 1, 3, 3, 3, 3, 3, 3):double()
    torch.no_grad(function() m.weight:fill_(1); m.bias:fill_(0.1) end)
    local x = torch.zeros(1, 3, 2, 2, 2, {dtype = 'float64'})
    x:narrow(3, 1, 1):narrow(4, 1, 1):narrow(5, 1, 1):fill_(1)
    local y = m:forward(x)
    assert.are.same({1, 1, 6, 6, 6}, y:size():totable())
    assert.is_true(math.abs(y[1][1][2][3][1] - 3.1) < 1e-12)
    assert.is_true(math.abs(y[1][1][4][1][1] - 0.1) < 1e-12)
    m:zeroGradParameters()
    local gi = m:backward(x, torch.full({1, 1, 6, 6, 6}, 0.1, {dtype = 'float64'}))
    G.close(gi, torch.full({1, 3, 2, 2, 2}, 2.7, {dtype = 'float64'}))
    assert.is_true(math.abs(m.gradBias[1] - 21.6) < 1e-9)
    -- {input, target}: the output takes target's size, adj computed
    local d = nn.VolumetricFullConvolution(2, 2, 3, 3, 3, 2, 2, 2, 1, 1, 1):double()
    local out = d:forward({seq({2, 3, 3, 3}, 0.5, 0), torch.zeros(6, 6, 5, {dtype = 'float64'})})
    assert.are.same({2, 6, 6, 5}, out:size():totable())
    local g = d:backward({seq({2, 3, 3, 3}, 0.5, 0), torch.zeros(6, 6, 5, {dtype = 'float64'})}, out:detach())
    assert.are.same({2, 3, 3, 3}, g[1]:size():totable())
    assert.are.equal(1, g[2]:numel())
    raises('adjT, adjW, adjH', nn.VolumetricFullConvolution, 2, 2, 3, 3, 3, 2, 2, 2, 0, 0, 0, 2)
  end)

  it('VolumetricMaxPooling rounds up with :ceil() and VolumetricMaxUnpooling inverts it', function()
    local p = nn.VolumetricMaxPooling(2, 2, 2, 2, 2, 2):ceil()
    local x = seq({3, 2, 7, 7}, 0.77, 0.1)
    local y = p:forward(x)
    assert.are.same({3, 1, 4, 4}, y:size():totable())
    -- the corner window holds the last column alone (ceil): t 1..2, h 1..2, w 7
    local corner = x[1]:narrow(1, 1, 2):narrow(2, 1, 2):select(3, 7):max():item()
    assert.are.equal(corner, y[1][1][1][4])
    local q = nn.VolumetricMaxPooling(2, 2, 2)
    local u = nn.VolumetricMaxUnpooling(q)
    local x2 = seq({2, 4, 4, 6}, 0.57, 0.3)
    local back = u:forward(q:forward(x2))
    assert.are.same({2, 4, 4, 6}, back:size():totable())
    G.close((back:detach():reshape(2, 96):max(2)), (x2:reshape(2, 96):max(2)))
    raises('must equal its stride', nn.VolumetricMaxUnpooling, nn.VolumetricMaxPooling(2, 2, 2, 1, 1, 1))
  end)

  it('VolumetricAveragePooling, Dilated pooling and BatchNormalization build the PyTorch modules', function()
    local x = seq({2, 2, 5, 6, 5}, 0.53, 0.2)
    local a = nn.VolumetricAveragePooling(3, 3, 2, 2, 2, 2, 1, 1, 1):ceil()
    a.count_include_pad = false
    matches(a:forward(x), REF.avgpool_excl)
    local d = nn.VolumetricDilatedMaxPooling(3, 3, 2, 2, 1, 2, 1, 1, 1, 1, 2, 1):ceil()
    matches(d:forward(x), REF.maxpool)
    local bn = nn.VolumetricBatchNormalization(2):double()
    local y = bn:forward(x)
    G.close(y:detach():mean({1, 3, 4, 5}), torch.zeros(2, {dtype = 'float64'}), 1e-12)
    bn:evaluate()
    G.close(bn:forward(x[1]):detach(), bn:forward(x):detach()[1])
  end)

  it("VolumetricDropout keeps whole channels unscaled in training and scales by 1 - p in evaluation", function()
    local m = nn.VolumetricDropout(0.5)
    local x = torch.ones(2, 50, 2, 2, 2, {dtype = 'float64'})
    local y = m:forward(x):detach()
    local per_channel = y:sum({3, 4, 5})
    assert.is_true(per_channel:eq(0):logical_or(per_channel:eq(8)):all():item())
    assert.is_true(per_channel:eq(0):any():item() and per_channel:eq(8):any():item())
    m:evaluate()
    G.close(m:forward(x):detach(), x * 0.5)
    -- PyTorch's Dropout3d scales the kept channels instead
    local d = nn.Dropout3d(0.5)
    local s = d(x):sum({3, 4, 5})
    assert.is_true(s:eq(0):logical_or(s:eq(16)):all():item())
  end)

  it('VolumetricFractionalMaxPooling pools Torch7 time-last input to the requested sizes', function()
    local m = nn.VolumetricFractionalMaxPooling(2, 2, 3, 4, 3, 2)     -- poolT, poolW, poolH, outT, outW, outH
    local x = seq({2, 3, 8, 7, 9}, 0.61, 0.2)                           -- N, C, H, W, T
    local y = m:forward(x)
    assert.are.same({2, 3, 2, 3, 4}, y:size():totable())
    -- the same as F.fractional_max_pool3d on the (N, C, T, H, W) layout with the module's samples
    local ref = F.fractional_max_pool3d(x:permute(1, 2, 5, 3, 4), {2, 3, 2}, {output_size = {4, 2, 3},
                                        _random_samples = m.randomSamples})
    G.close(y:detach(), ref:permute(1, 2, 4, 5, 3))
    local r = nn.VolumetricFractionalMaxPooling(2, 2, 2, 0.5, 0.7, 0.6):fixPoolingRegions()
    local a = r:forward(x):detach()
    assert.are.same({2, 3, 4, 4, 4}, a:size():totable())
    G.close(r:forward(x):detach(), a)
    raises('pool sizes must be integers of at least 2', nn.VolumetricFractionalMaxPooling, 1, 2, 2, 3, 3, 3)
  end)

  it("gives the same gradInput each backward when its input is another module's output", function()
    -- the input requires grad and is no leaf: its gradient must not pile up across backward calls
    local p = nn.VolumetricMaxPooling(2, 2, 2):double()
    local u = nn.VolumetricMaxUnpooling(p)
    local y = p:forward(seq({2, 4, 4, 4}, 0.9, 0.1))
    local out = u:forward(y)
    local g = seq(out:size():totable(), 0.3, 0.2)
    local first = u:backward(y, g):clone()
    local second = u:backward(y, g)
    G.close(second, first)
    G.close(first, g:reshape(2, 64):gather(2, p.indices:reshape(2, 8)):view(2, 2, 2, 2))
  end)

  it('round-trips through Torch7 files', function()
    local m = nn.Sequential():add(nn.VolumetricConvolution(2, 3, 2, 2, 2, 1, 1, 1, 1, 0, 1))
                             :add(nn.VolumetricMaxPooling(2, 2, 2)):add(nn.VolumetricReplicationPadding(1)):double()
    local x = seq({1, 2, 5, 5, 5}, 0.3, 0.3)
    local copy = torch.deserialize(torch.serialize(m, 'binary'), 'binary')
    G.close(copy:forward(x):detach(), m:forward(x):detach())
  end)
end)

describe("Torch7's temporal layers and WeightNorm", function()
  it('TemporalConvolution is conv1d over frames with a frame-major (out, in * kW) weight', function()
    local m = nn.TemporalConvolution(3, 4, 2, 2):double()
    torch.no_grad(function() m.weight:copy_(seq({4, 6}, 0.17, 0.9)); m.bias:copy_(seq({4}, 0.7, 0.1)) end)
    local x = seq({2, 7, 3}, 0.61, 0.3)
    matches(m:forward(x), REF.temporal)
    G.close(m:forward(x[2]):detach(), m:forward(x):detach()[2])
    G.gradcheck(projected(function(v) return m(v) end), x, 1e-6)
    raises('nn.TemporalConvolution: expected a 2-D (nFrames x 3)', function() return m:forward(seq({7, 4}, 1, 0)) end)
    raises('fewer than the kernel width', function() return m:forward(seq({1, 3}, 1, 0)) end)
  end)

  it('TemporalSubSampling weights the window sums per feature', function()
    local m = nn.TemporalSubSampling(2, 3, 2)
    torch.no_grad(function() m.weight:copy_(torch.tensor({2, -1})); m.bias:copy_(torch.tensor({0.5, 1})) end)
    local x = torch.tensor({{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}}, {dtype = m.weight.dtype})
    -- windows frames 1..3 and 3..5: sums {9, 12} and {21, 24}
    G.close(m:forward(x):detach(), torch.tensor({{18.5, -11}, {42.5, -23}}, {dtype = x.dtype}))
  end)

  it('TemporalDynamicKMaxPooling keeps the k largest of each feature in frame order', function()
    local m = nn.TemporalDynamicKMaxPooling(2, 0.5)
    local x = torch.tensor({{1, 9}, {5, 2}, {3, 8}, {4, 7}, {0, 1}}, {dtype = 'float64'})
    -- k = max(2, ceil(0.5 * 5)) = 3
    G.close(m:forward(x):detach(), torch.tensor({{5, 9}, {3, 8}, {4, 7}}, {dtype = 'float64'}))
    G.gradcheck(projected(function(v) return m(v) end), x, 1e-6)
    raises('fewer than k', function() return nn.TemporalDynamicKMaxPooling(6):forward(x) end)
  end)

  it('WeightNorm writes w = g * v / ||v|| and has the gradients of finite differences in g and v', function()
    local lin = nn.Linear(3, 2):double()
    local m = nn.WeightNorm(lin):double()
    local x = seq({4, 3}, 0.7, 0.1)
    m:forward(x)
    local v, g = m.v:detach(), m.g:detach()
    local expect = v * (g:view(2, 1) / (v:pow(2):sum(2, true) + 1e-4):sqrt())
    G.close(lin.weight:detach(), expect, 1e-12)
    local ps = m:parameters()
    assert.are.equal(3, #ps)
    assert.is_true(nn.Jacobian.testJacobianParameters(m, x, m.g, m.gradG) < 1e-5)
    assert.is_true(nn.Jacobian.testJacobianParameters(m, x, m.v, m.gradV) < 1e-5)
    -- outputDim 2 of a 5-D weight: one g per input plane
    local c = nn.WeightNorm(nn.VolumetricConvolution(2, 3, 1, 1, 1), 2)
    assert.are.same({2}, c.g:size():totable())
    assert.are.same({2, 3}, c.v:size():totable())
    raises('nn.WeightNorm: expected a module with a weight', nn.WeightNorm, nn.ReLU())
  end)
end)
