-- What the Torch7-style classes whose parameters are plain tensors (weight, bias and their
-- gradients as fields, not nn.Parameters: SparseLinear, IndexLinear, Kmeans) share:
-- module:to() converting those fields, since Module.to converts only registered tensors.
local torch = require 'torch'
local nn = require 'nn'

local Plain = {}

local dtype_of_typename = {['torch.FloatTensor'] = 'float32', ['torch.DoubleTensor'] = 'float64',
                           ['torch.HalfTensor'] = 'float16', ['torch.BFloat16Tensor'] = 'bfloat16'}

-- the dtype and device a to() target names (either may be nil)
function Plain.target(target)
  if torch.is_tensor(target) then return target.dtype, target.device end
  if type(target) == 'table' then return target.dtype, target.device end
  if target == 'cpu' or (type(target) == 'string' and target:match('^cuda')) then return nil, target end
  return dtype_of_typename[target] or target, nil
end

-- v (a tensor, or a table of them, nested) converted: floating tensors to dtype, all to device
local function convert(v, dtype, device)
  if torch.is_tensor(v) then
    local want = {device = device}
    if dtype ~= nil and v:is_floating_point() then want.dtype = dtype end
    if want.dtype == nil and want.device == nil then return v end
    return v:to(want)
  end
  if type(v) == 'table' and not nn.is_module(v) and getmetatable(v) == nil then
    local out = {}
    for k, x in pairs(v) do out[k] = convert(x, dtype, device) end
    return out
  end
  return v
end

-- Plain.define_to(cls, names): cls:to(target) (and so :float(), :double(), :type(), :cuda())
-- converts the fields named as well as what Module.to converts; returns self.
function Plain.define_to(cls, names)
  -- module:to(target): as any module's, the plain tensor fields converted too; returns self.
  function cls:to(target)
    nn.Module.to(self, target)
    local dtype, device = Plain.target(target)
    if device ~= nil then device = torch.device(device) end
    for _, name in ipairs(names) do
      local v = self[name]
      if v ~= nil then rawget(self, '_fields')[name] = convert(v, dtype, device) end
    end
    return self
  end
end

return Plain
