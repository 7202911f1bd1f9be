local Activation = require 'nn._Activation'

-- nn.Square(): x * x.
return Activation.define('Square',
  function(_, x) return x * x end)
