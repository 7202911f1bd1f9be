local Activation = require 'nn._Activation'

-- nn.Threshold(th=1e-6, v=0, inplace): x where x > th, else v (Torch7's inplace
-- flag is accepted; the result is a new tensor).
return Activation.define('Threshold',
  function(self, x)
    local keep = x:gt(self.threshold):to(x.dtype)
    return x * keep + (1 - keep) * self.val
  end,
  function(self, th, v) self.threshold, self.val = th or 1e-6, v or 0 end,
  function(self) return string.format('threshold=%g, value=%g', self.threshold, self.val) end)
