local Activation = require 'nn._Activation'

-- nn.SoftSign(): x / (1 + |x|).
return Activation.define('SoftSign',
  function(_, x) return x / (x:abs() + 1) end)
