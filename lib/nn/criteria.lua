-- nn criteria (losses): CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss,
-- HuberLoss, BCELoss, BCEWithLogitsLoss, KLDivLoss, CosineEmbeddingLoss, with
-- Torch7's names (ClassNLLCriterion, MSECriterion, ...) as aliases taking
-- Torch7's arguments. `loss = crit(input, target)` (a 0-dim tensor, so
-- loss:backward() works) or Torch7's crit:forward / crit:backward.
local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- the reduction of PyTorch options or of Torch7's sizeAverage flag
local function reduction_of(opts, size_average)
  if type(opts) == 'table' and opts.reduction then return opts.reduction end
  if size_average == false then return 'sum' end
  return 'mean'
end

local function check_reduction(name, r)
  if r ~= 'mean' and r ~= 'sum' and r ~= 'none' and r ~= 'batchmean' then
    error(string.format("nn.%s: reduction must be 'mean', 'sum' or 'none', got '%s'", name, tostring(r)), 4)
  end
end

-- Defines nn.<name>; init(self, ...) reads the arguments, fn(self, input, target) computes.
local function criterion(name, init, fn, repr)
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

local function plain_init(self, opts) self.reduction = reduction_of(opts) end

-- nn.CrossEntropyLoss({weight=, ignore_index=, label_smoothing=, reduction=}): log-softmax
-- of the logits (N, C, *) fused with the negative log-likelihood of 1-based class targets
-- (or class probabilities of the logits' size).
criterion('CrossEntropyLoss', function(self, opts)
  opts = opts or {}
  if torch.is_tensor(opts) then opts = {weight = opts} end
  self.reduction = reduction_of(opts)
  self.weight, self.ignore_index, self.label_smoothing = opts.weight, opts.ignore_index, opts.label_smoothing or 0
end, function(self, input, target)
  return F.cross_entropy(input, target, {weight = self.weight, ignore_index = self.ignore_index,
                                         label_smoothing = self.label_smoothing, reduction = self.reduction})
end)

-- nn.NLLLoss({weight=, ignore_index=, reduction=}): negative log-likelihood of log-probabilities
-- (N, C, *) at 1-based class targets. Torch7: nn.ClassNLLCriterion(weights, sizeAverage).
-- Torch7 code passes labels of any integer type, whole numbers in a float tensor
-- (torch.Tensor{1, 2, 3}), or one number for a 1-D input: all become int64.
local function class_labels(target)
  if type(target) == 'number' then
    local label = math.tointeger(target)
    if label == nil then error(string.format('nn.NLLLoss: class label %s is not a whole number', target), 4) end
    return torch.tensor(label, {dtype = 'int64'})
  end
  if not torch.is_tensor(target) or target.dtype == 'int64' then return target end
  if target:is_floating_point() and not target:eq(target:floor()):all():item() then
    error('nn.NLLLoss: float class labels must be whole numbers, got a fraction in a tensor of size '
          .. tostring(target:size()), 4)
  end
  return target:long()
end

criterion('NLLLoss', function(self, opts, size_average)
  if torch.is_tensor(opts) then opts = {weight = opts} end
  opts = opts or {}
  self.reduction = reduction_of(opts, size_average)
  self.weight, self.ignore_index = opts.weight, opts.ignore_index
end, function(self, input, target)
  return F.nll_loss(input, class_labels(target), {weight = self.weight, ignore_index = self.ignore_index,
                                                  reduction = self.reduction})
end)
nn.ClassNLLCriterion = nn.NLLLoss

-- nn.MSELoss({reduction=}): mean squared error. Torch7: nn.MSECriterion(sizeAverage).
criterion('MSELoss', function(self, opts) self.reduction = reduction_of(opts, opts) end,
  function(self, x, y) return F.mse_loss(x, y, {reduction = self.reduction}) end)
nn.MSECriterion = nn.MSELoss

-- nn.L1Loss({reduction=}): mean absolute error. Torch7: nn.AbsCriterion(sizeAverage).
criterion('L1Loss', function(self, opts) self.reduction = reduction_of(opts, opts) end,
  function(self, x, y) return F.l1_loss(x, y, {reduction = self.reduction}) end)
nn.AbsCriterion = nn.L1Loss

-- nn.SmoothL1Loss({beta=1, reduction=}): quadratic below beta, linear above. Torch7: nn.SmoothL1Criterion.
criterion('SmoothL1Loss', function(self, opts)
  self.reduction = reduction_of(opts, opts)
  self.beta = type(opts) == 'table' and opts.beta or 1
end, function(self, x, y) return F.smooth_l1_loss(x, y, {beta = self.beta, reduction = self.reduction}) end)
nn.SmoothL1Criterion = nn.SmoothL1Loss

-- nn.HuberLoss({delta=1, reduction=}): delta * SmoothL1 with beta = delta.
criterion('HuberLoss', function(self, opts)
  self.reduction = reduction_of(opts)
  self.delta = type(opts) == 'table' and opts.delta or 1
end, function(self, x, y) return F.huber_loss(x, y, {delta = self.delta, reduction = self.reduction}) end)

-- nn.BCELoss({weight=, reduction=}): binary cross-entropy of probabilities. Torch7: nn.BCECriterion(weights).
criterion('BCELoss', function(self, opts)
  if torch.is_tensor(opts) then opts = {weight = opts} end
  self.reduction = reduction_of(opts)
  self.weight = type(opts) == 'table' and opts.weight or nil
end, function(self, p, y) return F.binary_cross_entropy(p, y, {weight = self.weight, reduction = self.reduction}) end)
nn.BCECriterion = nn.BCELoss

-- nn.BCEWithLogitsLoss({weight=, pos_weight=, reduction=}): sigmoid and binary cross-entropy, stably.
criterion('BCEWithLogitsLoss', function(self, opts)
  opts = opts or {}
  self.reduction = reduction_of(opts)
  self.weight, self.pos_weight = opts.weight, opts.pos_weight
end, function(self, x, y)
  return F.binary_cross_entropy_with_logits(x, y, {weight = self.weight, pos_weight = self.pos_weight,
                                                   reduction = self.reduction})
end)

-- nn.KLDivLoss({reduction='mean'|'batchmean'|'sum'|'none', log_target=false}): KL divergence
-- of log-probability input from target. Torch7: nn.DistKLDivCriterion.
criterion('KLDivLoss', function(self, opts)
  self.reduction = reduction_of(opts, opts)
  self.log_target = type(opts) == 'table' and opts.log_target or false
end, function(self, x, y) return F.kl_div(x, y, {reduction = self.reduction, log_target = self.log_target}) end)
nn.DistKLDivCriterion = nn.KLDivLoss

-- nn.CosineEmbeddingLoss({margin=0, reduction=}): 1 - cos(x1, x2) for y = 1,
-- max(0, cos - margin) for y = -1. crit(x1, x2, y) as PyTorch, or crit({x1, x2}, y) as
-- Torch7's nn.CosineEmbeddingCriterion(margin).
criterion('CosineEmbeddingLoss', function(self, opts)
  if type(opts) == 'number' then opts = {margin = opts} end
  self.reduction = reduction_of(opts)
  self.margin = type(opts) == 'table' and opts.margin or 0
end, function(self, input, second, third)
  local x1, x2, y
  if torch.is_tensor(input) then x1, x2, y = input, second, third
  elseif type(input) == 'table' and #input == 2 then x1, x2, y = input[1], input[2], second
  else error('nn.CosineEmbeddingLoss: expected crit(x1, x2, y) or crit({x1, x2}, y)', 3) end
  return F.cosine_embedding_loss(x1, x2, y, {margin = self.margin, reduction = self.reduction})
end)
nn.CosineEmbeddingCriterion = nn.CosineEmbeddingLoss

return nn
