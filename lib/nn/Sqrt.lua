local Activation = require 'nn._Activation'

-- nn.Sqrt(): the square root of x.
return Activation.define('Sqrt',
  function(_, x) return x:sqrt() end)
