local torch = require 'torch'
local nn = require 'nn'
local E = require 'nn._Elementwise7'

-- nn.Cosine(inputSize, outputSize): y_j = x . w_j / (||x|| ||w_j||), the cosine of x and each
-- row w_j of weight (outputSize x inputSize), for x of inputSize or a batch of rows.
local Cosine, Module = torch.class('nn.Cosine', 'nn.Module')
local EPS = 1e-12               -- Torch7's guard added to both norms

function Cosine:__init(input_size, output_size)
  Module.__init(self)
  if math.type(input_size) ~= 'integer' or math.type(output_size) ~= 'integer' then
    error(string.format('nn.Cosine: expected integer sizes, got %s and %s', tostring(input_size),
                        tostring(output_size)), 3)
  end
  self.weight = nn.Parameter(torch.empty(output_size, input_size))
  self:reset()
end
function Cosine:reset(stdv)
  E.reset(self.weight, self.weight:size(1), stdv)
  return self
end
function Cosine:updateOutput(x)
  local n = self.weight:size(2)
  if not torch.is_tensor(x) or x:dim() < 1 or x:dim() > 2 or x:size(-1) ~= n then
    error(string.format('nn.Cosine: expected input of size %d or (batch, %d), got %s', n, n,
                        torch.is_tensor(x) and tostring(x:size()) or torch.type(x)), 3)
  end
  local wnorm = (self.weight ^ 2):sum(2):sqrt() + EPS           -- (outputSize)
  local xnorm = (x ^ 2):sum(-1, true):sqrt() + EPS              -- (1) or (batch, 1)
  local dots = x:dim() == 1 and self.weight:mv(x) or x:mm(self.weight:t())
  return dots / wnorm / xnorm
end
function Cosine:extra_repr() return string.format('%d -> %d', self.weight:size(2), self.weight:size(1)) end

return Cosine
