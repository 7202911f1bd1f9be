local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line
local nn = require 'nn'

-- nn.PartialLinear(inputsize, outputsize, bias=true): a Linear layer restricted to a chosen
-- subset of its outputs: after module:setPartition(indices) (1-based output indices) it
-- computes only those outputs, in that order, as a Linear layer whose weight holds only
-- those rows; module:resetPartition() brings back all of them. Every parameter is kept
-- whatever the partition. As Torch7's: the weight (outputsize x inputsize) is the
-- LookupTable's of module.network ({input, partition} -> input W[partition]^T), the bias
-- (1 x outputsize) is module.bias. Inputs are batches (n x inputsize).
local PartialLinear, Module = torch.class('nn.PartialLinear', 'nn.Module')
function PartialLinear:__init(inputsize, outputsize, bias)
  Module.__init(self)
  if math.type(inputsize) ~= 'integer' or math.type(outputsize) ~= 'integer' or inputsize < 1 or outputsize < 1 then
    error(string.format('nn.PartialLinear: expected positive integer sizes, got %s and %s', tostring(inputsize),
                        tostring(outputsize)), 3)
  end
  if bias == nil then bias = true end
  local pt = nn.ParallelTable()
  pt:add(nn.Identity()):add(nn.LookupTable(outputsize, inputsize))
  self.network = nn.Sequential():add(pt):add(nn.MM(false, true))
  if bias then self.bias = nn.Parameter(torch.zeros(1, outputsize)) end
  self.inputsize, self.outputsize = inputsize, outputsize
  self.allcolumns = torch.arange(1, outputsize + 1, {dtype = 'int64'})
  self:resetPartition()
end

-- module:setPartition(indices): computes only the outputs at indices (a tensor of 1-based
-- indices in 1..outputsize); returns self.
function PartialLinear:setPartition(indices)
  if not torch.is_tensor(indices) or indices:dim() ~= 1 then
    error('nn.PartialLinear:setPartition: expected a 1-D tensor of indices, got '
          .. (torch.is_tensor(indices) and tostring(indices:size()) or torch.type(indices)), 2)
  end
  local p = indices:detach():long()
  if p:numel() > 0 and (p:min():item() < 1 or p:max():item() > self.outputsize) then
    error(string.format('nn.PartialLinear:setPartition: indices must lie in 1..%d, got %d..%d', self.outputsize,
                        p:min():item(), p:max():item()), 2)
  end
  self.partition = p
  return self
end

-- module:resetPartition(): computes every output again; returns self.
function PartialLinear:resetPartition()
  self.partition = self.allcolumns
  return self
end

function PartialLinear:updateOutput(input)
  if not torch.is_tensor(input) or input:dim() ~= 2 or input:size(2) ~= self.inputsize then
    fail(self, 'expected input of size n x %d, got %s', self.inputsize,
         torch.is_tensor(input) and tostring(input:size()) or torch.type(input))
  end
  local p = self.partition:to({device = self.network:get(1):get(2).weight.device})
  local out = self.network({input, p})
  if self.bias ~= nil then out = out + self.bias:index_select(2, p) end
  return out
end

function PartialLinear:extra_repr()
  return string.format('%d -> %d%s', self.inputsize, self.outputsize, self.bias and '' or ' without bias')
end

return PartialLinear
