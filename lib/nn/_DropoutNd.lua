-- The builder of the dropout modules: a p checked in [0, 1] and the
-- nn.functional form applied with it while training.
local torch = require 'torch'

-- dropout_class(name, fn): defines nn.<name>(p=0.5) whose output is fn(x, p, training).
local function dropout_class(name, fn)
  local cls, Module = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(p)
    Module.__init(self)
    p = p or 0.5
    if type(p) ~= 'number' or p < 0 or p > 1 then
      error(string.format('nn.%s: dropout probability has to be between 0 and 1, but got %s', name, tostring(p)), 3)
    end
    self.p = p
  end
  function cls:updateOutput(x) return fn(x, self.p, self.training) end
  function cls:extra_repr() return string.format('p=%g', self.p) end
  return cls
end

return dropout_class
