local Activation = require 'nn._Activation'

-- nn.Exp(): e^x.
return Activation.define('Exp',
  function(_, x) return x:exp() end)
