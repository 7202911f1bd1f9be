local torch = require 'torch'
local nn = require 'nn'

-- Torch7's weight normalization (Salimans and Kingma, 2016) of a module with a weight.
local WeightNorm, Module = torch.class('nn.WeightNorm', 'nn.Module')

local EPS = 1e-4     -- added to each row's squared norm, as Torch7's

-- nn.WeightNorm(module, outputDim=1, skip_init=false): module with its weight reparametrized as
-- w = g * v / ||v||, the norm taken over every dim but outputDim (one g per slice along it):
-- the parameters are v (size(outputDim) x the rest), g (size(outputDim)) and the module's
-- bias, with gradients gradV, gradG and gradBias. In training each forward first writes the
-- module's weight from g and v; v starts normal(0, sqrt(2 / rest)), g at v's norms, the bias
-- at zero (skip_init, a third argument, keeps them as they are).
function WeightNorm:__init(module, outputDim, skip_init)
  Module.__init(self)
  if not nn.is_module(module) or not torch.is_tensor(module.weight) then
    error('nn.WeightNorm: expected a module with a weight, got ' .. torch.type(module), 3)
  end
  local w = module.weight
  outputDim = outputDim or 1
  if math.type(outputDim) ~= 'integer' or outputDim < 1 or outputDim > w:dim() then
    error(string.format('nn.WeightNorm: outputDim must be a dim of the weight of size %s, got %s', tostring(w:size()),
                        tostring(outputDim)), 3)
  end
  self.module = module
  self.outputDim = outputDim
  self.weightSize = w:size():totable()
  local rows = w:size(outputDim)
  self.viewIn = {rows, w:numel() // math.max(rows, 1)}
  self.v = nn.Parameter(torch.empty(self.viewIn, {dtype = w.dtype}))
  self.g = nn.Parameter(torch.empty(rows, {dtype = w.dtype}))
  if torch.is_tensor(module.bias) then self.bias = module.bias end
  if not skip_init then self:resetInit() end
end

-- wn:resetInit(): v drawn normal(0, sqrt(2 / fan)), g set to v's row norms, the bias zeroed.
function WeightNorm:resetInit()
  torch.no_grad(function()
    self.v:normal_(0, math.sqrt(2 / self.viewIn[2]))
    self.g:copy_(self.v:norm(2, 2))
    if self.bias ~= nil then self.bias:zero_() end
  end)
  return self
end

-- t with dim outputDim moved to the front (the other dims in order), and back
local function to_front(t, d)
  for i = d - 1, 1, -1 do t = t:transpose(i, i + 1) end
  return t
end
local function from_front(t, d)
  for i = 1, d - 1 do t = t:transpose(i, i + 1) end
  return t
end

-- each row's norm sqrt(||v||^2 + eps) as a column
function WeightNorm:_norms()
  return ((self.v:detach():pow(2):sum(2, true) + EPS):sqrt())
end

-- wn:updateWeight(): writes the module's weight g * v / ||v|| (in place).
function WeightNorm:updateWeight()
  torch.no_grad(function()
    local w2d = self.v:detach() * (self.g:detach():view(-1, 1) / self:_norms())
    local shape = to_front(self.module.weight, self.outputDim):size()
    self.module.weight:copy_(from_front(w2d:view(shape), self.outputDim))
  end)
end

function WeightNorm:updateOutput(input)
  if self.training then self:updateWeight() end
  self.output = self.module:forward(input)
  return self.output
end

function WeightNorm:updateGradInput(input, gradOutput)
  self.gradInput = self.module:updateGradInput(input, gradOutput)
  return self.gradInput
end

-- the gradient of a parameter, made zeros when it has none
local function grad_of(p)
  if p.grad == nil then p.grad = torch.zeros_like(p:detach()) end
  return p.grad
end

function WeightNorm:accGradParameters(input, gradOutput, scale)
  local weight = self.module.weight
  local before = weight.grad ~= nil and weight.grad:clone() or nil
  self.module:accGradParameters(input, gradOutput, scale)
  local gw = weight.grad
  if gw == nil then return end
  torch.no_grad(function()
    if before ~= nil then gw = gw - before end
    -- this call's gradient of w, as rows
    local dw = to_front(gw, self.outputDim):contiguous():view(self.viewIn[1], self.viewIn[2])
    local v, norms = self.v:detach(), self:_norms()
    local scl = self.g:detach():view(-1, 1) / norms
    local dg = (dw * v / norms):sum(2)                   -- dL/dg = <dw, v> / ||v||
    grad_of(self.g):add_(dg)
    -- dL/dv = g / ||v|| * dw - dL/dg * g * v / ||v||^2
    grad_of(self.v):add_(dw * scl - v * (scl / norms) * dg:view(-1, 1))
  end)
end

-- wn:parameters(): Torch7's: {v, g, bias} and {gradV, gradG, gradBias} (the module's weight is
-- computed from v and g, so not among them).
function WeightNorm:parameters()
  local ps, gs = {self.v, self.g}, {grad_of(self.v), grad_of(self.g)}
  if self.bias ~= nil then
    ps[3], gs[3] = self.bias, grad_of(self.bias)
  end
  return ps, gs
end

function WeightNorm:extra_repr()
  return string.format('outputDim=%d', self.outputDim)
end

return WeightNorm
