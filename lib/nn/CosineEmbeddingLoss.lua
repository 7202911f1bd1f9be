local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local Loss = require 'nn._Loss'

-- nn.CosineEmbeddingLoss({margin=0, reduction=}): 1 - cos(x1, x2) for y = 1,
-- max(0, cos - margin) for y = -1. crit(x1, x2, y) as PyTorch, or crit({x1, x2}, y) as
-- Torch7's nn.CosineEmbeddingCriterion(margin).
local CosineEmbeddingLoss = Loss.define('CosineEmbeddingLoss', function(self, opts)
  if type(opts) == 'number' then opts = {margin = opts} end
  self.reduction = Loss.reduction_of(opts)
  self.margin = type(opts) == 'table' and opts.margin or 0
end, function(self, input, second, third)
  local x1, x2, y
  if torch.is_tensor(input) then x1, x2, y = input, second, third
  elseif type(input) == 'table' and #input == 2 then x1, x2, y = input[1], input[2], second
  else error('nn.CosineEmbeddingLoss: expected crit(x1, x2, y) or crit({x1, x2}, y)', 3) end
  return F.cosine_embedding_loss(x1, x2, y, {margin = self.margin, reduction = self.reduction})
end)

return CosineEmbeddingLoss
