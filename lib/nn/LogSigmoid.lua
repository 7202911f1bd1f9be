local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.LogSigmoid(): log(sigmoid(x)).
return Activation.define('LogSigmoid', function(_, x) return F.logsigmoid(x) end)
