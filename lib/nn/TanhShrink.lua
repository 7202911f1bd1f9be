local Activation = require 'nn._Activation'

-- nn.TanhShrink(): x - tanh(x).
return Activation.define('TanhShrink',
  function(_, x) return x - x:tanh() end)
