local torch = require 'torch'

-- nn.GradientReversal(lambda=1): x unchanged going forward; the gradient going back is
-- multiplied by -lambda.
local GradientReversal, Module = torch.class('nn.GradientReversal', 'nn.Module')
function GradientReversal:__init(lambda)
  Module.__init(self)
  self.lambda = lambda or 1
end
function GradientReversal:setLambda(lambda) self.lambda = lambda end
function GradientReversal:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.GradientReversal: expected a tensor input, got ' .. torch.type(x), 3) end
  local frozen = x:detach()
  return frozen + (x - frozen) * -self.lambda          -- the value of x, the slope -lambda
end
function GradientReversal:extra_repr() return 'lambda=' .. tostring(self.lambda) end

return GradientReversal
