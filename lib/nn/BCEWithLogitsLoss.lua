local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.BCEWithLogitsLoss({weight=, pos_weight=, reduction=}): sigmoid and binary cross-entropy, stably.
return Loss.define('BCEWithLogitsLoss', function(self, opts)
  opts = opts or {}
  self.reduction = Loss.reduction_of(opts)
  self.weight, self.pos_weight = opts.weight, opts.pos_weight
end, function(self, x, y)
  return F.binary_cross_entropy_with_logits(x, y, {weight = self.weight, pos_weight = self.pos_weight,
                                                   reduction = self.reduction})
end)
