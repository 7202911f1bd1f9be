local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- Batch normalization over (N, C, *) input: batch statistics in training (and the
-- running_mean / running_var buffers updated with momentum, or a cumulative average
-- when momentum is false), running statistics in evaluation.
local BatchNorm, Module = torch.class('nn._BatchNorm', 'nn.Module')
-- (num_features, opts) as PyTorch, or Torch7's (nOutput, eps, momentum, affine)
function BatchNorm:__init(num_features, opts, momentum, affine)
  Module.__init(self)
  if type(opts) == 'number' or (opts == nil and (momentum ~= nil or affine ~= nil)) then
    opts = {eps = opts, momentum = momentum, affine = affine}
  end
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
  -- Torch7's one sample without its batch dim, in evaluation
  if not self.training and torch.is_tensor(x) and x:dim() == self._input_dims[1] - 1 then
    local y = self:updateOutput(x:unsqueeze(1))
    return y:squeeze(1)
  end
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
                       self.momentum == false and 'false' or string.format('%g', self.momentum), self.affine and 'true' or 'false',
                       self.track_running_stats and 'true' or 'false')
end

return BatchNorm
