local torch = require 'torch'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.CrossEntropyLoss({weight=, ignore_index=, label_smoothing=, reduction=}): log-softmax
-- of the logits (N, C, *) fused with the negative log-likelihood of 1-based class targets
-- (or class probabilities of the logits' size).
return Loss.define('CrossEntropyLoss', function(self, opts)
  opts = opts or {}
  if torch.is_tensor(opts) then opts = {weight = opts} end
  self.reduction = Loss.reduction_of(opts)
  self.weight, self.ignore_index, self.label_smoothing = opts.weight, opts.ignore_index, opts.label_smoothing or 0
end, function(self, input, target)
  return F.cross_entropy(input, target, {weight = self.weight, ignore_index = self.ignore_index,
                                         label_smoothing = self.label_smoothing, reduction = self.reduction})
end)
