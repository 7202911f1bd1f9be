-- nn.functional's convolution, pooling and padding: F.conv2d, F.conv1d,
-- F.conv_transpose2d on the C kernels (torch._conv2d, torch._conv_transpose2d,
-- with their derivatives in C); F.max_pool2d, F.avg_pool2d, F.adaptive_avg_pool2d
-- and F.pad (constant) composed from differentiable tensor ops (unfold windows).
local torch = require 'torch'
local F = require 'nn.functional'

local function pair(v, name)
  if type(v) == 'number' then return v, v end
  if type(v) == 'table' and #v == 2 then return v[1], v[2] end
  error(string.format('%s: expected a number or a pair, got %s', name, tostring(v)), 3)
end

-- F.pad(x, {left, right, top, bottom, ...}, {value=0}): constant padding of the last
-- dims, PyTorch's order (last dim first).
function F.pad(x, pads, opts)
  local value = type(opts) == 'table' and opts.value or (type(opts) == 'number' and opts) or 0
  if type(opts) == 'table' and opts.mode and opts.mode ~= 'constant' then
    error("F.pad: only mode='constant' is available", 2)
  end
  if #pads % 2 ~= 0 or #pads // 2 > x:dim() then
    error(string.format('F.pad: %d pads for a %d-D input', #pads, x:dim()), 2)
  end
  local y = x
  for k = 1, #pads // 2 do
    local d = x:dim() - k + 1
    local before, after = pads[2 * k - 1], pads[2 * k]
    local parts = {}
    local function block(n)
      local shape = y:size():totable()
      shape[d] = n
      return torch.full(shape, value, {dtype = y.dtype})
    end
    if before > 0 then parts[#parts + 1] = block(before) end
    parts[#parts + 1] = y
    if after > 0 then parts[#parts + 1] = block(after) end
    if #parts > 1 then y = torch.cat(parts, d) end
  end
  return y
end

-- windows of x (N, C, H, W): (N, C, Ho, Wo, kh, kw) views through unfold
local function windows(x, kh, kw, sh, sw, dh, dw)
  local eh, ew = (kh - 1) * dh + 1, (kw - 1) * dw + 1
  local u = x:unfold(3, eh, sh):unfold(4, ew, sw)
  if dh > 1 then u = u:index_select(5, torch.arange(1, eh + 1, dh, {dtype = 'int64'})) end
  if dw > 1 then u = u:index_select(6, torch.arange(1, ew + 1, dw, {dtype = 'int64'})) end
  return u
end

local function batched4(x, name)
  if not torch.is_tensor(x) then error(name .. ': expected a tensor input', 3) end
  if x:dim() == 3 then return x:unsqueeze(1), true end
  if x:dim() ~= 4 then error(string.format('%s: expected (N, C, H, W) or (C, H, W) input, got %s', name, tostring(x:size())), 3) end
  return x, false
end

-- F.conv2d(x, weight, bias, {stride=1, padding=0 | 'same' | 'valid', dilation=1, groups=1}):
-- x (N, C, H, W) or (C, H, W), weight (O, C / groups, kh, kw), bias (O). The C kernel
-- (torch._conv2d); 'same' pads d * (k - 1) in all, the extra one after, as PyTorch.
function F.conv2d(x, weight, bias, opts)
  opts = opts or {}
  local input, unbatched = batched4(x, 'F.conv2d')
  if not torch.is_tensor(weight) or weight:dim() ~= 4 then
    error('F.conv2d: expected a 4-D weight (O, C / groups, kh, kw)', 2)
  end
  local kh, kw = weight:size(3), weight:size(4)
  local sh, sw = pair(opts.stride or 1, 'F.conv2d stride')
  local dh, dw = pair(opts.dilation or 1, 'F.conv2d dilation')
  local pt, pb, pl, pr
  if opts.padding == 'same' then
    if sh ~= 1 or sw ~= 1 then error("F.conv2d: padding='same' needs stride 1", 2) end
    local th, tw = dh * (kh - 1), dw * (kw - 1)
    pt, pb, pl, pr = th // 2, th - th // 2, tw // 2, tw - tw // 2
  elseif opts.padding == 'valid' or opts.padding == nil then
    pt, pb, pl, pr = 0, 0, 0, 0
  else
    local ph, pw = pair(opts.padding, 'F.conv2d padding')
    pt, pb, pl, pr = ph, ph, pw, pw
  end
  local y = torch._conv2d(input, weight, bias, sh, sw, pt, pb, pl, pr, dh, dw, opts.groups or 1)
  if unbatched then y = y:squeeze(1) end
  return y
end

-- F.conv1d(x, weight, bias, opts): x (N, C, L) or (C, L), weight (O, C / groups, k):
-- a conv2d of height 1.
function F.conv1d(x, weight, bias, opts)
  opts = opts or {}
  local unbatched = x:dim() == 2
  local input = unbatched and x:unsqueeze(1) or x
  local o2 = {groups = opts.groups, stride = {1, opts.stride or 1}, dilation = {1, opts.dilation or 1}}
  if opts.padding == 'same' or opts.padding == 'valid' then o2.padding = opts.padding
  else o2.padding = {0, opts.padding or 0} end
  local y = F.conv2d(input:unsqueeze(3), weight:unsqueeze(3), bias, o2):squeeze(3)
  return unbatched and y:squeeze(1) or y
end

-- F.conv_transpose2d(x, weight, bias, {stride=1, padding=0, output_padding=0, groups=1,
-- dilation=1}): the input gradient of conv2d, as PyTorch's; weight (C, O / groups, kh, kw).
function F.conv_transpose2d(x, weight, bias, opts)
  opts = opts or {}
  local input, unbatched = batched4(x, 'F.conv_transpose2d')
  local sh, sw = pair(opts.stride or 1, 'F.conv_transpose2d stride')
  local ph, pw = pair(opts.padding or 0, 'F.conv_transpose2d padding')
  local oh, ow = pair(opts.output_padding or 0, 'F.conv_transpose2d output_padding')
  local dh, dw = pair(opts.dilation or 1, 'F.conv_transpose2d dilation')
  local y = torch._conv_transpose2d(input, weight, bias, sh, sw, ph, pw, oh, ow, dh, dw, opts.groups or 1)
  if unbatched then y = y:squeeze(1) end
  return y
end

-- F.max_pool2d(x, kernel, {stride=kernel, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false}): the maximum of each window (a NaN wins); with return_indices also
-- the 1-based positions in each H*W plane. The C kernel finds the positions; the values are
-- x gathered there, so gradients (and second derivatives) follow from gather's.
function F.max_pool2d(x, kernel, opts)
  opts = opts or {}
  local input, unbatched = batched4(x, 'F.max_pool2d')
  local kh, kw = pair(kernel, 'F.max_pool2d kernel')
  local sh, sw = pair(opts.stride or kernel, 'F.max_pool2d stride')
  local ph, pw = pair(opts.padding or 0, 'F.max_pool2d padding')
  local dh, dw = pair(opts.dilation or 1, 'F.max_pool2d dilation')
  local idx = torch._max_pool2d_indices(input, kh, kw, sh, sw, ph, pw, dh, dw, opts.ceil_mode == true)
  local N, C, Ho, Wo = idx:size(1), idx:size(2), idx:size(3), idx:size(4)
  local v = input:reshape(N, C, input:size(3) * input:size(4)):gather(3, idx:view(N, C, Ho * Wo)):view(N, C, Ho, Wo)
  if unbatched then v, idx = v:squeeze(1), idx:squeeze(1) end
  if opts.return_indices then return v, idx end
  return v
end

-- F.avg_pool2d(x, kernel, {stride=kernel, padding=0, count_include_pad=true}): window means.
function F.avg_pool2d(x, kernel, opts)
  opts = opts or {}
  local input, unbatched = batched4(x, 'F.avg_pool2d')
  local kh, kw = pair(kernel, 'F.avg_pool2d kernel')
  local sh, sw = pair(opts.stride or kernel, 'F.avg_pool2d stride')
  local ph, pw = pair(opts.padding or 0, 'F.avg_pool2d padding')
  local padded = (ph > 0 or pw > 0) and F.pad(input, {pw, pw, ph, ph}) or input
  local u = windows(padded, kh, kw, sh, sw, 1, 1)
  local y
  if (ph > 0 or pw > 0) and opts.count_include_pad == false then
    local ones = F.pad(torch.ones(1, 1, input:size(3), input:size(4), {dtype = input.dtype}), {pw, pw, ph, ph})
    local counts = windows(ones, kh, kw, sh, sw, 1, 1):sum({5, 6})
    y = u:sum({5, 6}) / counts
  else
    y = u:mean({5, 6})
  end
  return unbatched and y:squeeze(1) or y
end

-- F.adaptive_avg_pool2d(x, output_size): averages over PyTorch's adaptive windows
-- (start floor(i H / out), end ceil((i + 1) H / out)).
function F.adaptive_avg_pool2d(x, size)
  local input, unbatched = batched4(x, 'F.adaptive_avg_pool2d')
  local oh, ow = pair(size, 'F.adaptive_avg_pool2d output_size')
  local H, W = input:size(3), input:size(4)
  local y
  if H % oh == 0 and W % ow == 0 then
    y = F.avg_pool2d(input, {H // oh, W // ow})
  else
    local rows = {}
    for i = 0, oh - 1 do
      local h0, h1 = (i * H) // oh, -((-(i + 1) * H) // oh)
      local cols = {}
      for j = 0, ow - 1 do
        local w0, w1 = (j * W) // ow, -((-(j + 1) * W) // ow)
        cols[j + 1] = input:narrow(3, h0 + 1, h1 - h0):narrow(4, w0 + 1, w1 - w0):mean({3, 4}, true)
      end
      rows[i + 1] = torch.cat(cols, 4)
    end
    y = torch.cat(rows, 3)
  end
  return unbatched and y:squeeze(1) or y
end

return F
