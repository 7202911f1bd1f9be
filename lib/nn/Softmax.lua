local nn = require 'nn'
local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.Softmax(dim=-1): exp(x) / sum(exp(x)) along dim (1-based; Torch7's SoftMax: the last dim).
local Softmax = Activation.define('Softmax', function(self, x) return F.softmax(x, self.dim) end,
                                  Activation.dim_init, Activation.dim_repr)
nn.SoftMax = Softmax                      -- Torch7's name
return Softmax
