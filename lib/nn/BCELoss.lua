local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.BCELoss({weight=, reduction=}): binary cross-entropy of probabilities. Torch7: nn.BCECriterion(weights).
local BCELoss = Loss.define('BCELoss', function(self, opts)
  if torch.is_tensor(opts) then opts = {weight = opts} end
  self.reduction = Loss.reduction_of(opts)
  self.weight = type(opts) == 'table' and opts.weight or nil
end, function(self, p, y) return F.binary_cross_entropy(p, y, {weight = self.weight, reduction = self.reduction}) end)

return BCELoss
