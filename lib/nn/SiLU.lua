local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.SiLU(): x * sigmoid(x).
return Activation.define('SiLU', function(_, x) return F.silu(x) end)
