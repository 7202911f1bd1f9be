local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.Linear(in_features, out_features, {bias=true, dtype=}): y = x W^T + b for x (*, in).
-- weight (out, in) and bias (out) start uniform in +-1/sqrt(in_features), as PyTorch.
local Linear, Module = torch.class('nn.Linear', 'nn.Module')
function Linear:__init(in_features, out_features, opts)
  Module.__init(self)
  if math.type(in_features) ~= 'integer' or math.type(out_features) ~= 'integer' or in_features < 0
     or out_features < 0 then
    error(string.format('nn.Linear: expected integer sizes, got %s and %s', tostring(in_features),
                        tostring(out_features)), 3)
  end
  opts = helpers.bias_options(opts)
  self.in_features, self.out_features = in_features, out_features
  self.weight = nn.Parameter(torch.empty(out_features, in_features, {dtype = opts.dtype}))
  if opts.bias ~= false then self.bias = nn.Parameter(torch.empty(out_features, {dtype = opts.dtype})) end
  self:reset_parameters()
end

-- Linear:reset_parameters(): weight and bias uniform in +-1/sqrt(in_features)
-- (PyTorch's kaiming_uniform_ with a = sqrt(5)).
function Linear:reset_parameters()
  local bound = self.in_features > 0 and 1 / math.sqrt(self.in_features) or 0
  torch.no_grad(function()
    self.weight:uniform_(-bound, bound)
    if self.bias then self.bias:uniform_(-bound, bound) end
  end)
  return self
end
Linear.reset = Linear.reset_parameters

-- linear:noBias(): Torch7's: the layer has no bias from now on (y = x W^T); returns it.
function Linear:noBias()
  self.bias = nil
  return self
end

local dim, size = torch._method('dim'), torch._method('size')
function Linear:updateOutput(x)
  local fields = rawget(self, '_fields')          -- (read once: the values live there)
  if not torch.is_tensor(x) or dim(x) == 0 or size(x, -1) ~= fields.in_features then
    error(string.format('nn.Linear: expected input with %d features in its last dim, got %s (size mismatch)',
                        self.in_features, torch.is_tensor(x) and tostring(x:size()) or type(x)), 3)
  end
  return (F.linear(x, fields.weight, fields.bias))
end

function Linear:extra_repr()
  return string.format('in_features=%d, out_features=%d, bias=%s', self.in_features, self.out_features,
                       self.bias and 'true' or 'false')
end

-- Torch7's text: nn.Linear(in -> out), "without bias" when it has none.
function Linear:__tostring__()
  return string.format('nn.Linear(%d -> %d)%s', self.in_features, self.out_features,
                       self.bias and '' or ' without bias')
end

return Linear
