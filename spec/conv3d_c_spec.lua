-- conv3d and conv_transpose3d's C kernels (torch._conv3d, torch._conv_transpose3d, and
-- conv3d_weight under their derivatives), through F.conv3d / F.conv_transpose3d on CPU tensors:
-- values and gradients (input, weight, bias) against PyTorch's (torch 2.x, the numbers below
-- computed by F.conv3d / F.conv_transpose3d and backward on the same inputs), second
-- derivatives, gradcheck / gradgradcheck, strided and chunked inputs, and bad input errors.
local torch = require 'torch'
local nn = require 'nn'
local F = nn.functional
local raises = dofile('spec/support/raises.lua')

-- sin(step * i) * scale over the flat index i, computed in float64 and cast to dtype: the
-- reference script's inputs
local function ramp(shape, step, scale, dtype)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  return ((torch.arange(0, n, {dtype = 'float64'}) * step):sin() * scale):view(shape):to(dtype or 'float64')
end

local function near(got, want, tol, what)
  local err = math.abs(got - want)
  assert(err <= tol * math.max(1, math.abs(want)),
         string.format('%s: got %.17g, want %.17g (error %.3g)', what, got, want, err))
end

-- PyTorch's numbers for the cases below: y = F.conv3d or F.conv_transpose3d of
-- x = ramp(x size, 0.37, 1), w = ramp(w size, 0.71, 0.5), b = ramp({o}, 0.5, 0.3); the loss
-- sum(y * ramp(y size, 0.29, 1)); the gradients' sums against ramp(size, 0.23, 1) (x) and
-- ramp(size, 0.17, 1) (w), the bias gradient in full
local REF = {
  stride2_odd = {
    size = {2, 4, 3, 5, 4},
    y_wsum = -6.458284240441833, y_sqsum = 162.76783012275615,
    y_first = {0.07460021122900086, -0.06975954354405736, -0.554354434104065, -0.556873767633373, -0.4151807322938101},
    y_last = 0.4709471930380206,
    gx_wsum = 2.360384737368397, gw_wsum = 2.8829972725973922,
    gb = {5.22866792172044, 7.791555800357707, -3.343990306642732, -8.60042425198027},
  },
  dilation_groups2 = {
    size = {1, 6, 7, 5, 4},
    y_wsum = 20.42317059444826, y_sqsum = 5240.364837245041,
    y_first = {1.9031279571284163, 2.076361615635753, 1.9685694701194614, 1.5943406817993568, 0.7606337358344456},
    y_last = -0.7010162310767818,
    gx_wsum = 7.837002238650761, gw_wsum = -7.3495011227898495,
    gb = {6.630241917357119, -6.009558918259801, 5.04236803450924, -3.7844369641581936, 2.308297325609501, -0.6990625241164651},
  },
  same_even = {
    size = {2, 3, 4, 5, 3},
    y_wsum = 28.31799522536239, y_sqsum = 738.6477077615586,
    y_first = {-0.8301451637383708, 0.09583117510255595, 0.15247426021078084, -1.3920203411155407, -1.6829355300378395},
    y_last = 0.3346803901337042,
    gx_wsum = 4.641883290619423, gw_wsum = -32.74801126062514,
  },
  float32_stride2 = {
    size = {2, 4, 3, 5, 4},
    y_wsum = -6.458285522278992, y_sqsum = 162.76782448452826,
    y_first = {0.0746002346277237, -0.06975946575403214, -0.5543544292449951, -0.5568737983703613, -0.41518059372901917},
    y_last = 0.470947265625,
    gx_wsum = 2.3603877989114337, gw_wsum = 2.8830003103878665,
    gb = {5.228668212890625, 7.791556358337402, -3.3439903259277344, -8.600423812866211},
  },
  unbatched = {
    size = {2, 5, 3, 5},
    y_wsum = -8.18810413774678, y_sqsum = 161.7745447766539,
    y_first = {0.31919524600718696, 0.516664822864601, 0.24708605787071775, -0.05593464592286901, -0.2684847323650749},
    y_last = -0.6720290053759295,
    gx_wsum = -146.9819510651486, gw_wsum = -11.66248354513342,
    gb = {6.629663482257152, -6.007177648290367},
  },
  transpose_outpad = {
    size = {2, 3, 6, 9, 5},
    y_wsum = 11.188347594528846, y_sqsum = 2109.263601988473,
    y_first = {-0.951927995731627, -1.0712785866839334, -0.330684495917058, 0.09100355543361871, 0.45037096636236246},
    y_last = 0.25244129544236893,
    gx_wsum = -2.323168775697189, gw_wsum = -95.30479618975072,
    gb = {2.8289483619984925, -3.680044855455783, 4.320507467892676},
  },
  transpose_groups2 = {
    size = {1, 4, 4, 7, 7},
    y_wsum = -15.37037640413051, y_sqsum = 123.51132323891855,
    y_first = {-0.17189801410162645, -0.08761826048143996, -0.31734688184893906, -0.043898532200720576, -0.41984433787951986},
    y_last = 0.29924849598121633,
    gx_wsum = -12.184487675939712, gw_wsum = 6.322606266620117,
    gb = {0.0006691561062631135, 0.2891796519750237, 0.5533192837380196, 0.7708274565479809},
  },
  transpose_float32 = {
    size = {2, 3, 6, 9, 5},
    y_wsum = 11.188347303852046, y_sqsum = 2109.2635830207005,
    y_first = {-0.9519279599189758, -1.0712785720825195, -0.33068445324897766, 0.09100357443094254, 0.4503709673881531},
    y_last = 0.25244128704071045,
    gx_wsum = -2.3231685981402905, gw_wsum = -95.30479800273204,
    gb = {2.828944683074951, -3.680044174194336, 4.320507049560547},
  },
}


