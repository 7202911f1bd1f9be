local torch = require 'torch'
local nn = require 'nn'
local Decorator = require 'nn._Decorator7'

local dtype_of_typename = {['torch.FloatTensor'] = 'float32', ['torch.DoubleTensor'] = 'float64',
                           ['torch.HalfTensor'] = 'float16', ['torch.BFloat16Tensor'] = 'bfloat16',
                           float32 = 'float32', float64 = 'float64', float16 = 'float16', bfloat16 = 'bfloat16'}

-- the dtype of the first tensor of v (a tensor or a table of them), or nil
local function dtype_of(v)
  if torch.is_tensor(v) then return v.dtype end
  if type(v) == 'table' and not nn.is_module(v) then
    for _, x in ipairs(v) do
      local d = dtype_of(x)
      if d then return d end
    end
  end
  return nil
end

-- v (a tensor or a table of them) with its floating tensors as dtype
local function cast(v, dtype)
  if torch.is_tensor(v) then
    if v.dtype ~= dtype and v:is_floating_point() then return v:to(dtype) end
    return v
  end
  if type(v) == 'table' and not nn.is_module(v) then
    local out = {}
    for k, x in pairs(v) do out[k] = cast(x, dtype) end
    return out
  end
  return v
end

-- nn.DontCast(module, castin=false, castout=castin, moduleType): module, which :type(),
-- :float(), :double() and :to(dtype) no longer reach (they only set the type of the
-- decorator's own output and gradInput). With castin, inputs (and gradOutputs) are first
-- converted to moduleType (the type module works in: a typename such as
-- 'torch.FloatTensor' or a dtype; by default that of module's parameters or output); with
-- castout, module's output (and gradInput) are converted to the decorator's type (the
-- default dtype until :type() changes it).
local DontCast = Decorator.class('DontCast', {
  input = function(self, x)
    if self.castin then return cast(x, self.moduleType) end
    return x
  end,
  output = function(self, y)
    if self.castout then return cast(y, self._dtype) end
    return y
  end,
  grad_output = function(self, g)
    if self.castout then return cast(g, self.moduleType) end
    return g
  end,
  grad_input = function(self, gi)
    if self.castin then return cast(gi, self._dtype) end
    return gi
  end,
})

function DontCast:__init(module, castin, castout, moduleType)
  self:_decorator_init(module)
  self.castin = castin and true or false
  if castout == nil then castout = castin end
  self.castout = castout and true or false
  self._dtype = torch.get_default_dtype()
  if moduleType ~= nil then
    self.moduleType = dtype_of_typename[moduleType]
    if self.moduleType == nil then
      error('nn.DontCast: expected a floating tensor type for moduleType, got ' .. tostring(moduleType), 3)
    end
  elseif self.castin or self.castout then
    local params = module:parameters()
    self.moduleType = dtype_of(module.output) or dtype_of(params)
    if torch.is_tensor(module.output) and module.output:numel() == 0 then self.moduleType = dtype_of(params) end
    if self.moduleType == nil then
      error('nn.DontCast: cannot tell the type the module works in: give it as argument 4 (moduleType)', 3)
    end
  end
end

-- deco:to(dtype) (and :float(), :double(), :type(name)): the type of the decorator's own
-- output and gradInput (when castout/castin); the module is left as it is. Returns self.
function DontCast:to(target)
  local dtype = target
  if torch.is_tensor(target) or type(target) == 'table' then dtype = target.dtype end
  dtype = dtype_of_typename[dtype]
  if dtype ~= nil then
    self._dtype = dtype
    if self.castout and torch.is_tensor(self.output) then self.output = cast(self.output, dtype) end
    if self.castin and torch.is_tensor(self.gradInput) then self.gradInput = cast(self.gradInput, dtype) end
  end
  return self
end

-- deco:type(name [, cache]): as deco:to(name); with no name, the class name
function DontCast:type(name)
  if name == nil then return torch.typename(self) end
  return self:to(name)
end

function DontCast:extra_repr()
  return string.format('castin=%s, castout=%s', tostring(self.castin), tostring(self.castout))
end

return DontCast
