local torch = require 'torch'
local nn = require 'nn'
local E = require 'nn._Elementwise7'

-- nn.Euclidean(inputSize, outputSize): y_j = || x - w_j || for the outputSize templates
-- w_j (the columns of weight, inputSize x outputSize), for x of inputSize or a batch of rows.
local Euclidean, Module = torch.class('nn.Euclidean', 'nn.Module')
function Euclidean:__init(input_size, output_size)
  Module.__init(self)
  if math.type(input_size) ~= 'integer' or math.type(output_size) ~= 'integer' then
    error(string.format('%s: expected integer sizes, got %s and %s', torch.typename(self), tostring(input_size),
                        tostring(output_size)), 3)
  end
  self.weight = nn.Parameter(torch.empty(input_size, output_size))
  self:reset()
end
function Euclidean:reset(stdv)
  E.reset(self.weight, self.weight:size(1), stdv)
  return self
end
-- (x - w_j) for each template: (inputSize, outputSize) or (batch, inputSize, outputSize)
function Euclidean:differences(x)
  local n = self.weight:size(1)
  if not torch.is_tensor(x) or x:dim() < 1 or x:dim() > 2 or x:size(-1) ~= n then
    error(string.format('%s: expected input of size %d or (batch, %d), got %s', torch.typename(self), n, n,
                        torch.is_tensor(x) and tostring(x:size()) or torch.type(x)), 4)
  end
  return x:unsqueeze(-1) - self.weight
end
function Euclidean:updateOutput(x)
  return ((self:differences(x) ^ 2):sum(-2):sqrt())
end
function Euclidean:extra_repr() return string.format('%d -> %d', self.weight:size(1), self.weight:size(2)) end

return Euclidean
