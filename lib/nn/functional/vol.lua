-- nn.functional's volumetric (3-D) functions: F.conv3d, F.conv_transpose3d, F.max_pool3d,
-- F.avg_pool3d, F.max_unpool3d, F.dropout3d, F.fractional_max_pool3d, and F.pad's
-- 'replicate' mode over the last three dims. conv3d, conv_transpose3d, max_pool3d and
-- avg_pool3d have C kernels of their own on every device: the convolutions torch._conv3d and
-- torch._conv_transpose3d (on the CPU src/tensor/mt_conv3d.c: each output frame's time
-- window opened into channels and run through the tuned 2-D kernels; on a GPU cuDNN's 3-D
-- convolutions; the two and conv3d's weight adjoint are each the others' derivatives, so
-- double backward works), max_pool3d's the positions of the maxima (the values a gather
-- there, as max_pool2d's), avg_pool3d's with its adjoint as its derivative. The others are
-- built on existing differentiable ops.
local torch = require 'torch'
local F = require 'nn.functional'

local this_source = debug.getinfo(1, 'S').source

-- an error naming the function, raised at the first caller outside this file
local function fail(fname, fmt, ...)
  local level = 2
  while debug.getinfo(level, 'S') and debug.getinfo(level, 'S').source == this_source do level = level + 1 end
  error(string.format(fname .. ': ' .. fmt, ...), level)
end

local LIMIT = (1 << 31) - 1     -- sizes past this are refused before any arithmetic on them

