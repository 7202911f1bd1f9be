local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.PReLU(num_parameters=1, init=0.25): LeakyReLU with a learned slope (one, or one per channel).
return Activation.define('PReLU', function(self, x) return F.prelu(x, self.weight) end,
  function(self, num_parameters, init)
    self.num_parameters = num_parameters or 1
    self.weight = nn.Parameter(torch.full({self.num_parameters}, init or 0.25))
  end,
  function(self) return 'num_parameters=' .. self.num_parameters end)
