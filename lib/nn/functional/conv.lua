-- nn.functional's convolutional-network functions on the C kernels (each recorded for
-- autograd in C): F.conv2d, F.conv1d, F.conv_transpose2d; F.max_pool2d, F.avg_pool2d (and their
-- 1-D forms) and the
-- adaptive pools; F.pad (constant composed here, reflect, replicate and circular in C);
-- F.interpolate;
-- F.unfold and F.fold.
local torch = require 'torch'
local F = require 'nn.functional'

local function pair(v, name)
  if type(v) == 'number' then return v, v end
  if type(v) == 'table' and #v == 2 then return v[1], v[2] end
  error(string.format('%s: expected a number or a pair, got %s', name, tostring(v)), 3)
end

-- the three non-constant modes of F.pad: the C kernels of the last two dims
local PAD_KERNELS = {reflect = torch._reflection_pad2d, replicate = torch._replication_pad2d,
                     circular = torch._circular_pad2d}

-- F.pad's mode and value from its third and fourth arguments: an options table {mode=,
-- value=}, or PyTorch's positional (mode, value). Anything else raises rather than pads
-- with zeros: another type, an unknown mode or option, a value for a mode that takes none.
local function pad_mode(opts, value)
  local mode = opts
  if type(opts) == 'table' then
    for k in pairs(opts) do
      if k ~= 'mode' and k ~= 'value' then
        error(string.format("F.pad: unknown option '%s' (options: mode, value)", tostring(k)), 3)
      end
    end
    if value ~= nil then error('F.pad: a value as argument 4 follows a mode, not an options table', 3) end
    mode, value = opts.mode, opts.value
  elseif opts ~= nil and type(opts) ~= 'string' then
    error(string.format("F.pad: argument 3 must be a mode ('constant', 'reflect', 'replicate', 'circular') "
                        .. "or an options table {mode=, value=}, got a %s", type(opts)), 3)
  end
  mode = mode or 'constant'
  if mode ~= 'constant' and not PAD_KERNELS[mode] then
    error(string.format("F.pad: mode must be 'constant', 'reflect', 'replicate' or 'circular', got '%s'",
                        tostring(mode)), 3)
  end
  if value ~= nil and type(value) ~= 'number' then
    error(string.format('F.pad: value must be a number, got a %s', type(value)), 3)
  end
  if mode ~= 'constant' and value ~= nil and value ~= 0 then
    error(string.format("F.pad: mode '%s' takes no value (got %s)", mode, tostring(value)), 3)
  end
  return mode, value or 0
end

