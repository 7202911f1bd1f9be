local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.Sigmoid(): 1 / (1 + exp(-x)).
return Activation.define('Sigmoid', function(_, x) return F.sigmoid(x) end)
