local C7 = require 'nn._Criterion7'

-- nn.MultiCriterion(): Torch7's weighted sum of criteria on one input and target;
-- crit:add(criterion, weight=1) appends one (and returns crit). forward gives
-- sum w_i c_i:forward(input, target), backward sum w_i c_i:backward(input, target).
local MultiCriterion = C7.define('MultiCriterion', function(self)
  self.criterions = {}
  self.weights = {}
end, function(self, input, target)
  local total = 0
  for i, c in ipairs(self.criterions) do total = total + self.weights[i] * c(input, target) end
  return total
end)

-- crit:add(criterion, weight=1): appends criterion with its weight; returns crit
function MultiCriterion:add(criterion, weight)
  weight = C7.check_add(self, criterion, weight)
  self.criterions[#self.criterions + 1] = criterion
  self.weights[#self.weights + 1] = weight
  return self
end

function MultiCriterion:updateOutput(input, target)
  local total = 0
  for i, c in ipairs(self.criterions) do total = total + self.weights[i] * C7.number(c:forward(input, target)) end
  self.output = total
  return total
end

function MultiCriterion:updateGradInput(input, target)
  local g
  for i, c in ipairs(self.criterions) do g = C7.add_scaled(g, self.weights[i], c:backward(input, target)) end
  self.gradInput = g or C7.zeros(input)
  return self.gradInput
end

return MultiCriterion
