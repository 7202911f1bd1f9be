local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line

-- nn.L1Penalty(l1weight, sizeAverage=false, provideOutput=true): an L1 regularizer of a
-- latent state: the output is the input itself, self.loss = l1weight * sum |x| (divided
-- by the number of elements when sizeAverage), and backward adds that loss's gradient
-- l1weight * sign(x) (divided likewise) to gradOutput (to nothing when provideOutput is
-- false: the output then feeds nothing that gives a gradient).
local L1Penalty, parent = torch.class('nn.L1Penalty', 'nn.Module')
function L1Penalty:__init(l1weight, sizeAverage, provideOutput)
  parent.__init(self)
  if type(l1weight) ~= 'number' then
    error('nn.L1Penalty: expected a number l1weight, got ' .. torch.type(l1weight), 3)
  end
  self.l1weight = l1weight
  self.sizeAverage = sizeAverage or false
  if provideOutput == nil then provideOutput = true end
  self.provideOutput = provideOutput
  self.loss = 0
end

local function check(self, x)
  if not torch.is_tensor(x) or not x:is_floating_point() then
    fail(self, '%s', 'expected a floating point tensor, got ' .. torch.type(x))
  end
  return x
end

-- the weight of one element's |x|
function L1Penalty:_scale(x)
  local m = self.l1weight
  if self.sizeAverage == true and x:numel() > 0 then m = m / x:numel() end
  return m
end

function L1Penalty:updateOutput(input)
  check(self, input)
  self.loss = self:_scale(input) * input:detach():abs():sum():item()
  self.output = input
  return self.output
end

function L1Penalty:updateGradInput(input, gradOutput)
  check(self, input)
  local g = torch.no_grad(function()
    local s = input:detach():sign() * self:_scale(input)
    if self.provideOutput == true then s:add_(gradOutput) end
    return s
  end)
  self.gradInput = g
  return self.gradInput
end

function L1Penalty:extra_repr()
  return string.format('l1weight=%g, sizeAverage=%s, provideOutput=%s', self.l1weight, tostring(self.sizeAverage),
                       tostring(self.provideOutput))
end

return L1Penalty
