local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.ReLU6(): min(max(x, 0), 6).
return Activation.define('ReLU6', function(_, x) return F.relu6(x) end)
