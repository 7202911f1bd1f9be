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
  -- module:ceil(): Torch7's rounding of the output size up (PyTorch's ceil_mode=true); returns self.
  function cls:ceil()
    self.opts.ceil_mode = true
    return self
  end
  -- module:floor(): the output size rounded down (the default, ceil_mode=false); returns self.
  function cls:floor()
    self.opts.ceil_mode = false
    return self
  end
  function cls:extra_repr()
    local show = helpers.show
    return string.format('kernel_size=%s, stride=%s, padding=%s', show(self.kernel_size), show(self.stride),
                         show(self.padding))
  end
  -- Torch7's names of the settings, read from PyTorch's (width last): kW, kH, dW, dH, padW,
  -- padH, dilationW, dilationH and ceil_mode
  local read = cls.__index
  local function at(v, i) if type(v) == 'table' then return v[i] end return v end
  local alias = {
    kW = function(m) return at(m.kernel_size, 2) end, kH = function(m) return at(m.kernel_size, 1) end,
    dW = function(m) return at(m.stride, 2) end, dH = function(m) return at(m.stride, 1) end,
    padW = function(m) return at(m.padding, 2) end, padH = function(m) return at(m.padding, 1) end,
    dilationW = function(m) return at(m.opts.dilation or 1, 2) end,
    dilationH = function(m) return at(m.opts.dilation or 1, 1) end,
    ceil_mode = function(m) return m.opts.ceil_mode == true end,
  }
  cls.__index = function(self, k)
    local v = read(self, k)
    if v == nil and alias[k] and rawget(self, '_fields') and self.opts then return (alias[k](self)) end
    return v
  end
  return cls
end

return pool_class
