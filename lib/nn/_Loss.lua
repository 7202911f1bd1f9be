-- The builder of the criteria (losses): each is an nn.Criterion computed by its
-- nn.functional form, with a reduction read from PyTorch's options or Torch7's
-- sizeAverage flag.
local torch = require 'torch'

local Loss = {}

-- Loss.reduction_of(opts, size_average): the reduction of PyTorch options or of
-- Torch7's sizeAverage flag.
function Loss.reduction_of(opts, size_average)
  if type(opts) == 'table' and opts.reduction then return opts.reduction end
  if size_average == false then return 'sum' end
  return 'mean'
end

local function check_reduction(name, r)
  if r ~= 'mean' and r ~= 'sum' and r ~= 'none' and r ~= 'batchmean' then
    error(string.format("nn.%s: reduction must be 'mean', 'sum' or 'none', got '%s'", name, tostring(r)), 4)
  end
end

-- Loss.define(name, init, fn, repr): defines nn.<name>; init(self, ...) reads the
-- arguments, fn(self, input, target) computes.
function Loss.define(name, init, fn, repr)
  local cls, parent = torch.class('nn.' .. name, 'nn.Criterion')
  function cls:__init(...)
    parent.__init(self)
    init(self, ...)
    check_reduction(name, self.reduction)
  end
  cls.updateOutput = fn
  cls.extra_repr = repr or function(self)
    return self.reduction ~= 'mean' and "reduction='" .. self.reduction .. "'" or ''
  end
  return cls
end

return Loss
