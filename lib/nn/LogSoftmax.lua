local nn = require 'nn'
local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.LogSoftmax(dim=-1): log(softmax(x)) along dim, computed stably.
local LogSoftmax = Activation.define('LogSoftmax', function(self, x) return F.log_softmax(x, self.dim) end,
                                     Activation.dim_init, Activation.dim_repr)
nn.LogSoftMax = LogSoftmax                -- Torch7's name
return LogSoftmax
