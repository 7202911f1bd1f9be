local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line
local nn = require 'nn'
local F = require 'nn.functional'

-- nn.LinearWeightNorm(inputSize, outputSize, bias=true, eps=1e-16): a Linear layer whose
-- weight is reparametrized (weight normalization, Salimans & Kingma): weight[i] =
-- g[i] * v[i] / ||v[i]||, the row norm clamped below at eps. Parameters v (outputSize x
-- inputSize), g (outputSize x 1) and bias (outputSize), with gradients gradV, gradG and
-- gradBias; self.weight holds the last weight computed.
local LinearWeightNorm, Module = torch.class('nn.LinearWeightNorm', 'nn.Module')
function LinearWeightNorm:__init(inputSize, outputSize, bias, eps)
  Module.__init(self)
  if math.type(inputSize) ~= 'integer' or math.type(outputSize) ~= 'integer' or inputSize < 1 or outputSize < 1 then
    error(string.format('nn.LinearWeightNorm: expected positive integer sizes, got %s and %s', tostring(inputSize),
                        tostring(outputSize)), 3)
  end
  if bias == nil then bias = true end
  self.inputSize, self.outputSize = inputSize, outputSize
  self.eps = eps or 1e-16
  self.v = nn.Parameter(torch.empty(outputSize, inputSize))
  self.g = nn.Parameter(torch.empty(outputSize, 1))
  if bias then self.bias = nn.Parameter(torch.empty(outputSize)) end
  self:reset()
end

-- module:reset(stdv): a weight uniform in +-stdv*sqrt(3) (by default +-1/sqrt(inputSize)),
-- taken apart into v and g; bias likewise uniform.
function LinearWeightNorm:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.inputSize)
  local weight = torch.empty(self.outputSize, self.inputSize, {dtype = self.v.dtype}):uniform_(-stdv, stdv)
  self:initFromWeight(weight)
  if self.bias then torch.no_grad(function() self.bias:uniform_(-stdv, stdv) end) end
  return self
end

-- module:initFromWeight(weight=self.weight): v = weight and g its row norms (at least eps),
-- so that the layer computes with weight; returns self.
function LinearWeightNorm:initFromWeight(weight)
  weight = weight or self.weight
  if not torch.is_tensor(weight) or weight:dim() ~= 2 or weight:size(1) ~= self.outputSize
     or weight:size(2) ~= self.inputSize then
    error(string.format('nn.LinearWeightNorm:initFromWeight: expected a %dx%d weight, got %s', self.outputSize,
                        self.inputSize, torch.is_tensor(weight) and tostring(weight:size()) or torch.type(weight)), 2)
  end
  torch.no_grad(function()
    local w = weight:detach():to(self.v.dtype)
    self.g:copy_(w:norm(2, 2, true):clamp(self.eps, math.huge))
    self.v:copy_(w)
  end)
  self.weight = self:_weight():detach()
  return self
end

-- the weight g * v / ||v|| (rows), on the graph of v and g
function LinearWeightNorm:_weight()
  local norm = self.v:norm(2, 2, true):clamp(self.eps, math.huge)
  return self.v * (self.g / norm)
end

-- module:updateWeightMatrix(): self.weight from v and g
function LinearWeightNorm:updateWeightMatrix()
  self.weight = torch.no_grad(function() return self:_weight() end)
  return self.weight
end

function LinearWeightNorm:updateOutput(x)
  if not torch.is_tensor(x) or x:dim() < 1 or x:dim() > 2 or x:size(-1) ~= self.inputSize then
    fail(self, 'expected input of %d features (or a batch of them), got %s', self.inputSize,
         torch.is_tensor(x) and tostring(x:size()) or torch.type(x))
  end
  local weight = self:_weight()
  self.weight = weight:detach()
  return F.linear(x, weight, self.bias)
end

-- nn.LinearWeightNorm.fromLinear(linear): a LinearWeightNorm computing what linear (an
-- nn.Linear) computes (its weight taken apart into v and g, its bias, if any, copied).
function LinearWeightNorm.fromLinear(linear)
  if not nn.is_module(linear) or not torch.is_tensor(linear.weight) or linear.weight:dim() ~= 2 then
    error('nn.LinearWeightNorm.fromLinear: expected an nn.Linear, got ' .. torch.type(linear), 2)
  end
  local w = linear.weight
  local module = nn.LinearWeightNorm(w:size(2), w:size(1), torch.is_tensor(linear.bias)):to(w.dtype)
  module:initFromWeight(w)
  if linear.bias ~= nil then torch.no_grad(function() module.bias:copy_(linear.bias) end) end
  return module
end

-- module:toLinear(): an nn.Linear with the current weight (and bias).
function LinearWeightNorm:toLinear()
  local module = nn.Linear(self.inputSize, self.outputSize, {bias = self.bias ~= nil, dtype = self.v.dtype})
  local weight = self:updateWeightMatrix()
  torch.no_grad(function()
    module.weight:copy_(weight)
    if self.bias then module.bias:copy_(self.bias) end
  end)
  return module
end

function LinearWeightNorm:extra_repr()
  return string.format('%d -> %d%s', self.inputSize, self.outputSize, self.bias and '' or ' without bias')
end

return LinearWeightNorm
