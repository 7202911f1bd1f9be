local torch = require 'torch'
local nn = require 'nn'
local C7 = require 'nn._Criterion7'

-- nn.CriterionTable(criterion): Torch7's module form of a criterion: its input is the
-- table {input, target}; forward gives criterion:forward(input, target) (a number),
-- backward(input) the table {criterion's gradInput}. Called as m({input, target}) it
-- gives the loss on the autograd graph.
local CriterionTable, Module = torch.class('nn.CriterionTable', 'nn.Module')

function CriterionTable:__init(criterion)
  Module.__init(self)
  if not nn.is_module(criterion) or type(criterion.forward) ~= 'function' then
    C7.fail(self, 'expected a criterion, got %s', torch.type(criterion))
  end
  self.criterion = criterion
  self.output = 0
  self.gradInput = {}
end

local function pair(self, input)
  if type(input) ~= 'table' or torch.is_tensor(input) or input[1] == nil then
    C7.fail(self, 'input must be a table {input, target}, got %s', C7.size_of(input))
  end
  return input[1], input[2]
end

function CriterionTable:updateOutput(input)
  self.output = C7.number(self.criterion:forward(pair(self, input)))
  return self.output
end

function CriterionTable:updateGradInput(input)
  self.gradInput = {self.criterion:backward(pair(self, input))}
  return self.gradInput
end

function CriterionTable:forward(input) return self:updateOutput(input) end
function CriterionTable:backward(input) return self:updateGradInput(input) end
function CriterionTable.__call(self, input) return self.criterion(pair(self, input)) end

return CriterionTable