-- the pads as integers, two per dim and at most two per dim of x
local function pad_list(x, pads)
  if type(pads) ~= 'table' then error('F.pad: pads must be a list {left, right, ...}, got a ' .. type(pads), 3) end
  local list = {}
  for i = 1, #pads do
    list[i] = type(pads[i]) == 'number' and math.tointeger(pads[i])
    if not list[i] then error(string.format('F.pad: pad %d must be an integer, got %s', i, tostring(pads[i])), 3) end
  end
  if #list % 2 ~= 0 or #list // 2 > x:dim() then
    error(string.format('F.pad: %d pads for a %d-D input (two per padded dim, last dim first)', #list, x:dim()), 3)
  end
  return list
end

-- x with dim d cut by the negative pads of (before, after), as PyTorch crops before it
-- pads (a view: the gradient flows back through it); cutting more than the dim raises
local function crop(x, d, before, after)
  local size = x:size(d)
  local kept = size + math.min(before, 0) + math.min(after, 0)
  if kept < 0 then
    error(string.format('F.pad: padding (%d, %d) crops %d from dim %d of size %d', before, after, size - kept, d,
                        size), 3)
  end
  if kept == size then return x end
  return x:narrow(d, 1 - math.min(before, 0), kept)
end

-- the results of pcall(kernel, ...), or its error raised at F.pad's caller rather than here
local function kernel_result(ok, ...)
  if not ok then error((tostring((...)):gsub('^[^\n]-:%d+: ', '', 1)), 3) end
  return ...
end

-- F.pad(x, {left, right, top, bottom, ...}, {mode='constant', value=0}), or PyTorch's
-- F.pad(x, pads, mode, value): padding of the last dims, PyTorch's order (last dim first); a
-- negative pad crops. mode='reflect', 'replicate' or 'circular' (the input wrapping around,
-- each pad at most that dim once cropped) pads the last one or two dims ({left, right} of
-- (N, C, L) or (C, L); four pads of (N, C, H, W) or (C, H, W)).
function F.pad(x, pads, opts, value)
  local mode, fill = pad_mode(opts, value)
  local p = pad_list(x, pads)
  local npadded = #p // 2
  if mode ~= 'constant' then
    if (npadded ~= 1 and npadded ~= 2) or (x:dim() ~= npadded + 1 and x:dim() ~= npadded + 2) then
      error(string.format("F.pad: mode '%s' pads the last 1 or 2 dims of a 2-D to 4-D input; got %d pads for size %s",
                          mode, #p, tostring(x:size())), 2)
    end
    local y = kernel_result(pcall(PAD_KERNELS[mode], x, p[1], p[2], p[3] or 0, p[4] or 0))
    return y
  end
  local y = x
  for k = 1, npadded do
    local d = x:dim() - k + 1
    local before, after = p[2 * k - 1], p[2 * k]
    y = crop(y, d, before, after)
    local parts = {}
    local function block(n)
      local shape = y:size():totable()
      shape[d] = n
      return torch.full(shape, fill, {dtype = y.dtype})
    end
    if before > 0 then parts[#parts + 1] = block(before) end
    parts[#parts + 1] = y
    if after > 0 then parts[#parts + 1] = block(after) end
    if #parts > 1 then y = torch.cat(parts, d) end
  end
  return y
end

local function batched4(x, name)
  if not torch.is_tensor(x) then error(name .. ': expected a tensor input', 3) end
  if x:dim() == 3 then return x:unsqueeze(1), true end
  if x:dim() ~= 4 then error(string.format('%s: expected (N, C, H, W) or (C, H, W) input, got %s', name, tostring(x:size())), 3) end
  return x, false
end

-- F._conv_padding(padding, {kh, kw}, dilation, stride, name): conv2d's padding (a number, a
-- pair, 'same' or 'valid') as top, bottom, left, right; 'same' pads d * (k - 1) in all, the
-- extra one after, as PyTorch, and needs stride 1. The convolution modules' padding_mode uses
-- it too.
function F._conv_padding(padding, kernel, dilation, stride, name)
  local sh, sw = pair(stride or 1, name .. ' stride')
  local dh, dw = pair(dilation or 1, name .. ' dilation')
  if padding == 'same' then
    if sh ~= 1 or sw ~= 1 then error(string.format("%s: padding='same' needs stride 1", name), 3) end
    local th, tw = dh * (kernel[1] - 1), dw * (kernel[2] - 1)
    return th // 2, th - th // 2, tw // 2, tw - tw // 2
  elseif padding == 'valid' or padding == nil then
    return 0, 0, 0, 0
  end
  local ph, pw = pair(padding, name .. ' padding')
  return ph, ph, pw, pw
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
  local sh, sw = pair(opts.stride or 1, 'F.conv2d stride')
  local dh, dw = pair(opts.dilation or 1, 'F.conv2d dilation')
  local pt, pb, pl, pr = F._conv_padding(opts.padding, {weight:size(3), weight:size(4)}, opts.dilation, opts.stride,
                                         'F.conv2d')
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

-- the values of x (N, C, H, W) at the 1-based positions idx (N, C, Ho, Wo) of each H*W plane:
-- a gather, so max pooling's gradients (and second derivatives) are gather's
local function gather_planes(x, idx)
  local N, C, Ho, Wo = idx:size(1), idx:size(2), idx:size(3), idx:size(4)
  return x:reshape(N, C, x:size(3) * x:size(4)):gather(3, idx:view(N, C, Ho * Wo)):view(N, C, Ho, Wo)
end

-- the values, and with return_indices the positions too, of a max pooling, unbatched as x was
local function max_pool_result(v, idx, unbatched, return_indices)
  if unbatched then v, idx = v:squeeze(1), idx:squeeze(1) end
  if return_indices then return v, idx end
  return v
end

-- F.max_pool2d(x, kernel, {stride=kernel, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false}): the maximum of each window (a NaN wins); with return_indices also
-- the 1-based positions in each H*W plane. The C kernel finds the positions.
function F.max_pool2d(x, kernel, opts)
  opts = opts or {}
  local input, unbatched = batched4(x, 'F.max_pool2d')
  local kh, kw = pair(kernel, 'F.max_pool2d kernel')
  local sh, sw = pair(opts.stride or kernel, 'F.max_pool2d stride')
  local ph, pw = pair(opts.padding or 0, 'F.max_pool2d padding')
  local dh, dw = pair(opts.dilation or 1, 'F.max_pool2d dilation')
  local idx = torch._max_pool2d_indices(input, kh, kw, sh, sw, ph, pw, dh, dw, opts.ceil_mode == true)
  return max_pool_result(gather_planes(input, idx), idx, unbatched, opts.return_indices)
end

-- one number of a 1-D pooling's options (a number or a table of one)
local function single(v, name)
  if type(v) == 'table' and #v == 1 then v = v[1] end
  if math.type(v) ~= 'integer' then error(string.format('%s: expected an integer, got %s', name, tostring(v)), 3) end
  return v
end

-- the (N, C, 1, L) view of a 1-D pooling's input (N, C, L) or (C, L)
local function as_plane(x, op)
  if type(x) ~= 'userdata' or (x:dim() ~= 2 and x:dim() ~= 3) then
    error(string.format('%s: expected a 2-D or 3-D input ((N,) C, L), got %s', op,
                        type(x) == 'userdata' and 'size ' .. tostring(x:size()) or type(x)), 3)
  end
  return x:unsqueeze(-2)
end

-- x (N, C, L) or (C, L) pooled by pool2d over a 1 x L plane: kernel {1, k}, and stride,
-- padding and dilation (one number each) made 2-D; the other options go through as they are.
-- Called in tail position, so its errors (level 3) point at the caller of F.*_pool1d.
local function pool1d(pool2d, x, kernel, opts, op)
  opts = opts or {}
  local plane = as_plane(x, op)
  local k = single(kernel, op .. ' kernel')
  local v, idx = pool2d(plane, {1, k}, {stride = {1, single(opts.stride or k, op .. ' stride')},
    padding = {0, single(opts.padding or 0, op .. ' padding')},
    dilation = {1, single(opts.dilation or 1, op .. ' dilation')}, ceil_mode = opts.ceil_mode,
    count_include_pad = opts.count_include_pad, return_indices = opts.return_indices})
  if idx then return v:squeeze(-2), idx:squeeze(-2) end
  return v:squeeze(-2)
end

-- F.max_pool1d(x, kernel, {stride=kernel, padding=0, dilation=1, ceil_mode=false,
-- return_indices=false}) of (N, C, L) or (C, L): max_pool2d over a 1 x L plane, the positions
-- 1-based in L.
function F.max_pool1d(x, kernel, opts) return pool1d(F.max_pool2d, x, kernel, opts, 'F.max_pool1d') end

-- F.avg_pool1d(x, kernel, {stride=kernel, padding=0, ceil_mode=false, count_include_pad=true})
-- of (N, C, L) or (C, L): avg_pool2d over a 1 x L plane.
function F.avg_pool1d(x, kernel, opts) return pool1d(F.avg_pool2d, x, kernel, opts, 'F.avg_pool1d') end

-- F.adaptive_max_pool2d(x, output_size, {return_indices=false}) (or return_indices as the third
-- argument, as PyTorch): the maximum over PyTorch's adaptive windows, the positions as max_pool2d's.
function F.adaptive_max_pool2d(x, size, opts)
  local return_indices = opts == true or (type(opts) == 'table' and opts.return_indices)
  local input, unbatched = batched4(x, 'F.adaptive_max_pool2d')
  local oh, ow = pair(size, 'F.adaptive_max_pool2d output_size')
  local idx = torch._adaptive_max_pool2d_indices(input, oh, ow)
  return max_pool_result(gather_planes(input, idx), idx, unbatched, return_indices)
end

-- F.avg_pool2d(x, kernel, {stride=kernel, padding=0, ceil_mode=false, count_include_pad=true,
-- divisor_override=nil}): window means (the C kernel); with divisor_override, each window's sum
-- divided by it instead.
function F.avg_pool2d(x, kernel, opts)
  opts = opts or {}
  local input, unbatched = batched4(x, 'F.avg_pool2d')
  local kh, kw = pair(kernel, 'F.avg_pool2d kernel')
  local sh, sw = pair(opts.stride or kernel, 'F.avg_pool2d stride')
  local ph, pw = pair(opts.padding or 0, 'F.avg_pool2d padding')
  local d = opts.divisor_override
  if d ~= nil and (type(d) ~= 'number' or d == 0) then
    error(string.format('F.avg_pool2d: divisor_override must be a non-zero number, got %s', tostring(d)), 2)
  end
  local y = torch._avg_pool2d(input, kh, kw, sh, sw, ph, pw, opts.ceil_mode == true, opts.count_include_pad ~= false,
                              d ~= nil)
  if d then y = y / d end
  return unbatched and y:squeeze(1) or y
end

-- F.adaptive_avg_pool2d(x, output_size): averages over PyTorch's adaptive windows
-- (start floor(i H / out), end ceil((i + 1) H / out)); the C kernel, which takes (*, H, W).
function F.adaptive_avg_pool2d(x, size)
  local oh, ow = pair(size, 'F.adaptive_avg_pool2d output_size')
  batched4(x, 'F.adaptive_avg_pool2d')
  return torch._adaptive_avg_pool2d(x, oh, ow)
end

-- ---- interpolation ----

local INTERPOLATE_MODES = {nearest = true, bilinear = true}

-- the output size and the scales to pass to the kernels (none when size was given or
-- recompute_scale_factor) of F.interpolate over the last two dims of input (N, C, H, W)
local function interpolate_size(input, opts)
  if (opts.size == nil) == (opts.scale_factor == nil) then
    error('F.interpolate: give exactly one of size and scale_factor', 3)
  end
  if opts.size ~= nil then
    local oh, ow = pair(opts.size, 'F.interpolate size')
    return oh, ow
  end
  local fh, fw = pair(opts.scale_factor, 'F.interpolate scale_factor')
  local oh, ow = math.floor(input:size(3) * fh), math.floor(input:size(4) * fw)
  if opts.recompute_scale_factor then return oh, ow end
  return oh, ow, fh, fw
end

-- F.interpolate(x, {size=, scale_factor=, mode='nearest', align_corners=, recompute_scale_factor=}):
-- resamples (N, C, H, W) to size (a number or {h, w}) or to floor(H * scale_factor) x
-- floor(W * scale_factor), as PyTorch; mode 'nearest' or 'bilinear' (align_corners=false by
-- default), also 'nearest' of (N, C, L). The C kernels.
function F.interpolate(x, opts)
  opts = opts or {}
  local mode = opts.mode or 'nearest'
  if not INTERPOLATE_MODES[mode] then
    error(string.format("F.interpolate: mode must be 'nearest' or 'bilinear', got '%s'", tostring(mode)), 2)
  end
  if mode == 'nearest' and opts.align_corners ~= nil then
    error("F.interpolate: align_corners can only be set with mode 'bilinear'", 2)
  end
  if not torch.is_tensor(x) then error('F.interpolate: expected a tensor input', 2) end
  if mode == 'nearest' and x:dim() == 3 then   -- (N, C, L): a 1 x L image
    local o = {mode = mode, recompute_scale_factor = opts.recompute_scale_factor}
    if opts.size ~= nil then o.size = {1, type(opts.size) == 'table' and opts.size[1] or opts.size} end
    if opts.scale_factor ~= nil then o.scale_factor = {1, type(opts.scale_factor) == 'table' and opts.scale_factor[1] or opts.scale_factor} end
    return F.interpolate(x:unsqueeze(3), o):squeeze(3)
  end
  if x:dim() ~= 4 then
    error(string.format("F.interpolate: mode '%s' expects (N, C, H, W) input, got size %s", mode, tostring(x:size())), 2)
  end
  local oh, ow, fh, fw = interpolate_size(x, opts)
  if mode == 'nearest' then return torch._upsample_nearest2d(x, oh, ow, fh, fw) end
  return torch._upsample_bilinear2d(x, oh, ow, opts.align_corners == true, fh, fw)
end

-- ---- unfold / fold ----

-- kernel, dilation, padding and stride of F.unfold / F.fold, as the kernels take them
local function block_args(name, kernel, opts)
  opts = opts or {}
  local kh, kw = pair(kernel, name .. ' kernel_size')
  local dh, dw = pair(opts.dilation or 1, name .. ' dilation')
  local ph, pw = pair(opts.padding or 0, name .. ' padding')
  local sh, sw = pair(opts.stride or 1, name .. ' stride')
  return kh, kw, dh, dw, ph, pw, sh, sw
end

-- F.unfold(x, kernel_size, {dilation=1, padding=0, stride=1}): the sliding blocks of
-- x (N, C, H, W) or (C, H, W) as columns, (N, C * kh * kw, L) (im2col).
function F.unfold(x, kernel, opts)
  local input, unbatched = batched4(x, 'F.unfold')
  local y = torch._unfold(input, block_args('F.unfold', kernel, opts))
  return unbatched and y:squeeze(1) or y
end

-- F.fold(x, output_size, kernel_size, {dilation=1, padding=0, stride=1}): the columns
-- x (N, C * kh * kw, L) or (C * kh * kw, L) summed back into (N, C, oh, ow) (col2im, unfold's adjoint).
function F.fold(x, size, kernel, opts)
  if not torch.is_tensor(x) or (x:dim() ~= 2 and x:dim() ~= 3) then
    error('F.fold: expected (N, C * kh * kw, L) or (C * kh * kw, L) input', 2)
  end
  local oh, ow = pair(size, 'F.fold output_size')
  local unbatched = x:dim() == 2
  local y = torch._fold(unbatched and x:unsqueeze(1) or x, oh, ow, block_args('F.fold', kernel, opts))
  return unbatched and y:squeeze(1) or y
end

return F
