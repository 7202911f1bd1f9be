-- The builder of the convolution modules (Conv1d, Conv2d, ConvTranspose2d): weight
-- (out, in / groups, kernel...), or (in, out / groups, kernel...) when transposed, and
-- bias (out), the output their nn.functional form.
local torch = require 'torch'
local nn = require 'nn'
local helpers = require 'nn._helpers'
local F = require 'nn.functional'
local spatial7 = require 'nn._Spatial7'

-- conv_class(name, dims, fn, transposed): defines nn.<name>(in_channels, out_channels,
-- kernel_size, opts) over dims spatial dims, whose output is fn(x, weight, bias, opts);
-- a transposed one also takes opts.output_padding, a direct one opts.padding_mode ('zeros',
-- 'reflect', 'replicate' or 'circular': the input padded by F.pad in that mode first).
local function conv_class(name, dims, fn, transposed)
  local cls, Module = torch.class('nn.' .. name, 'nn.Module')
  -- Torch7's noBias() and reset(stdv), its default bound 1 / sqrt(in / groups * kh * kw)
  spatial7.torch7_methods(cls, function(self)
    local n = self.in_channels // self.groups
    for _, k in ipairs(self.kernel_size) do n = n * k end
    return n
  end)
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
    if transposed then self.output_padding = opts.output_padding or 0 end
    self.padding_mode = opts.padding_mode or 'zeros'
    local modes = {zeros = true, reflect = true, replicate = true, circular = true}
    if not modes[self.padding_mode] or (transposed and self.padding_mode ~= 'zeros') then
      error(string.format("nn.%s: padding_mode must be %s, got '%s'", name,
                          transposed and "'zeros'" or "'zeros', 'reflect', 'replicate' or 'circular'",
                          tostring(self.padding_mode)), 3)
    end
    local shape = transposed and {in_channels, out_channels // groups, table.unpack(k)}
                  or {out_channels, in_channels // groups, table.unpack(k)}
    self.weight = nn.Parameter(torch.empty(shape, {dtype = opts.dtype}))
    if opts.bias ~= false then self.bias = nn.Parameter(torch.empty(out_channels, {dtype = opts.dtype})) end
    self:reset_parameters()
  end
  -- reset_parameters(): weight and bias uniform in +-1/sqrt(fan_in), as PyTorch (fan_in:
  -- the weight's size over its first dim, out / groups * kernel when transposed).
  function cls:reset_parameters()
    local fan_in = self.weight:numel() // self.weight:size(1)
    local bound = 1 / math.sqrt(fan_in)
    torch.no_grad(function()
      self.weight:uniform_(-bound, bound)
      if self.bias then self.bias:uniform_(-bound, bound) end
    end)
  end
  -- the F.pad list {left, right[, top, bottom]} of the padding that padding_mode applies
  -- (F._conv_padding's; a 1-D convolution is a 2-D one of height 1, as F.conv1d)
  function cls:_mode_pads()
    local op = 'nn.' .. name
    if dims == 1 then
      local p = self.padding
      if p ~= 'same' and p ~= 'valid' then p = {0, type(p) == 'table' and p[1] or p} end
      local _, _, pl, pr = F._conv_padding(p, {1, self.kernel_size[1]}, {1, self.dilation}, {1, self.stride}, op)
      return {pl, pr}
    end
    local pt, pb, pl, pr = F._conv_padding(self.padding, self.kernel_size, self.dilation, self.stride, op)
    return {pl, pr, pt, pb}
  end
  function cls:updateOutput(x)
    if self.padding_mode ~= 'zeros' then
      x = F.pad(x, self:_mode_pads(), {mode = self.padding_mode})
      return fn(x, self.weight, self.bias, {stride = self.stride, padding = 0, dilation = self.dilation,
                                            groups = self.groups})
    end
    return fn(x, self.weight, self.bias, {stride = self.stride, padding = self.padding, dilation = self.dilation,
                                          groups = self.groups, output_padding = self.output_padding})
  end
  function cls:extra_repr()
    local s = string.format('%d, %d, kernel_size={%s}', self.in_channels, self.out_channels,
                            table.concat(self.kernel_size, ', '))
    local show = helpers.show
    if self.stride ~= 1 then s = s .. ', stride=' .. show(self.stride) end
    if self.padding ~= 0 then s = s .. ', padding=' .. show(self.padding) end
    if transposed and self.output_padding ~= 0 then s = s .. ', output_padding=' .. show(self.output_padding) end
    if self.dilation ~= 1 then s = s .. ', dilation=' .. show(self.dilation) end
    if self.groups ~= 1 then s = s .. ', groups=' .. self.groups end
    if self.padding_mode ~= 'zeros' then s = s .. ", padding_mode='" .. self.padding_mode .. "'" end
    if not self.bias then s = s .. ', bias=false' end
    return s
  end
  return cls
end

return conv_class