-- three integers (t, h, w) from a number or a table of three
local function triple(v, fname, what, positive)
  local a, b, c
  if math.type(v) == 'integer' then a, b, c = v, v, v
  elseif type(v) == 'table' and #v == 3 then a, b, c = v[1], v[2], v[3]
  else
    fail(fname, '%s must be an integer or a table of three, got %s', what,
         type(v) == 'table' and '{' .. table.concat(v, ', ', 1, math.min(#v, 8)) .. '}' or tostring(v))
  end
  for _, n in ipairs({a, b, c}) do
    if math.type(n) ~= 'integer' or (positive and n < 1) or n < 0 or n > LIMIT then
      fail(fname, '%s must hold %s integers below 2^31, got %s', what, positive and 'positive' or 'non-negative',
           type(v) == 'table' and '{' .. table.concat(v, ', ', 1, math.min(#v, 3)) .. '}' or tostring(v))
    end
  end
  return a, b, c
end

-- x as (N, C, T, H, W), and whether it came unbatched (C, T, H, W)
local function batched5(x, fname)
  if not torch.is_tensor(x) then fail(fname, 'expected a tensor input, got %s', torch.type(x)) end
  if x:dim() == 4 then return x:unsqueeze(1), true end
  if x:dim() ~= 5 then fail(fname, 'expected a 4-D (C, T, H, W) or 5-D (N, C, T, H, W) input, got size %s', tostring(x:size())) end
  return x, false
end

-- x (already a tensor) is floating, and each of the others (nil: none) has its dtype and device
local function check_operands(fname, x, ...)
  if not x:is_floating_point() then fail(fname, 'expected a floating point input, got %s', x.dtype) end
  for i = 1, select('#', ...) do
    local t = select(i, ...)
    if t ~= nil and (t.dtype ~= x.dtype or t.device ~= x.device) then
      fail(fname, 'input is %s on %s but a parameter of size %s is %s on %s', x.dtype, x.device, tostring(t:size()),
           t.dtype, t.device)
    end
  end
end

-- PyTorch's pooling output length: ceil_mode rounds up, but the last window must start
-- inside the input or the left padding; below 1 when nothing fits
local function pool_out(n, k, s, p, d, ceil_mode)
  local span = d * (k - 1) + 1
  local num = n + 2 * p - span
  if num < 0 then return 0 end
  local out = (ceil_mode and -(-num // s) or num // s) + 1
  if ceil_mode and (out - 1) * s >= n + p then out = out - 1 end
  return out
end

-- ---- convolution ----

-- F.conv3d's padding as (before, after) per dim: a number, a triple, 'valid' or 'same'
-- (d * (k - 1) in all, the extra one after, stride 1)
local function conv3d_padding(padding, k, d, s, fname)
  if padding == nil or padding == 'valid' then return {0, 0, 0, 0, 0, 0} end
  if padding == 'same' then
    local out = {}
    for i = 1, 3 do
      if s[i] ~= 1 then fail(fname, "padding='same' needs stride 1") end
      local total = d[i] * (k[i] - 1)
      out[2 * i - 1], out[2 * i] = total // 2, total - total // 2
    end
    return out
  end
  local pt, ph, pw = triple(padding, fname, 'padding')
  return {pt, pt, ph, ph, pw, pw}
end

-- F.conv3d(x, weight, bias, {stride=1, padding=0 | 'same' | 'valid', dilation=1, groups=1}):
-- x (N, C, T, H, W) or (C, T, H, W), weight (O, C / groups, kT, kH, kW), bias (O) or nil;
-- stride, padding and dilation a number or {t, h, w}. Output (N, O, oT, oH, oW), oT =
-- (T + 2 padT - dilT (kT - 1) - 1) // strideT + 1 and likewise for H and W.
function F.conv3d(x, weight, bias, opts)
  local fname = 'F.conv3d'
  opts = opts or {}
  local input, unbatched = batched5(x, fname)
  if not torch.is_tensor(weight) or weight:dim() ~= 5 then
    fail(fname, 'expected a 5-D weight (O, C / groups, kT, kH, kW), got %s',
         torch.is_tensor(weight) and 'size ' .. tostring(weight:size()) or torch.type(weight))
  end
  local groups = opts.groups or 1
  if math.type(groups) ~= 'integer' or groups < 1 then fail(fname, 'groups must be a positive integer, got %s', tostring(groups)) end
  local N, C, T, H, W = table.unpack(input:size():totable())
  local O, Cg, kT, kH, kW = table.unpack(weight:size():totable())
  if Cg * groups ~= C or O % groups ~= 0 then
    fail(fname, 'input of size %s has %d channels, weight of size %s expects %d (groups %d, and O divisible by it)',
         tostring(input:size()), C, tostring(weight:size()), Cg * groups, groups)
  end
  if bias ~= nil and (not torch.is_tensor(bias) or bias:dim() ~= 1 or bias:size(1) ~= O) then
    fail(fname, 'bias must be a 1-D tensor of %d elements, got %s', O,
         torch.is_tensor(bias) and 'size ' .. tostring(bias:size()) or torch.type(bias))
  end
  check_operands(fname, input, weight, bias)
  local sT, sH, sW = triple(opts.stride or 1, fname, 'stride', true)
  local dT, dH, dW = triple(opts.dilation or 1, fname, 'dilation', true)
  local p = conv3d_padding(opts.padding, {kT, kH, kW}, {dT, dH, dW}, {sT, sH, sW}, fname)
  local oT = (T + p[1] + p[2] - dT * (kT - 1) - 1) // sT + 1
  local oH = (H + p[3] + p[4] - dH * (kH - 1) - 1) // sH + 1
  local oW = (W + p[5] + p[6] - dW * (kW - 1) - 1) // sW + 1
  if oT < 1 or oH < 1 or oW < 1 or N == 0 then
    fail(fname, 'input of size %s (padded %d+%d, %d+%d, %d+%d) is smaller than the dilated kernel %dx%dx%d',
         tostring(input:size()), p[1], p[2], p[3], p[4], p[5], p[6], dT * (kT - 1) + 1, dH * (kH - 1) + 1,
         dW * (kW - 1) + 1)
  end
  -- the C kernel (its derivatives conv_transpose3d and conv3d_weight)
  local y = torch._conv3d(input, weight, bias, sT, sH, sW, p[1], p[2], p[3], p[4], p[5], p[6], dT, dH, dW, groups)
  if unbatched then y = y:squeeze(1) end
  return y
end

-- F.conv_transpose3d(x, weight, bias, {stride=1, padding=0, output_padding=0, groups=1,
-- dilation=1}): the adjoint of conv3d in its input (its input gradient), as PyTorch's:
-- x (N, Cin, T, H, W) or unbatched, weight (Cin, Cout / groups, kT, kH, kW), bias (Cout).
-- Output size (T - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1 per dim;
-- output_padding must be smaller than stride or dilation.
function F.conv_transpose3d(x, weight, bias, opts)
  local fname = 'F.conv_transpose3d'
  opts = opts or {}
  local input, unbatched = batched5(x, fname)
  if not torch.is_tensor(weight) or weight:dim() ~= 5 then
    fail(fname, 'expected a 5-D weight (Cin, Cout / groups, kT, kH, kW), got %s',
         torch.is_tensor(weight) and 'size ' .. tostring(weight:size()) or torch.type(weight))
  end
  local groups = opts.groups or 1
  if math.type(groups) ~= 'integer' or groups < 1 then fail(fname, 'groups must be a positive integer, got %s', tostring(groups)) end
  local N, C, T, H, W = table.unpack(input:size():totable())
  local Ci, Og, kT, kH, kW = table.unpack(weight:size():totable())
  if Ci ~= C or C % groups ~= 0 then
    fail(fname, 'input of size %s has %d channels, weight of size %s expects %d (divisible by groups %d)',
         tostring(input:size()), C, tostring(weight:size()), Ci, groups)
  end
  local O = Og * groups
  if bias ~= nil and (not torch.is_tensor(bias) or bias:dim() ~= 1 or bias:size(1) ~= O) then
    fail(fname, 'bias must be a 1-D tensor of %d elements, got %s', O,
         torch.is_tensor(bias) and 'size ' .. tostring(bias:size()) or torch.type(bias))
  end
  check_operands(fname, input, weight, bias)
  local sT, sH, sW = triple(opts.stride or 1, fname, 'stride', true)
  local dT, dH, dW = triple(opts.dilation or 1, fname, 'dilation', true)
  local pT, pH, pW = triple(opts.padding or 0, fname, 'padding')
  local aT, aH, aW = triple(opts.output_padding or 0, fname, 'output_padding')
  if (aT >= sT and aT >= dT) or (aH >= sH and aH >= dH) or (aW >= sW and aW >= dW) then
    fail(fname, 'output_padding {%d, %d, %d} must be smaller than stride {%d, %d, %d} or dilation {%d, %d, %d}',
         aT, aH, aW, sT, sH, sW, dT, dH, dW)
  end
  local oT = (T - 1) * sT - 2 * pT + dT * (kT - 1) + aT + 1
  local oH = (H - 1) * sH - 2 * pH + dH * (kH - 1) + aH + 1
  local oW = (W - 1) * sW - 2 * pW + dW * (kW - 1) + aW + 1
  if oT < 1 or oH < 1 or oW < 1 or N == 0 then
    fail(fname, 'input of size %s gives an empty output (%dx%dx%d): padding {%d, %d, %d} too large',
         tostring(input:size()), oT, oH, oW, pT, pH, pW)
  end
  -- the C kernel: conv3d's input adjoint (its derivatives conv3d and conv3d_weight)
  local y = torch._conv_transpose3d(input, weight, bias, sT, sH, sW, pT, pH, pW, aT, aH, aW, dT, dH, dW, groups)
  if unbatched then y = y:squeeze(1) end
  return y
end

-- ---- pooling ----

-- F.max_pool3d(x, kernel, {stride=kernel, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false}): the maximum of each window of x (N, C, T, H, W) or (C, T, H, W);
-- kernel, stride, padding and dilation a number or {t, h, w}. With return_indices also the
-- 1-based positions of the maxima in each T * H * W volume (the first maximum in (t, h, w)
-- order), which F.max_unpool3d takes. Padding must be at most half the kernel.
function F.max_pool3d(x, kernel, opts)
  local fname = 'F.max_pool3d'
  opts = opts or {}
  local input, unbatched = batched5(x, fname)
  check_operands(fname, input)
  local kT, kH, kW = triple(kernel, fname, 'kernel', true)
  local sT, sH, sW = triple(opts.stride or kernel, fname, 'stride', true)
  local pT, pH, pW = triple(opts.padding or 0, fname, 'padding')
  local dT, dH, dW = triple(opts.dilation or 1, fname, 'dilation', true)
  if 2 * pT > kT or 2 * pH > kH or 2 * pW > kW then
    fail(fname, 'padding {%d, %d, %d} must be at most half the kernel {%d, %d, %d}', pT, pH, pW, kT, kH, kW)
  end
  local ceil_mode = opts.ceil_mode == true
  local N, C, T, H, W = table.unpack(input:size():totable())
  local oT = pool_out(T, kT, sT, pT, dT, ceil_mode)
  if oT < 1 or pool_out(H, kH, sH, pH, dH, ceil_mode) < 1 or pool_out(W, kW, sW, pW, dW, ceil_mode) < 1 then
    fail(fname, 'input of size %s is too small for the kernel %dx%dx%d (dilation %d, %d, %d, padding %d, %d, %d)',
         tostring(input:size()), kT, kH, kW, dT, dH, dW, pT, pH, pW)
  end
  -- the C kernel's positions of the maxima in each T * H * W volume; the values a gather there
  local idx = torch._max_pool3d_indices(input, kT, kH, kW, sT, sH, sW, pT, pH, pW, dT, dH, dW, ceil_mode)
  local oH, oW = idx:size(4), idx:size(5)
  local v = input:reshape(N, C, T * H * W):gather(3, idx:view(N, C, oT * oH * oW)):view(N, C, oT, oH, oW)
  if unbatched then v, idx = v:squeeze(1), idx:squeeze(1) end
  if not opts.return_indices then return v end
  return v, idx
end

-- F.avg_pool3d(x, kernel, {stride=kernel, padding=0, ceil_mode=false, count_include_pad=true,
-- divisor_override=nil}): window means of x (N, C, T, H, W) or (C, T, H, W), as PyTorch's
-- (a window's divisor counts its padding with count_include_pad, never what ceil_mode adds
-- past it); with divisor_override, each window's sum divided by it instead.
function F.avg_pool3d(x, kernel, opts)
  local fname = 'F.avg_pool3d'
  opts = opts or {}
  local input, unbatched = batched5(x, fname)
  check_operands(fname, input)
  local kT, kH, kW = triple(kernel, fname, 'kernel', true)
  local sT, sH, sW = triple(opts.stride or kernel, fname, 'stride', true)
  local pT, pH, pW = triple(opts.padding or 0, fname, 'padding')
  if 2 * pT > kT or 2 * pH > kH or 2 * pW > kW then
    fail(fname, 'padding {%d, %d, %d} must be at most half the kernel {%d, %d, %d}', pT, pH, pW, kT, kH, kW)
  end
  local d = opts.divisor_override
  if d ~= nil and (type(d) ~= 'number' or d == 0) then
    fail(fname, 'divisor_override must be a non-zero number, got %s', tostring(d))
  end
  local ceil_mode, count_pad = opts.ceil_mode == true, opts.count_include_pad ~= false
  local N, C, T, H, W = table.unpack(input:size():totable())
  if pool_out(T, kT, sT, pT, 1, ceil_mode) < 1 or pool_out(H, kH, sH, pH, 1, ceil_mode) < 1
     or pool_out(W, kW, sW, pW, 1, ceil_mode) < 1 then
    fail(fname, 'input of size %s is too small for the kernel %dx%dx%d (padding %d, %d, %d)', tostring(input:size()),
         kT, kH, kW, pT, pH, pW)
  end
  local y = torch._avg_pool3d(input, kT, kH, kW, sT, sH, sW, pT, pH, pW, ceil_mode, count_pad, d ~= nil)
  if d then y = y / d end
  if unbatched then y = y:squeeze(1) end
  return y
end

-- F.max_unpool3d(x, indices, kernel, {stride=kernel, padding=0, output_size=}): max_pool3d's
-- values x put back at their 1-based positions indices (as max_pool3d returned them) in a
-- volume of zeros, (N, C, T, H, W) or unbatched; output_size ({T, H, W}, or with the leading
-- dims) defaults to (in - 1) stride - 2 padding + kernel per dim.
function F.max_unpool3d(x, indices, kernel, opts)
  local fname = 'F.max_unpool3d'
  opts = opts or {}
  local input, unbatched = batched5(x, fname)
  if not torch.is_tensor(indices) or indices.dtype ~= 'int64' or indices:size() ~= x:size() then
    fail(fname, 'indices must be an int64 tensor of the input size %s, got %s', tostring(x:size()),
         torch.is_tensor(indices) and indices.dtype .. ' of size ' .. tostring(indices:size()) or torch.type(indices))
  end
  local kT, kH, kW = triple(kernel, fname, 'kernel', true)
  local sT, sH, sW = triple(opts.stride or kernel, fname, 'stride', true)
  local pT, pH, pW = triple(opts.padding or 0, fname, 'padding')
  local N, C, T, H, W = table.unpack(input:size():totable())
  local oT, oH, oW = (T - 1) * sT - 2 * pT + kT, (H - 1) * sH - 2 * pH + kH, (W - 1) * sW - 2 * pW + kW
  if opts.output_size ~= nil then
    local s = opts.output_size
    if type(s) ~= 'table' and type(s) == 'userdata' and s.totable then s = s:totable() end
    if type(s) ~= 'table' or #s < 3 then fail(fname, 'output_size must list the last three sizes {T, H, W}') end
    oT, oH, oW = s[#s - 2], s[#s - 1], s[#s]
    for _, n in ipairs({oT, oH, oW}) do
      if math.type(n) ~= 'integer' or n > LIMIT then fail(fname, 'output_size must hold integers, got %s', tostring(n)) end
    end
  end
  if oT < 1 or oH < 1 or oW < 1 then fail(fname, 'empty output size %dx%dx%d', oT, oH, oW) end
  if 1.0 * oT * oH * oW > 2 ^ 53 then fail(fname, 'output size %dx%dx%d is too large', oT, oH, oW) end
  local idx = indices:reshape(N, C, T * H * W)
  if idx:numel() > 0 then
    local lo, hi = idx:min():item(), idx:max():item()
    if lo < 1 or hi > oT * oH * oW then
      fail(fname, 'index %d out of range 1..%d of the output volume %dx%dx%d', lo < 1 and lo or hi, oT * oH * oW,
           oT, oH, oW)
    end
  end
  local out = torch.zeros({N, C, oT * oH * oW}, {dtype = x.dtype, device = x.device})
  out = out:scatter(3, idx, input:reshape(N, C, T * H * W)):view(N, C, oT, oH, oW)
  if unbatched then out = out:squeeze(1) end
  return out
end

-- the window starts (N, C, out), 0-based, of Graham's fractional pooling along one dim of
-- length n: u (N, C) uniform samples; start i is floor((i + u) a) - floor(u a) with
-- a = (n - pool) / (out - 1), the last one n - pool (as PyTorch, in u's dtype)
local function fractional_starts(u, n, out, pool)
  local N, C = u:size(1), u:size(2)
  local last = torch.full({N, C, 1}, n - pool, {dtype = 'int64', device = u.device})
  if out == 1 then return last end
  local a = (n - pool) / (out - 1)
  local i = torch.arange(0, out - 1, {dtype = u.dtype, device = u.device}):view(1, 1, out - 1)
  local uu = u:view(N, C, 1)
  local first = ((i + uu) * a):trunc() - (uu * a):trunc()
  return (torch.cat({first:long(), last}, 3))
end

-- the maxima of x along dim d over the windows [start, start + pool) (starts (N, C, out)),
-- and the 1-based positions of the maxima in their windows
local function window_max(x, d, starts, pool)
  local N, C, out = starts:size(1), starts:size(2), starts:size(3)
  local taps = torch.arange(0, pool, {device = x.device}):view(1, 1, 1, pool)
  local pos = (starts:view(N, C, out, 1) + taps):view(N, C, out * pool)
  local shape, ishape = x:size():totable(), {N, C, 1, 1, 1}
  ishape[d] = out * pool
  shape[d] = out * pool
  local idx = pos:view(ishape):expand(shape)
  local g = x:gather(d, idx + 1)
  local wshape = x:size():totable()
  wshape[d] = out
  table.insert(wshape, d + 1, pool)
  local values, indices = g:view(wshape):max(d + 1)   -- not a tail call: see spec/library_tail_calls_spec.lua
  return values, indices
end

-- F.fractional_max_pool3d(x, kernel, {output_size=, output_ratio=, return_indices=false,
-- _random_samples=}): Graham's fractional max pooling of x (N, C, T, H, W) or (C, T, H, W):
-- per dim, output_size windows of kernel's length (a number or {t, h, w}) at pseudo-random
-- starts (from _random_samples (N, C, 3), uniform in [0, 1), one for T, H and W of each plane;
-- drawn when not given), as PyTorch's. output_ratio (in (0, 1), a number or three) gives
-- output_size floor(in * ratio). With return_indices also the 1-based positions of the maxima
-- in each T * H * W volume.
function F.fractional_max_pool3d(x, kernel, opts)
  local fname = 'F.fractional_max_pool3d'
  opts = opts or {}
  local input, unbatched = batched5(x, fname)
  check_operands(fname, input)
  local k = {triple(kernel, fname, 'kernel', true)}
  local N, C = input:size(1), input:size(2)
  local ins = {input:size(3), input:size(4), input:size(5)}
  local out
  if opts.output_size ~= nil then
    out = {triple(opts.output_size, fname, 'output_size', true)}
  elseif opts.output_ratio ~= nil then
    local r = opts.output_ratio
    if type(r) == 'number' then r = {r, r, r} end
    if type(r) ~= 'table' or #r ~= 3 then fail(fname, 'output_ratio must be a number or a table of three') end
    out = {}
    for i = 1, 3 do
      if type(r[i]) ~= 'number' or r[i] <= 0 or r[i] >= 1 then
        fail(fname, 'output_ratio must be in (0, 1), got %s', tostring(r[i]))
      end
      out[i] = math.floor(ins[i] * r[i])
      if out[i] < 1 then fail(fname, 'output_ratio %g of size %d leaves nothing', r[i], ins[i]) end
    end
  else
    fail(fname, 'give output_size or output_ratio')
  end
  for i = 1, 3 do
    if out[i] + k[i] - 1 > ins[i] then
      fail(fname, 'kernel %d and output size %d do not fit the input size %d (need output + kernel - 1 <= input), '
           .. 'input size %s', k[i], out[i], ins[i], tostring(input:size()))
    end
  end
  local samples = opts._random_samples
  if samples == nil then
    samples = torch.rand({N, C, 3}, {dtype = input.dtype, device = input.device})
  elseif not torch.is_tensor(samples) or samples:dim() ~= 3 or samples:size(1) ~= N or samples:size(2) ~= C
         or samples:size(3) ~= 3 then
    fail(fname, '_random_samples must be a (%d, %d, 3) tensor, got %s', N, C,
         torch.is_tensor(samples) and 'size ' .. tostring(samples:size()) or torch.type(samples))
  end
  check_operands(fname, input, samples)
  samples = samples:detach()
  local starts = {}
  for i = 1, 3 do starts[i] = fractional_starts(samples:select(3, i), ins[i], out[i], k[i]) end
  -- separable: the W windows, then H, then T, each max remembering where it came from
  local vW, aW = window_max(input, 5, starts[3], k[3])
  local vH, aH = window_max(vW, 4, starts[2], k[2])
  local v, aT = window_max(vH, 3, starts[1], k[1])
  if unbatched then v = v:squeeze(1) end
  if not opts.return_indices then return v end
  local T, H, W = ins[1], ins[2], ins[3]
  local oT, oH, oW = out[1], out[2], out[3]
  local wpos = starts[3]:view(N, C, 1, 1, oW) + (aW - 1)                  -- (N, C, T, H, oW)
  local hpos = starts[2]:view(N, C, 1, oH, 1) + (aH - 1)                  -- (N, C, T, oH, oW)
  wpos = wpos:gather(4, hpos + 1)
  local tpos = starts[1]:view(N, C, oT, 1, 1) + (aT - 1)                  -- (N, C, oT, oH, oW)
  hpos, wpos = hpos:gather(3, tpos + 1), wpos:gather(3, tpos + 1)
  local idx = (tpos * H + hpos) * W + wpos + 1
  if unbatched then idx = idx:squeeze(1) end
  return v, idx
end

-- ---- dropout ----

-- F.dropout3d(x, p=0.5, training=true): zeroes whole channels of x (N, C, T, H, W) or
-- (C, T, H, W) with probability p, scaling the rest by 1/(1-p) while training; the identity
-- otherwise. p and training may come as {p=, training=}.
function F.dropout3d(x, p, training)
  local fname = 'F.dropout3d'
  if type(p) == 'table' then p, training = p.p, p.training end
  p = p or 0.5
  if training == nil then training = true end
  if type(p) ~= 'number' or p < 0 or p > 1 then fail(fname, 'dropout probability has to be between 0 and 1, got %s', tostring(p)) end
  if not torch.is_tensor(x) or not x:is_floating_point() or (x:dim() ~= 4 and x:dim() ~= 5) then
    fail(fname, 'expected a floating 4-D (C, T, H, W) or 5-D (N, C, T, H, W) input, got %s',
         torch.is_tensor(x) and x.dtype .. ' of size ' .. tostring(x:size()) or torch.type(x))
  end
  if not training or p == 0 then return x end
  if p == 1 then return x * 0 end
  local shape = x:size():totable()
  for i = #shape - 2, #shape do shape[i] = 1 end
  local mask = torch.empty(shape, {dtype = x.dtype, device = x.device}):bernoulli_(1 - p):div_(1 - p)
  return x * mask
end

-- ---- padding ----

-- x's last three dims padded by repeating their edges: pads {left, right, top, bottom, front,
-- back} (W, then H, then T, as F.pad's order); negative pads crop. Gathers with clamped
-- positions, so the gradient sums each edge's copies.
local function replicate_pad3d(x, p)
  local fname = 'F.pad'
  if x:dim() ~= 4 and x:dim() ~= 5 then
    fail(fname, "mode 'replicate' with 6 pads takes a 4-D or 5-D input, got size %s", tostring(x:size()))
  end
  local y = x
  for k = 1, 3 do
    local d = x:dim() - k + 1
    local n = x:size(d)
    local before, after = p[2 * k - 1], p[2 * k]
    local len = n + before + after
    if len < 1 or n < 1 then
      fail(fname, "mode 'replicate': pads (%d, %d) leave nothing of dim %d of size %s", before, after, d,
           tostring(x:size()))
    end
    if before ~= 0 or after ~= 0 then
      local pos = torch.arange(1 - before, n + after + 1, {device = x.device}):clamp(1, n)
      y = y:index_select(d, pos)
    end
  end
  return y
end

local base_pad = F.pad
-- F.pad(x, {left, right, top, bottom, ...}, {mode='constant', value=0}), or PyTorch's
-- F.pad(x, pads, mode, value): padding of the last dims, PyTorch's order (last dim first); a
-- negative pad crops. mode='reflect', 'replicate' or 'circular' (the input wrapping around,
-- each pad at most that dim once cropped) pads the last one or two dims ({left, right} of
-- (N, C, L) or (C, L); four pads of (N, C, H, W) or (C, H, W)); 'replicate' also the last
-- three, with six pads {left, right, top, bottom, front, back} of (N, C, T, H, W) or
-- (C, T, H, W).
function F.pad(x, pads, opts, value)
  local mode = type(opts) == 'table' and opts.mode or opts
  if mode == 'replicate' and type(pads) == 'table' and #pads == 6 and torch.is_tensor(x) then
    for i = 1, 6 do
      if math.type(pads[i]) ~= 'integer' or math.abs(pads[i]) > LIMIT then
        fail('F.pad', 'pad %d must be an integer below 2^31, got %s', i, tostring(pads[i]))
      end
    end
    return replicate_pad3d(x, pads)
  end
  return base_pad(x, pads, opts, value)
end

return F
