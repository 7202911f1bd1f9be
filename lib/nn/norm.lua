-- nn normalization layers: LayerNorm, GroupNorm, BatchNorm1d/2d (running
-- statistics as buffers; evaluation uses them).
local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

local function flag(v) return v and 'true' or 'false' end

-- nn.LayerNorm(normalized_shape, {eps=1e-5, elementwise_affine=true, bias=true}):
-- normalizes over the last dims (normalized_shape, a number or a table), then
-- scales by weight (ones) and shifts by bias (zeros).
local LayerNorm, Module = torch.class('nn.LayerNorm', 'nn.Module')
function LayerNorm:__init(shape, opts)
  Module.__init(self)
  opts = opts or {}
  if type(shape) == 'number' then shape = {shape} end
  if type(shape) ~= 'table' or #shape == 0 then
    error('nn.LayerNorm: normalized_shape must be a number or a table of sizes', 3)
  end
  self.normalized_shape = {table.unpack(shape)}
  self.eps = opts.eps or 1e-5
  self.elementwise_affine = opts.elementwise_affine ~= false
  if self.elementwise_affine then
    self.weight = nn.Parameter(torch.ones(self.normalized_shape, {dtype = opts.dtype}))
    if opts.bias ~= false then self.bias = nn.Parameter(torch.zeros(self.normalized_shape, {dtype = opts.dtype})) end
  end
end
function LayerNorm:updateOutput(x)
  return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
end
function LayerNorm:extra_repr()
  return string.format('{%s}, eps=%g, elementwise_affine=%s', table.concat(self.normalized_shape, ', '), self.eps,
                       flag(self.elementwise_affine))
end

-- nn.GroupNorm(num_groups, num_channels, {eps=1e-5, affine=true}): normalizes each
-- group of channels of (N, C, *) input; per-channel weight (ones) and bias (zeros).
local GroupNorm = torch.class('nn.GroupNorm', 'nn.Module')
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
  return string.format('%d, %d, eps=%g, affine=%s', self.num_groups, self.num_channels, self.eps, flag(self.affine))
end

-- Batch normalization over (N, C, *) input: batch statistics in training (and the
-- running_mean / running_var buffers updated with momentum, or a cumulative average
-- when momentum is false), running statistics in evaluation.
local BatchNorm = torch.class('nn._BatchNorm', 'nn.Module')
function BatchNorm:__init(num_features, opts)
  Module.__init(self)
  opts = opts or {}
  local name = torch.typename(self)
  if math.type(num_features) ~= 'integer' or num_features < 1 then
    error(string.format('%s: num_features must be a positive integer, got %s', name, tostring(num_features)), 3)
  end
  self.num_features, self.eps = num_features, opts.eps or 1e-5
  if opts.momentum == nil then self.momentum = 0.1 else self.momentum = opts.momentum end
  self.affine = opts.affine ~= false
  self.track_running_stats = opts.track_running_stats ~= false
  if self.affine then
    self.weight = nn.Parameter(torch.ones(num_features, {dtype = opts.dtype}))
    self.bias = nn.Parameter(torch.zeros(num_features, {dtype = opts.dtype}))
  end
  if self.track_running_stats then
    self:register_buffer('running_mean', torch.zeros(num_features, {dtype = opts.dtype}))
    self:register_buffer('running_var', torch.ones(num_features, {dtype = opts.dtype}))
    self:register_buffer('num_batches_tracked', torch.tensor(0, {dtype = 'int64'}))
  end
end

function BatchNorm:_check_input(x)
  local dims = self._input_dims
  local ok = false
  for _, d in ipairs(dims) do if x:dim() == d then ok = true end end
  if not ok then
    error(string.format('%s: expected %s-D input, got size %s', torch.typename(self),
                        table.concat(dims, ' or '), tostring(x:size())), 4)
  end
end

function BatchNorm:updateOutput(x)
  self:_check_input(x)
  local use_batch = self.training or not self.track_running_stats
  local momentum = self.momentum
  if self.training and self.track_running_stats then
    torch.no_grad(function() self.num_batches_tracked:add_(1) end)
    if momentum == false then momentum = 1 / self.num_batches_tracked:item() end
  end
  return F.batch_norm(x, self.track_running_stats and self.running_mean or nil,
                         self.track_running_stats and self.running_var or nil, self.weight, self.bias,
                     use_batch, momentum or 0.1, self.eps)
end

function BatchNorm:extra_repr()
  return string.format('%d, eps=%g, momentum=%s, affine=%s, track_running_stats=%s', self.num_features, self.eps,
                       self.momentum == false and 'false' or string.format('%g', self.momentum), flag(self.affine),
                       flag(self.track_running_stats))
end

-- nn.BatchNorm1d(num_features, {eps=1e-5, momentum=0.1, affine=true, track_running_stats=true}):
-- (N, C) or (N, C, L) input. Torch7's nn.BatchNormalization.
local BatchNorm1d = torch.class('nn.BatchNorm1d', 'nn._BatchNorm')
BatchNorm1d._input_dims = {2, 3}
-- nn.BatchNorm2d(num_features, opts): (N, C, H, W) input. Torch7's nn.SpatialBatchNormalization.
local BatchNorm2d = torch.class('nn.BatchNorm2d', 'nn._BatchNorm')
BatchNorm2d._input_dims = {4}
nn.BatchNormalization, nn.SpatialBatchNormalization = BatchNorm1d, BatchNorm2d

return nn
