local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.ReLU(): max(x, 0). (PyTorch's inplace flag is accepted and ignored: the result is a new tensor.)
return Activation.define('ReLU', function(_, x) return F.relu(x) end)
