local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- nn.GroupNorm(num_groups, num_channels, {eps=1e-5, affine=true}): normalizes each
-- group of channels of (N, C, *) input; per-channel weight (ones) and bias (zeros).
local GroupNorm, Module = torch.class('nn.GroupNorm', 'nn.Module')
function GroupNorm:__init(num_groups, num_channels, opts)
  Module.__init(self)
  opts = opts or {}
  if math.type(num_groups) ~= 'integer' or math.type(num_channels) ~= 'integer' or num_groups < 1
     or num_channels % num_groups ~= 0 then
    error(string.format('nn.GroupNorm: num_channels (%s) must be divisible by num_groups (%s)',
                        tostring(num_channels), tostring(num_groups)), 3)
  end
  self.num_groups, self.num_channels, self.eps = num_groups, num_channels, opts.eps or 1e-5
  self.affine = opts.affine ~= false
  if self.affine then
    self.weight = nn.Parameter(torch.ones(num_channels, {dtype = opts.dtype}))
    self.bias = nn.Parameter(torch.zeros(num_channels, {dtype = opts.dtype}))
  end
end
function GroupNorm:updateOutput(x)
  return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)
end
function GroupNorm:extra_repr()
  return string.format('%d, %d, eps=%g, affine=%s', self.num_groups, self.num_channels, self.eps,
                       self.affine and 'true' or 'false')
end

return GroupNorm
