-- What the Torch7-style classes whose parameters are plain tensors (weight, bias and their
-- gradients as fields, not nn.Parameters: SparseLinear, IndexLinear, Kmeans) share:
-- module:to() converting those fields, since Module.to converts only registered tensors;
-- and, for the sparse layers, whose input is a table, one node of the autograd graph, so
-- that inside a container (Sequential:forward / backward) their backward runs.
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
      nn.Module._restructured()
    end
    return self
  end
end

-- the tensors of v (a tensor or nested tables of them), depth first
local function tensors_of(v, out)
  if torch.is_tensor(v) then out[#out + 1] = v
  elseif type(v) == 'table' and getmetatable(v) == nil then
    for _, x in ipairs(v) do tensors_of(x, out) end
  end
  return out
end

-- One node for a call of a Torch7 class on a table input: forward is updateOutput, backward
-- calls updateGradInput and accGradParameters, and gives each tensor of the input the
-- gradient that module:_input_grads(input, gradOutput) returns for it (nil for none).
local Step = torch.autograd.Function:extend('nn.Torch7TableModule')
function Step.forward(ctx, self, input)
  ctx.module, ctx.input = self, input
  return self:updateOutput(input):clone()      -- the graph's own: the next call rewrites the buffer
end
function Step.backward(ctx, gradOutput)
  local self, input = ctx.module, ctx.input
  self:updateGradInput(input, gradOutput)
  self:accGradParameters(input, gradOutput, 1)
  local grads = self:_input_grads(input, gradOutput)
  return nil, nil, table.unpack(grads, 1, #tensors_of(input, {}))
end

-- Plain.define_graph(cls): cls(input) and cls:forward(input) run as one node of the graph
-- when grad is enabled and a tensor of the input requires grad (as module:forward of a
-- container makes it); else as updateOutput. cls needs _input_grads.
function Plain.define_graph(cls)
  -- module:forward(input): the output (kept in module.output), on the input's graph when a
  -- tensor of it requires grad.
  function cls:forward(input)
    local tensors = tensors_of(input, {})
    local tracked = false
    for _, t in ipairs(tensors) do tracked = tracked or t.requires_grad end
    if tracked and torch.is_grad_enabled() then
      self.output = Step.apply(self, input, table.unpack(tensors))
      return self.output
    end
    return self:updateOutput(input)
  end
end

return Plain
