local nn = require 'nn'
local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.Softplus(beta=1, threshold=20): log(1 + exp(beta x)) / beta, linear above threshold.
local Softplus = Activation.define('Softplus', function(self, x) return F.softplus(x, self.beta, self.threshold) end,
  function(self, beta, threshold) self.beta, self.threshold = beta or 1, threshold or 20 end,
  function(self) return string.format('beta=%g, threshold=%g', self.beta, self.threshold) end)
nn.SoftPlus = Softplus                    -- Torch7's name
return Softplus
