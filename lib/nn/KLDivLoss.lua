local nn = require 'nn'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.KLDivLoss({reduction='mean'|'batchmean'|'sum'|'none', log_target=false}): KL divergence
-- of log-probability input from target. Torch7: nn.DistKLDivCriterion.
local KLDivLoss = Loss.define('KLDivLoss', function(self, opts)
  self.reduction = Loss.reduction_of(opts, opts)
  self.log_target = type(opts) == 'table' and opts.log_target or false
end, function(self, x, y) return F.kl_div(x, y, {reduction = self.reduction, log_target = self.log_target}) end)

return KLDivLoss
