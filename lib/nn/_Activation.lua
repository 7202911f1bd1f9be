-- The builder of the activation modules: each is a class whose output is its
-- nn.functional form, with the arguments its constructor reads.
local torch = require 'torch'

local Activation = {}

-- Activation.define(name, fn, init, repr): defines nn.<name> whose output is
-- fn(self, input); init(self, ...) reads the arguments, repr(self) is its extra_repr.
function Activation.define(name, fn, init, repr)
  local cls, parent = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(...)
    parent.__init(self)
    if init then init(self, ...) end
  end
  cls.updateOutput = fn
  if repr then cls.extra_repr = repr end
  return cls
end

-- init and repr of the activations along one dim (Softmax, LogSoftmax, Softmin): dim=-1.
function Activation.dim_init(self, dim) self.dim = dim or -1 end
function Activation.dim_repr(self) return 'dim=' .. tostring(self.dim) end

return Activation
