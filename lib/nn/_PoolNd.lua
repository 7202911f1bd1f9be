-- The builder of the window pooling modules (MaxPool1d/2d, AvgPool1d/2d): a kernel, a
-- stride (the kernel by default) and padding, the output their nn.functional form.
local torch = require 'torch'
local helpers = require 'nn._helpers'

-- pool_class(name, fn): defines nn.<name>(kernel_size, opts or stride) whose output is
-- fn(x, kernel_size, opts).
local function pool_class(name, fn)
  local cls, Module = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(kernel, opts)
    Module.__init(self)
    if type(opts) == 'number' then opts = {stride = opts} end
    opts = opts or {}
    self.kernel_size, self.stride, self.padding = kernel, opts.stride or kernel, opts.padding or 0
    self.opts = opts
  end
  -- the module's options go to fn whole: dilation, ceil_mode, return_indices (MaxPool2d),
  -- count_include_pad and divisor_override (AvgPool2d)
  function cls:updateOutput(x)
    local o = self.opts
    return fn(x, self.kernel_size, {stride = self.stride, padding = self.padding, dilation = o.dilation,
                                    ceil_mode = o.ceil_mode, return_indices = o.return_indices,
                                    count_include_pad = o.count_include_pad, divisor_override = o.divisor_override})
  end
  function cls:extra_repr()
    local show = helpers.show
    return string.format('kernel_size=%s, stride=%s, padding=%s', show(self.kernel_size), show(self.stride),
                         show(self.padding))
  end
  return cls
end

return pool_class
