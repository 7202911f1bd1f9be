local C7 = require 'nn._Criterion7'

local EPS = 1e-12   -- Torch7 adds it inside both logs, so that p = 0 or 1 gives a finite loss

-- nn.BCECriterion(weights, sizeAverage=true): Torch7's binary cross-entropy of
-- probabilities x in [0, 1] with targets y, -sum w (y log(x + eps) + (1 - y) log(1 - x + eps))
-- (eps = 1e-12), divided by the number of elements when sizeAverage. weights (1-D) has the
-- input's size, or one weight per column of a 2-D (batch) input.
local BCECriterion = C7.define('BCECriterion', function(self, weights, sizeAverage)
  self.weights = C7.weights(self, weights)
  self.sizeAverage = C7.size_average(sizeAverage)
end, function(self, input, target)
  local x, y = C7.pair(self, input, target)
  if x:numel() > 0 then
    local lo, hi = x:min():item(), x:max():item()
    if not (lo >= 0 and hi <= 1) then
      C7.fail(self, 'input values must be probabilities in [0, 1], got values in [%g, %g]', lo, hi)
    end
  end
  local loss = -(y * (x + EPS):log() + (1 - y) * (1 - x + EPS):log())
  local w = self.weights
  if w ~= nil then
    if x:dim() == 2 and w:size(1) == x:size(2) then w = w:view(1, -1)
    elseif w:numel() ~= x:numel() then
      C7.fail(self, 'weights of size %s fit neither the input of size %s nor its rows', C7.size_of(w), C7.size_of(x))
    else w = w:view_as(x) end
    loss = loss * w:to(x.dtype)
  end
  return C7.reduce(self, loss, x:numel())
end)

return BCECriterion
