-- Convolution and pooling: F.conv2d, F.conv1d, F.conv_transpose2d on the C
-- kernels (torch._conv2d, torch._conv_transpose2d, with their derivatives in
-- C); F.max_pool2d, F.avg_pool2d, F.adaptive_avg_pool2d and F.pad (constant)
-- composed from differentiable tensor ops (unfold windows). Modules Conv1d,
-- Conv2d, ConvTranspose2d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, ZeroPad2d
-- (Torch7 names: SpatialConvolution, SpatialFullConvolution,
-- SpatialMaxPooling, SpatialAveragePooling, SpatialZeroPadding).
local torch = require 'torch'
local nn = require 'nn'
local F = nn.functional

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

-- ---- modules ----
local Module = nn.Module

local function conv_class(name, dims, fn)
  local cls = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(in_channels, out_channels, kernel, opts)
    Module.__init(self)
    opts = opts or {}
    local groups = opts.groups or 1
    if math.type(in_channels) ~= 'integer' or math.type(out_channels) ~= 'integer' or in_channels % groups ~= 0
       or out_channels % groups ~= 0 then
      error(string.format('nn.%s: in_channels (%s) and out_channels (%s) must be integers divisible by groups (%d)',
                          name, tostring(in_channels), tostring(out_channels), groups), 3)
    end
    self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
    local k = type(kernel) == 'table' and kernel or (dims == 2 and {kernel, kernel} or {kernel})
    self.kernel_size = k
    self.stride, self.padding, self.dilation = opts.stride or 1, opts.padding or 0, opts.dilation or 1
    local shape = {out_channels, in_channels // groups, table.unpack(k)}
    self.weight = nn.Parameter(torch.empty(shape, {dtype = opts.dtype}))
    if opts.bias ~= false then self.bias = nn.Parameter(torch.empty(out_channels, {dtype = opts.dtype})) end
    self:reset_parameters()
  end
  -- reset_parameters(): weight and bias uniform in +-1/sqrt(fan_in), as PyTorch.
  function cls:reset_parameters()
    local fan_in = self.weight:numel() // self.out_channels
    local bound = 1 / math.sqrt(fan_in)
    torch.no_grad(function()
      self.weight:uniform_(-bound, bound)
      if self.bias then self.bias:uniform_(-bound, bound) end
    end)
  end
  function cls:updateOutput(x)
    return fn(x, self.weight, self.bias, {stride = self.stride, padding = self.padding, dilation = self.dilation,
                                          groups = self.groups})
  end
  function cls:extra_repr()
    local s = string.format('%d, %d, kernel_size={%s}', self.in_channels, self.out_channels,
                            table.concat(self.kernel_size, ', '))
    local function show(v) return type(v) == 'table' and '{' .. table.concat(v, ', ') .. '}' or tostring(v) end
    if self.stride ~= 1 then s = s .. ', stride=' .. show(self.stride) end
    if self.padding ~= 0 then s = s .. ', padding=' .. show(self.padding) end
    if self.dilation ~= 1 then s = s .. ', dilation=' .. show(self.dilation) end
    if self.groups ~= 1 then s = s .. ', groups=' .. self.groups end
    if not self.bias then s = s .. ', bias=false' end
    return s
  end
  return cls
end

-- nn.Conv2d(in_channels, out_channels, kernel_size, {stride=, padding=, dilation=, groups=, bias=true}).
conv_class('Conv2d', 2, F.conv2d)
-- nn.Conv1d(in_channels, out_channels, kernel_size, opts): on (N, C, L).
conv_class('Conv1d', 1, F.conv1d)

-- nn.ConvTranspose2d(in_channels, out_channels, kernel_size, {stride=, padding=,
-- output_padding=, groups=, dilation=, bias=true}); weight (in, out / groups, kh, kw).
-- Torch7: nn.SpatialFullConvolution(nIn, nOut, kW, kH, dW, dH, padW, padH, adjW, adjH).
local ConvT = torch.class('nn.ConvTranspose2d', 'nn.Module')
function ConvT:__init(in_channels, out_channels, kernel, opts)
  Module.__init(self)
  opts = opts or {}
  local groups = opts.groups or 1
  if math.type(in_channels) ~= 'integer' or math.type(out_channels) ~= 'integer' or in_channels % groups ~= 0
     or out_channels % groups ~= 0 then
    error(string.format('nn.ConvTranspose2d: in_channels (%s) and out_channels (%s) must be integers divisible by '
                        .. 'groups (%d)', tostring(in_channels), tostring(out_channels), groups), 2)
  end
  self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
  self.kernel_size = type(kernel) == 'table' and kernel or {kernel, kernel}
  self.stride, self.padding, self.dilation = opts.stride or 1, opts.padding or 0, opts.dilation or 1
  self.output_padding = opts.output_padding or 0
  self.weight = nn.Parameter(torch.empty({in_channels, out_channels // groups, self.kernel_size[1],
                                          self.kernel_size[2]}, {dtype = opts.dtype}))
  if opts.bias ~= false then self.bias = nn.Parameter(torch.empty(out_channels, {dtype = opts.dtype})) end
  self:reset_parameters()
end
-- reset_parameters(): uniform in +-1/sqrt(fan_in), fan_in = out / groups * kh * kw as PyTorch computes it.
function ConvT:reset_parameters()
  local bound = 1 / math.sqrt(self.weight:numel() // self.in_channels)
  torch.no_grad(function()
    self.weight:uniform_(-bound, bound)
    if self.bias then self.bias:uniform_(-bound, bound) end
  end)
end
function ConvT:updateOutput(x)
  return F.conv_transpose2d(x, self.weight, self.bias, {stride = self.stride, padding = self.padding,
                            output_padding = self.output_padding, dilation = self.dilation, groups = self.groups})
end
function ConvT:extra_repr()
  local function show(v) return type(v) == 'table' and '{' .. table.concat(v, ', ') .. '}' or tostring(v) end
  return string.format('%d, %d, kernel_size=%s, stride=%s, padding=%s', self.in_channels, self.out_channels,
                       show(self.kernel_size), show(self.stride), show(self.padding))
end
function nn.SpatialFullConvolution(nin, nout, kw, kh, dw, dh, padw, padh, adjw, adjh)
  return nn.ConvTranspose2d(nin, nout, {kh or kw, kw}, {stride = {dh or 1, dw or 1}, padding = {padh or 0, padw or 0},
                            output_padding = {adjh or 0, adjw or 0}})
end

-- Torch7: nn.SpatialConvolution(nIn, nOut, kW, kH, dW=1, dH=1, padW=0, padH=0)
function nn.SpatialConvolution(nin, nout, kw, kh, dw, dh, padw, padh)
  return nn.Conv2d(nin, nout, {kh or kw, kw}, {stride = {dh or 1, dw or 1}, padding = {padh or padw or 0, padw or 0}})
end

local function pool_class(name, fn)
  local cls = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(kernel, opts)
    Module.__init(self)
    if type(opts) == 'number' then opts = {stride = opts} end
    opts = opts or {}
    self.kernel_size, self.stride, self.padding = kernel, opts.stride or kernel, opts.padding or 0
    self.opts = opts
  end
  function cls:updateOutput(x)
    return fn(x, self.kernel_size, {stride = self.stride, padding = self.padding,
                                    count_include_pad = self.opts.count_include_pad})
  end
  function cls:extra_repr()
    local function show(v) return type(v) == 'table' and '{' .. table.concat(v, ', ') .. '}' or tostring(v) end
    return string.format('kernel_size=%s, stride=%s, padding=%s', show(self.kernel_size), show(self.stride),
                         show(self.padding))
  end
  return cls
end

-- nn.MaxPool2d(kernel_size, {stride=kernel_size, padding=0}).
pool_class('MaxPool2d', F.max_pool2d)
-- nn.AvgPool2d(kernel_size, {stride=kernel_size, padding=0, count_include_pad=true}).
pool_class('AvgPool2d', F.avg_pool2d)

-- Torch7: nn.SpatialMaxPooling(kW, kH, dW, dH), nn.SpatialAveragePooling(kW, kH, dW, dH)
function nn.SpatialMaxPooling(kw, kh, dw, dh) return nn.MaxPool2d({kh or kw, kw}, {stride = {dh or kh or kw, dw or kw}}) end
function nn.SpatialAveragePooling(kw, kh, dw, dh) return nn.AvgPool2d({kh or kw, kw}, {stride = {dh or kh or kw, dw or kw}}) end

-- nn.AdaptiveAvgPool2d(output_size): (N, C, H, W) to (N, C, out_h, out_w).
local Adaptive = torch.class('nn.AdaptiveAvgPool2d', 'nn.Module')
function Adaptive:__init(size)
  Module.__init(self)
  self.output_size = size
end
function Adaptive:updateOutput(x) return F.adaptive_avg_pool2d(x, self.output_size) end
function Adaptive:extra_repr()
  local s = self.output_size
  return 'output_size=' .. (type(s) == 'table' and '{' .. table.concat(s, ', ') .. '}' or tostring(s))
end

-- nn.ZeroPad2d(p or {left, right, top, bottom}). Torch7: nn.SpatialZeroPadding(l, r, t, b).
local ZeroPad = torch.class('nn.ZeroPad2d', 'nn.Module')
function ZeroPad:__init(p)
  Module.__init(self)
  self.pads = type(p) == 'number' and {p, p, p, p} or p
end
function ZeroPad:updateOutput(x) return F.pad(x, self.pads) end
function ZeroPad:extra_repr() return '{' .. table.concat(self.pads, ', ') .. '}' end
function nn.SpatialZeroPadding(l, r, t, b) return nn.ZeroPad2d({l, r or l, t or l, b or l}) end

return nn
