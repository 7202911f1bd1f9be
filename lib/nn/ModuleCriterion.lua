local nn = require 'nn'
local C7 = require 'nn._Criterion7'

-- nn.ModuleCriterion(criterion, inputModule, targetModule, castTarget=true): Torch7's
-- criterion applied after modules: the loss of criterion at inputModule(input) and
-- targetModule(target) (either module may be nil); backward carries the criterion's
-- gradient back through inputModule (the modules' parameters are not trained by it).
-- castTarget says whether crit:type() converts targetModule too.
local ModuleCriterion = C7.define('ModuleCriterion', function(self, criterion, inputModule, targetModule, castTarget)
  C7.check_add(self, criterion)
  for _, m in ipairs({inputModule or false, targetModule or false}) do
    if m and not nn.is_module(m) then C7.fail(self, 'expected modules after the criterion, got %s', type(m)) end
  end
  self.criterion, self.inputModule, self.targetModule = criterion, inputModule, targetModule
  self.castTarget = castTarget ~= false
end, function(self, input, target)
  local x = self.inputModule and self.inputModule(input) or input
  local y = self.targetModule and self.targetModule(target) or target
  return self.criterion(x, y)
end)

function ModuleCriterion:updateOutput(input, target)
  self.input = self.inputModule and self.inputModule:forward(input) or nil
  self.target = self.targetModule and self.targetModule:forward(target) or nil
  self.output = C7.number(self.criterion:forward(self.input or input, self.target or target))
  return self.output
end

function ModuleCriterion:updateGradInput(input, target)
  local g = self.criterion:backward(self.input or input, self.target or target)
  if self.inputModule then g = self.inputModule:backward(input, g) end
  self.gradInput = g
  return g
end

return ModuleCriterion
