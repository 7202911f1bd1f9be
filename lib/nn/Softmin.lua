local nn = require 'nn'
local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.Softmin(dim=-1): softmax(-x) along dim.
local Softmin = Activation.define('Softmin', function(self, x) return F.softmin(x, self.dim) end,
                                  Activation.dim_init, Activation.dim_repr)
nn.SoftMin = Softmin                      -- Torch7's name
return Softmin
