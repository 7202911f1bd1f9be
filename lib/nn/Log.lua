local Activation = require 'nn._Activation'

-- nn.Log(): the natural logarithm of x.
return Activation.define('Log',
  function(_, x) return x:log() end)
