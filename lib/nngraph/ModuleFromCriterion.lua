-- nn.ModuleFromCriterion(criterion): a criterion as a module of a graph: its
-- input is {prediction, target}, its output a one-element tensor holding the
-- loss, its gradient the criterion's gradient for the prediction (times the
-- output's gradient) and zeros for the target (the target is data, not a
-- parameter), as Torch7's nngraph defined it.
local torch = require 'torch'
local nn = require 'nn'

local ModuleFromCriterion = torch.class('nn.ModuleFromCriterion', 'nn.Module')

function ModuleFromCriterion:__init(criterion)
  nn.Module.__init(self)
  if not nn.is_module(criterion) then
    error('nn.ModuleFromCriterion: expects a criterion, got ' .. (torch.typename(criterion) or type(criterion)), 3)
  end
  self.criterion = criterion
end

function ModuleFromCriterion:updateOutput(input)
  if type(input) ~= 'table' or torch.isTensor(input) or input[1] == nil or input[2] == nil then
    error('nn.ModuleFromCriterion: expects the table {prediction, target}, got '
          .. (torch.typename(input) or type(input)), 3)
  end
  local prediction, target = input[1], input[2]
  if torch.isTensor(target) then target = target:detach() end
  local loss = self.criterion(prediction, target)
  if not torch.isTensor(loss) then loss = torch.tensor(loss, {dtype = prediction.dtype}) end
  return (loss:reshape(1))
end

function ModuleFromCriterion:extra_repr() return (tostring(self.criterion):gsub('\n.*', '')) end

-- in Torch7's files: the criterion, and the last output
require('nn.torch7').register('nn.ModuleFromCriterion',
  function(f) return nn.ModuleFromCriterion(f.criterion) end,
  function(m)
    return 'nn.ModuleFromCriterion', {criterion = m.criterion, output = torch.empty(0), gradInput = {},
                                      train = m.training}
  end)

return ModuleFromCriterion
