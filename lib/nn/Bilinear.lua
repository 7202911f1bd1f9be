local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.Bilinear(in1, in2, out, {bias=true}): y = x1^T A x2 + b per output feature;
-- bilinear(x1, x2) or Torch7's bilinear({x1, x2}).
local Bilinear, Module = torch.class('nn.Bilinear', 'nn.Module')
function Bilinear:__init(in1, in2, out, opts)
  Module.__init(self)
  opts = helpers.bias_options(opts)
  self.in1_features, self.in2_features, self.out_features = in1, in2, out
  self.weight = nn.Parameter(torch.empty(out, in1, in2, {dtype = opts.dtype}))
  if opts.bias ~= false then self.bias = nn.Parameter(torch.empty(out, {dtype = opts.dtype})) end
  self:reset_parameters()
end

-- Bilinear:reset_parameters(): uniform in +-1/sqrt(in1_features).
function Bilinear:reset_parameters()
  local bound = 1 / math.sqrt(self.in1_features)
  torch.no_grad(function()
    self.weight:uniform_(-bound, bound)
    if self.bias then self.bias:uniform_(-bound, bound) end
  end)
  return self
end

function Bilinear:updateOutput(x1, x2)
  if x2 == nil and type(x1) == 'table' and not torch.is_tensor(x1) then x1, x2 = x1[1], x1[2] end
  return F.bilinear(x1, x2, self.weight, self.bias)
end

function Bilinear:extra_repr()
  return string.format('in1_features=%d, in2_features=%d, out_features=%d, bias=%s', self.in1_features,
                       self.in2_features, self.out_features, self.bias and 'true' or 'false')
end

return Bilinear
