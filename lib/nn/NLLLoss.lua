local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- the int64 class labels of a target as Torch7 code may pass them
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

-- nn.NLLLoss({weight=, ignore_index=, reduction=}): negative log-likelihood of log-probabilities
-- (N, C, *) at 1-based class targets. Torch7: nn.ClassNLLCriterion(weights, sizeAverage).
-- Torch7 code passes labels of any integer type, whole numbers in a float tensor
-- (torch.Tensor{1, 2, 3}), or one number for a 1-D input: all become int64.
local NLLLoss = Loss.define('NLLLoss', function(self, opts, size_average)
  if torch.is_tensor(opts) then opts = {weight = opts} end
  opts = opts or {}
  self.reduction = Loss.reduction_of(opts, size_average)
  self.weight, self.ignore_index = opts.weight, opts.ignore_index
end, function(self, input, target)
  return F.nll_loss(input, class_labels(target), {weight = self.weight, ignore_index = self.ignore_index,
                                                  reduction = self.reduction})
end)

return NLLLoss
