local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.ConvTranspose2d(in_channels, out_channels, kernel_size, {stride=, padding=,
-- output_padding=, groups=, dilation=, bias=true}); weight (in, out / groups, kh, kw).
-- Torch7: nn.SpatialFullConvolution(nIn, nOut, kW, kH, dW, dH, padW, padH, adjW, adjH).
local ConvTranspose2d, Module = torch.class('nn.ConvTranspose2d', 'nn.Module')
function ConvTranspose2d:__init(in_channels, out_channels, kernel, opts)
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
function ConvTranspose2d:reset_parameters()
  local bound = 1 / math.sqrt(self.weight:numel() // self.in_channels)
  torch.no_grad(function()
    self.weight:uniform_(-bound, bound)
    if self.bias then self.bias:uniform_(-bound, bound) end
  end)
end
function ConvTranspose2d:updateOutput(x)
  return F.conv_transpose2d(x, self.weight, self.bias, {stride = self.stride, padding = self.padding,
                            output_padding = self.output_padding, dilation = self.dilation, groups = self.groups})
end
function ConvTranspose2d:extra_repr()
  local show = helpers.show
  return string.format('%d, %d, kernel_size=%s, stride=%s, padding=%s', self.in_channels, self.out_channels,
                       show(self.kernel_size), show(self.stride), show(self.padding))
end
function nn.SpatialFullConvolution(nin, nout, kw, kh, dw, dh, padw, padh, adjw, adjh)
  return nn.ConvTranspose2d(nin, nout, {kh or kw, kw}, {stride = {dh or 1, dw or 1}, padding = {padh or 0, padw or 0},
                            output_padding = {adjh or 0, adjw or 0}})
end

return ConvTranspose2d