-- the cases: {kind, dtype, x size, w size, bias, options}
local CASES = {
  stride2_odd = {'conv', 'float64', {2, 3, 5, 6, 7}, {4, 3, 3, 2, 3}, true, {stride = {2, 1, 2}, padding = {1, 0, 1}}},
  dilation_groups2 = {'conv', 'float64', {1, 4, 7, 5, 6}, {6, 2, 2, 3, 2}, true,
                      {padding = {1, 1, 0}, dilation = {2, 1, 2}, groups = 2}},
  same_even = {'conv', 'float64', {2, 2, 4, 5, 3}, {3, 2, 2, 3, 4}, false, {padding = 'same', dilation = {1, 2, 1}}},
  float32_stride2 = {'conv', 'float32', {2, 3, 5, 6, 7}, {4, 3, 3, 2, 3}, true, {stride = {2, 1, 2}, padding = {1, 0, 1}}},
  unbatched = {'conv', 'float64', {3, 4, 5, 4}, {2, 3, 2, 2, 2}, true, {stride = {1, 2, 1}, padding = 1}},
  transpose_outpad = {'convT', 'float64', {2, 4, 3, 4, 3}, {4, 3, 3, 2, 3}, true,
                      {stride = {2, 2, 1}, padding = {1, 0, 1}, output_padding = {1, 1, 0}, dilation = {1, 1, 2}}},
  transpose_groups2 = {'convT', 'float64', {1, 4, 2, 3, 3}, {4, 2, 2, 2, 2}, true,
                       {stride = 2, output_padding = {0, 1, 1}, groups = 2}},
  transpose_float32 = {'convT', 'float32', {2, 4, 3, 4, 3}, {4, 3, 3, 2, 3}, true,
                       {stride = {2, 2, 1}, padding = {1, 0, 1}, output_padding = {1, 1, 0}, dilation = {1, 1, 2}}},
}
local ORDER = {'stride2_odd', 'dilation_groups2', 'same_even', 'float32_stride2', 'unbatched', 'transpose_outpad',
               'transpose_groups2', 'transpose_float32'}

-- the case's operands (requiring grad), its function and its options
local function operands(c)
  local kind, dtype, xs, ws, has_bias, opts = table.unpack(c)
  local x = ramp(xs, 0.37, 1, dtype):requires_grad_()
  local w = ramp(ws, 0.71, 0.5, dtype):requires_grad_()
  local o = kind == 'conv' and ws[1] or ws[2] * (opts.groups or 1)
  local b = has_bias and ramp({o}, 0.5, 0.3, dtype):requires_grad_() or nil
  return x, w, b, kind == 'conv' and F.conv3d or F.conv_transpose3d, opts
end

