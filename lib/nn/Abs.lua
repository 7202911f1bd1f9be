local Activation = require 'nn._Activation'

-- nn.Abs(): |x|.
return Activation.define('Abs',
  function(_, x) return x:abs() end)
