local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local Activation = require 'nn._Activation'

-- nn.PReLU(num_parameters=1, init=0.25): LeakyReLU with a learned slope (one, or one
-- per channel: dim 2 of the input, or, as Torch7's nn.PReLU(nOutputPlane), the only
-- dim of a 1-D input).
return Activation.define('PReLU',
  function(self, x)
    local w = self.weight
    if torch.is_tensor(x) and x:dim() == 1 and w:numel() > 1 and w:numel() == x:size(1) then
      return F.prelu(x:view(1, -1), w):view(-1)
    end
    return F.prelu(x, w)
  end,
  function(self, num_parameters, init)
    if num_parameters ~= nil and (math.type(num_parameters) ~= 'integer' or num_parameters < 0) then
      error('nn.PReLU: expected a non-negative integer count of parameters, got ' .. tostring(num_parameters), 4)
    end
    self.nOutputPlane = num_parameters or 0                  -- Torch7's field (0: one shared slope)
    self.num_parameters = math.max(num_parameters or 1, 1)
    self.weight = nn.Parameter(torch.full({self.num_parameters}, init or 0.25))
  end,
  function(self) return 'num_parameters=' .. self.num_parameters end)
