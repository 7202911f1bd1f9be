local Activation = require 'nn._Activation'

-- nn.Contiguous(): x in contiguous memory (x itself when it is).
return Activation.define('Contiguous',
  function(_, x) return x:contiguous() end)