describe('conv3d in C', function()
  for _, name in ipairs(ORDER) do
    it('matches PyTorch: ' .. name .. ' (values, input, weight and bias gradients)', function()
      local ref, c = REF[name], CASES[name]
      local x, w, b, fn, opts = operands(c)
      local tol = c[2] == 'float32' and 2e-5 or 1e-11
      local y = fn(x, w, b, opts)
      assert.are.equal(c[2], y.dtype)
      assert.are.same(ref.size, y:size():totable())
      local r = ramp(ref.size, 0.29, 1, c[2])
      local yd = y:detach():double()
      near((yd * r:double()):sum():item(), ref.y_wsum, tol, 'sum(y * r)')
      near((yd * yd):sum():item(), ref.y_sqsum, tol, 'sum(y^2)')
      local flat = yd:reshape(-1)
      for i, v in ipairs(ref.y_first) do near(flat[i], v, tol, 'y[' .. i .. ']') end
      near(flat[flat:numel()], ref.y_last, tol, 'last y')
      ;(y * r):sum():backward()
      near((x.grad:double() * ramp(c[3], 0.23, 1)):sum():item(), ref.gx_wsum, tol, 'input gradient')
      near((w.grad:double() * ramp(c[4], 0.17, 1)):sum():item(), ref.gw_wsum, tol, 'weight gradient')
      if ref.gb then
        assert.are.same({#ref.gb}, b.grad:size():totable())
        for i, v in ipairs(ref.gb) do near(b.grad[i], v, tol, 'bias gradient ' .. i) end
      end
    end)
  end

  it('runs the C kernels on CPU tensors (their autograd nodes), each the others\' derivative', function()
    local x, w, b = ramp({1, 2, 3, 4, 4}, 0.3, 1):requires_grad_(), ramp({3, 2, 2, 2, 2}, 0.2, 1):requires_grad_(),
                    ramp({3}, 0.1, 1):requires_grad_()
    assert.are.equal('Convolution3DBackward', F.conv3d(x, w, b).grad_fn:name())
    assert.are.equal('ConvTranspose3DBackward', F.conv_transpose3d(x, ramp({2, 3, 2, 2, 2}, 0.2, 1)).grad_fn:name())
    -- the weight gradient under create_graph is conv3d_weight's node
    local y = F.conv3d(x, w, b)
    local gw = torch.autograd.grad((y * y):sum(), w, {create_graph = true})[1]
    assert.are.equal('Conv3DWeightBackward', gw.grad_fn:name())
  end)

  -- d/dw of sum(dL/dx * ramp(x size, 0.23, 1)), L = sum(y * ramp(y size, 0.29, 1)), by PyTorch
  for _, c in ipairs({{'conv3d', F.conv3d, {2, 3, 5, 6, 7}, {4, 3, 3, 2, 3}, {stride = {2, 1, 2}, padding = {1, 0, 1}},
                       -3.4636835668757406},
                      {'conv_transpose3d', F.conv_transpose3d, {2, 4, 3, 4, 3}, {4, 3, 3, 2, 3},
                       {stride = {2, 2, 1}, padding = {1, 0, 1}, output_padding = {1, 1, 0}, dilation = {1, 1, 2}},
                       -4.673264880069478}}) do
    it('matches PyTorch\'s second derivative (double backward) of ' .. c[1], function()
      local x, w = ramp(c[3], 0.37, 1):requires_grad_(), ramp(c[4], 0.71, 0.5):requires_grad_()
      local y = c[2](x, w, nil, c[5])
      local gx = torch.autograd.grad((y * ramp(y:size():totable(), 0.29, 1)):sum(), x, {create_graph = true})[1]
      local dw = torch.autograd.grad((gx * ramp(c[3], 0.23, 1)):sum(), w)[1]
      near((dw * ramp(c[4], 0.17, 1)):sum():item(), c[6], 1e-11, 'second derivative')
    end)
  end

  it('passes gradcheck and gradgradcheck in float64 (input, weight, bias)', function()
    local x = ramp({2, 4, 4, 3, 5}, 0.41, 1):requires_grad_()
    local w = ramp({4, 2, 2, 2, 3}, 0.53, 0.5):requires_grad_()
    local b = ramp({4}, 0.7, 0.3):requires_grad_()
    local conv = function(a, c, d)
      return F.conv3d(a, c, d, {stride = {2, 1, 1}, padding = {1, 0, 1}, dilation = {1, 2, 1}, groups = 2})
    end
    assert.is_true(torch.autograd.gradcheck(conv, {x, w, b}))
    assert.is_true(torch.autograd.gradgradcheck(conv, {x, w, b}))
    local u = ramp({1, 4, 2, 3, 2}, 0.29, 1):requires_grad_()
    local wt = ramp({4, 1, 2, 2, 2}, 0.31, 0.5):requires_grad_()
    local bt = ramp({2}, 0.7, 0.3):requires_grad_()
    local convt = function(a, c, d)
      return F.conv_transpose3d(a, c, d, {stride = {2, 1, 2}, padding = {0, 1, 0}, output_padding = {1, 0, 1}, groups = 2})
    end
    assert.is_true(torch.autograd.gradcheck(convt, {u, wt, bt}))
    assert.is_true(torch.autograd.gradgradcheck(convt, {u, wt, bt}))
  end)

  it('gives the same values for strided (non-contiguous) operands as for contiguous ones', function()
    for _, dtype in ipairs({'float32', 'float64'}) do
      local xt = ramp({2, 3, 4, 6, 5}, 0.37, 1, dtype):transpose(4, 5)     -- (2, 3, 4, 5, 6) in memory order w, h
      local wt = ramp({4, 3, 2, 3, 2}, 0.71, 0.5, dtype):transpose(1, 2):contiguous():transpose(1, 2)
      local bt = ramp({8}, 0.5, 0.3, dtype):narrow(1, 1, 4)
      local opts = {stride = {1, 2, 1}, padding = {1, 1, 0}}
      local want = F.conv3d(xt:contiguous(), wt:contiguous(), bt:contiguous(), opts)
      assert.is_true(torch.equal(want, F.conv3d(xt, wt, bt, opts)))
    end
  end)

  it('matches a direct sum over the kernel taps on a batch larger than one chunk of frames', function()
    -- 40 images of 8 frames of 96 x 96 over 8 x 3 channels: 53 MB of opened windows in float64,
    -- more than one chunk (32 MiB), so the frames go in several chunks (and a chunk may split an image)
    local x = ramp({40, 8, 10, 96, 96}, 0.013, 1)
    local w = ramp({2, 8, 3, 1, 1}, 0.9, 1)
    local y = F.conv3d(x, w, nil, {padding = {0, 0, 0}})
    assert.are.same({40, 2, 8, 96, 96}, y:size():totable())
    -- a 3 x 1 x 1 kernel: y[n][o][t] = sum over c and a of w[o][c][a] * x[n][c][t + a]
    local want = torch.zeros(40, 2, 8, 96, 96, {dtype = 'float64'})
    for o = 1, 2 do
      for a = 1, 3 do
        local xa = x:narrow(3, a, 8)
        want:select(2, o):add_((xa * w:select(1, o):select(2, a):reshape(1, 8, 1, 1, 1)):sum(2))
      end
    end
    assert.is_true((y - want):abs():max():item() < 1e-12)
    -- and the transposed convolution (the input adjoint) folds the chunks back: <conv(x), g> = <x, convT(g)>
    local g = ramp({40, 2, 8, 96, 96}, 0.021, 1)
    local back = F.conv_transpose3d(g, w)
    near((y * g):sum():item(), (x * back):sum():item(), 1e-10, 'adjoint identity')
  end)

  it('takes empty batches and channel counts (the binding; F.conv3d refuses an empty batch)', function()
    local w = ramp({4, 2, 2, 2, 2}, 0.2, 1):requires_grad_()
    local b = ramp({4}, 0.1, 1):requires_grad_()
    local y = torch._conv3d(torch.zeros(0, 2, 3, 3, 3, {dtype = 'float64'}), w, b, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
    assert.are.same({0, 4, 2, 2, 2}, y:size():totable())
    y:sum():backward()
    assert.is_true(torch.equal(w.grad, torch.zeros(4, 2, 2, 2, 2, {dtype = 'float64'})))
    assert.is_true(torch.equal(b.grad, torch.zeros(4, {dtype = 'float64'})))
    local z = torch._conv_transpose3d(ramp({1, 2, 3, 3, 3}, 0.3, 1), ramp({2, 0, 2, 2, 2}, 0.1, 1), nil,
                                      1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
    assert.are.same({1, 0, 4, 4, 4}, z:size():totable())
  end)

  describe('refuses bad input', function()
    local x, w = ramp({1, 2, 3, 4, 4}, 0.3, 1), ramp({3, 2, 2, 2, 2}, 0.2, 1)
    it('in F.conv3d, naming the function, at the caller\'s line', function()
      raises('F.conv3d: expected a 4-D (C, T, H, W) or 5-D (N, C, T, H, W) input', F.conv3d, ramp({2, 3, 4}, 0.1, 1), w)
      raises('F.conv3d: expected a 5-D weight', F.conv3d, x, ramp({3, 2, 2, 2}, 0.1, 1))
      raises('has 2 channels, weight of size', F.conv3d, x, ramp({3, 4, 2, 2, 2}, 0.1, 1))
      raises('F.conv3d: bias must be a 1-D tensor of 3 elements', F.conv3d, x, w, ramp({2}, 0.1, 1))
      raises('is smaller than the dilated kernel', F.conv3d, x, w, nil, {dilation = {3, 1, 1}})
      raises("padding='same' needs stride 1", F.conv3d, x, w, nil, {padding = 'same', stride = 2})
      raises('F.conv3d: stride must hold positive integers', F.conv3d, x, w, nil, {stride = {1, 0, 1}})
      raises('F.conv3d: input is float32 on cpu but a parameter', F.conv3d, x:float(), w)
      raises('F.conv3d: expected a floating point input', F.conv3d, x:long(), w:long())
      local ok, err = pcall(function()
        local y = F.conv3d(x, w, nil, {groups = 2})   -- not a tail call: this line is the caller's
        return y
      end)
      assert.is_false(ok)
      assert.truthy(tostring(err):find('conv3d_c_spec.lua:%d+: F.conv3d: ', 1))
    end)
    it('in F.conv_transpose3d', function()
      raises('F.conv_transpose3d: output_padding {2, 0, 0} must be smaller than stride {2, 1, 1} or dilation {1, 1, 1}',
             F.conv_transpose3d, x, ramp({2, 3, 2, 2, 2}, 0.1, 1), nil, {stride = {2, 1, 1}, output_padding = {2, 0, 0}})
      raises('F.conv_transpose3d: input of size', F.conv_transpose3d, x, ramp({3, 2, 2, 2, 2}, 0.1, 1))
      raises('gives an empty output', F.conv_transpose3d, x, ramp({2, 2, 1, 1, 1}, 0.1, 1), nil, {padding = {0, 2, 0}})
    end)
    it('in the C bindings, naming the op', function()
      raises('conv3d: expected a 5-D input (n, c, t, h, w) and weight', torch._conv3d, x:squeeze(1), w, nil,
             1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
      raises('conv3d: stride must be positive, got 0', torch._conv3d, x, w, nil, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
      raises('conv3d: negative padding -1', torch._conv3d, x, w, nil, 1, 1, 1, 0, 0, -1, 0, 0, 0, 1, 1, 1, 1)
      raises('conv3d: given groups=2, weight of size', torch._conv3d, x, ramp({4, 2, 2, 2, 2}, 0.1, 1), nil,
             1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2)
      raises('conv3d: kernel size 2x2x2 (dilation 3x1x1) does not fit', torch._conv3d, x, w, nil,
             1, 1, 1, 0, 0, 0, 0, 0, 0, 3, 1, 1, 1)
      raises('conv3d: too large', torch._conv3d, x, w, nil, 1, 1, 1, 0, math.maxinteger, 0, 0, 0, 0, 1, 1, 1, 1)
      raises('conv3d: expected a bias of size 3', torch._conv3d, x, w, ramp({4}, 0.1, 1),
             1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
      raises('conv3d: expected float32 or float64 tensors, got int64', torch._conv3d, x:long(), w:long(), nil,
             1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
      raises('conv3d: expected tensors of one dtype', torch._conv3d, x, w:float(), nil,
             1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
      raises('conv_transpose3d: given transposed=1, weight of size', torch._conv_transpose3d, x,
             ramp({3, 2, 2, 2, 2}, 0.1, 1), nil, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1)
      raises('conv_transpose3d: output padding (1) must be smaller than either stride (1) or dilation (1)',
             torch._conv_transpose3d, x, ramp({2, 3, 2, 2, 2}, 0.1, 1), nil, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, 1, 1, 1)
    end)
  end)
end)
