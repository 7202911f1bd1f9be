-- The builder of the dropout modules: a p checked in [0, 1] and the
-- nn.functional form applied with it while training.
local torch = require 'torch'

-- dropout_class(name, fn): defines nn.<name>(p=0.5, v1, inplace, stochasticInference)
-- whose output is fn(x, p, training). Torch7's arguments: v1 (its first version) keeps the
-- kept elements unscaled in training and scales by 1-p in evaluation; stochasticInference
-- drops in evaluation too; inplace changes nothing here (the output is a new tensor).
local function dropout_class(name, fn)
  local cls, Module = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(p, v1, inplace, stochastic_inference)
    Module.__init(self)
    p = p or 0.5
    if type(p) ~= 'number' or p < 0 or p > 1 then
      error(string.format('nn.%s: dropout probability has to be between 0 and 1, but got %s', name, tostring(p)), 3)
    end
    self.p = p
    self.v1 = v1 == true or nil
    self.inplace = inplace == true or nil
    self.stochastic_inference = stochastic_inference == true or nil
  end
  function cls:updateOutput(x)
    local drop = self.training or self.stochastic_inference == true
    if not self.v1 then return fn(x, self.p, drop) end
    if drop and self.p > 0 then
      if self.p == 1 then return x * 0 end
      return fn(x, self.p, true) * (1 - self.p)      -- the mask alone, unscaled
    end
    return x * (1 - self.p)
  end
  function cls:extra_repr() return string.format('p=%g', self.p) end
  return cls
end

return dropout_class
