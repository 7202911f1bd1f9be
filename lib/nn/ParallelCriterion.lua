local C7 = require 'nn._Criterion7'

-- nn.ParallelCriterion(repeatTarget=false): Torch7's weighted sum of criteria over a table
-- input: criterion i sees input[i] and target[i] (the whole target for each when
-- repeatTarget); crit:add(criterion, weight=1) appends one (and returns crit). backward
-- gives a table: w_i times criterion i's gradient at position i.
local ParallelCriterion = C7.define('ParallelCriterion', function(self, repeatTarget)
  self.criterions = {}
  self.weights = {}
  self.repeatTarget = repeatTarget == true
end, function(self, input, target)
  local total = 0
  for i, c in ipairs(self.criterions) do
    total = total + self.weights[i] * c(input[i], self.repeatTarget and target or target[i])
  end
  return total
end)

local function check_input(self, input, target)
  if type(input) ~= 'table' or #input < #self.criterions then
    C7.fail(self, 'input must be a table of %d inputs (one per criterion), got %s', #self.criterions, C7.size_of(input))
  end
  if not self.repeatTarget and (type(target) ~= 'table' or #target < #self.criterions) then
    C7.fail(self, 'target must be a table of %d targets (one per criterion; or repeatTarget), got %s',
            #self.criterions, C7.size_of(target))
  end
end

-- crit:add(criterion, weight=1): appends criterion with its weight; returns crit
function ParallelCriterion:add(criterion, weight)
  weight = C7.check_add(self, criterion, weight)
  self.criterions[#self.criterions + 1] = criterion
  self.weights[#self.weights + 1] = weight
  return self
end

function ParallelCriterion:updateOutput(input, target)
  check_input(self, input, target)
  local total = 0
  for i, c in ipairs(self.criterions) do
    total = total + self.weights[i] * C7.number(c:forward(input[i], self.repeatTarget and target or target[i]))
  end
  self.output = total
  return total
end

function ParallelCriterion:updateGradInput(input, target)
  check_input(self, input, target)
  local g = C7.zeros(input)
  for i, c in ipairs(self.criterions) do
    g[i] = C7.scaled(c:backward(input[i], self.repeatTarget and target or target[i]), self.weights[i])
  end
  self.gradInput = g
  return g
end

return ParallelCriterion
