local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.Tanh(): hyperbolic tangent.
return Activation.define('Tanh', function(_, x) return F.tanh(x) end)
