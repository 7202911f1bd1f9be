local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line

-- nn.SparseLinear(inputSize, outputSize, doGradInput=false): a Linear layer (y = W x + b,
-- weight outputSize x inputSize) for sparse inputs. One example is an nnz x 2 tensor of
-- {index, value} rows (1-based indices into the inputSize features, the others zero); a
-- batch is a Lua table of such tensors (or, Torch7's legacy form, a batch x nnz x 2
-- tensor). The output is outputSize values, or batch x outputSize. Parameters are plain
-- tensors (weight, bias, gradWeight, gradBias), as Torch7's; the gradients reach only the
-- columns the inputs name. With doGradInput, gradInput is the dense gradient, as a table
-- of one inputSize x 2 tensor per example ({i, dL/dx_i} rows for every i; a batch x
-- inputSize x 2 tensor in legacy form); without, gradInput is an empty table. A nonzero
-- module.weightDecay adds weightDecay * weight to gradWeight in each accGradParameters.
-- Inside a container (Sequential:forward / backward) it is one node of the autograd graph:
-- backward runs its updateGradInput and accGradParameters, and each value of the input
-- gets its gradient (with doGradInput) in the input's own layout.
local SparseLinear, parent = torch.class('nn.SparseLinear', 'nn.Module')
function SparseLinear:__init(inputSize, outputSize, doGradInput)
  parent.__init(self)
  if math.type(inputSize) ~= 'integer' or math.type(outputSize) ~= 'integer' or inputSize < 1 or outputSize < 1 then
    error(string.format('nn.SparseLinear: expected positive integer sizes, got %s and %s', tostring(inputSize),
                        tostring(outputSize)), 3)
  end
  if doGradInput ~= nil and type(doGradInput) ~= 'boolean' then
    error('nn.SparseLinear: doGradInput must be a boolean, got ' .. torch.type(doGradInput), 3)
  end
  self.doGradInput = doGradInput or false
  self.weightDecay = 0
  self.weight = torch.zeros(outputSize, inputSize)
  self.bias = torch.zeros(outputSize)
  self.gradWeight = torch.zeros(outputSize, inputSize)
  self.gradBias = torch.zeros(outputSize)
  self.gradInput = {}
  self:reset()
end

-- module:reset(stdv): weight uniform in +-stdv*sqrt(3) (by default +-1/sqrt(inputSize)),
-- bias in 1e-6 times that range (Torch7's).
function SparseLinear:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(2))
  self.weight:uniform_(-stdv, stdv)
  self.bias:uniform_(-stdv, stdv):mul_(1e-6)
  return self
end

-- the input as {rows, cols, values} (the example of each nonzero, 1-based; its feature
-- index; its value) with the number of examples, whether it is a batch, whether legacy
local function entries(self, input)
  local list, batch, legacy
  if torch.is_tensor(input) then
    if input:dim() == 2 then list, batch = {input}, false
    elseif input:dim() == 3 then
      list, batch, legacy = {}, true, true
      for k = 1, input:size(1) do list[k] = input[k] end
    end
  elseif type(input) == 'table' then
    list, batch = input, true
  end
  if list == nil then
    fail(self, 'expected an nnz x 2 tensor of {index, value} rows, a table of them or a batch x nnz x 2 tensor, got %s',
         torch.is_tensor(input) and tostring(input:size()) or torch.type(input))
  end
  local rows, pairs_ = {}, {}
  for k, x in ipairs(list) do
    if not torch.is_tensor(x) or x:dim() ~= 2 or x:size(2) ~= 2 then
      fail(self, 'example %d is %s, expected an nnz x 2 tensor of {index, value} rows', k,
           torch.is_tensor(x) and tostring(x:size()) or torch.type(x))
    end
    pairs_[k] = x:detach():to({device = self.weight.device})
    rows[k] = torch.full({x:size(1)}, k, {dtype = 'int64', device = self.weight.device})
  end
  local n = #list
  if n == 0 then return nil, nil, nil, 0, batch, legacy end
  local all = n == 1 and pairs_[1] or torch.cat(pairs_, 1)
  local cols = all:select(2, 1):long()
  if cols:numel() > 0 then
    local lo, hi = cols:min():item(), cols:max():item()
    if lo < 1 or hi > self.weight:size(2) then
      fail(self, 'index %d out of range 1..%d', lo < 1 and lo or hi, self.weight:size(2))
    end
  end
  return n == 1 and rows[1] or torch.cat(rows, 1), cols, all:select(2, 2):to(self.weight.dtype), n, batch, legacy
end

function SparseLinear:updateOutput(input)
  local rows, cols, vals, n, batch = entries(self, input)
  local out = self.bias:view(1, -1):expand(math.max(n, 1), self.bias:numel()):clone()
  if n > 0 and cols:numel() > 0 then
    -- out[row] += value * W[:, col], for every nonzero
    local contrib = (self.weight:index_select(2, cols) * vals:view(1, -1)):t()
    out:index_add_(1, rows, contrib)
  end
  self.output = (batch and n > 0) and out or out[1]
  return self.output
end

function SparseLinear:updateGradInput(input, gradOutput)
  local legacy = torch.is_tensor(input) and input:dim() == 3
  if not self.doGradInput then
    self.gradInput = legacy and torch.zeros_like(input) or {}
    return self.gradInput
  end
  local g = gradOutput:dim() == 1 and gradOutput:view(1, -1) or gradOutput
  local dense = g:matmul(self.weight)                    -- batch x inputSize
  local ini = self.weight:size(2)
  local indices = torch.arange(1, ini + 1, {dtype = dense.dtype, device = dense.device})
  if legacy then
    local gi = torch.empty(dense:size(1), ini, 2, {dtype = dense.dtype, device = dense.device})
    gi:select(3, 1):copy_(indices:view(1, -1):expand(dense:size(1), ini))
    gi:select(3, 2):copy_(dense)
    self.gradInput = gi
  else
    local gi = {}
    for k = 1, dense:size(1) do gi[k] = torch.stack({indices, dense[k]}, 2) end
    self.gradInput = gi
  end
  return self.gradInput
end

function SparseLinear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local rows, cols, vals, n = entries(self, input)
  local g = gradOutput:dim() == 1 and gradOutput:view(1, -1) or gradOutput
  if n > 0 and cols:numel() > 0 then
    -- gradWeight[:, col] += scale * value * gradOutput[row], for every nonzero
    local contrib = (g:index_select(1, rows) * (vals * scale):view(-1, 1)):t()
    self.gradWeight:index_add_(2, cols, contrib)
  end
  self.gradBias:add_(g:sum(1):view(-1), {alpha = scale})
  if self.weightDecay ~= 0 then self.gradWeight:add_(self.weight, {alpha = self.weightDecay}) end
end

-- the gradients of the input's tensors, in order, for the graph (none without doGradInput):
-- each value's is the weight column of its index times the gradOutput of its example
function SparseLinear:_input_grads(input, gradOutput)
  if not self.doGradInput then return {} end
  local rows, cols, _, n = entries(self, input)
  if n == 0 then return {} end
  local g = gradOutput:dim() == 1 and gradOutput:view(1, -1) or gradOutput
  local per_value = (self.weight:index_select(2, cols):t() * g:index_select(1, rows)):sum(2)
  if torch.is_tensor(input) then
    local grad = torch.zeros_like(input)
    grad:select(-1, 2):copy_(per_value:view(grad:select(-1, 2):size()))
    return {grad}
  end
  local out, at = {}, 1
  for k, x in ipairs(input) do
    local grad = torch.zeros_like(x)
    if x:size(1) > 0 then grad:select(2, 2):copy_(per_value:narrow(1, at, x:size(1))) end
    out[k], at = grad, at + x:size(1)
  end
  return out
end

local Plain = require 'nn._Plain7'
Plain.define_to(SparseLinear, {'weight', 'bias', 'gradWeight', 'gradBias'})
Plain.define_graph(SparseLinear)

function SparseLinear:extra_repr()
  return string.format('%d -> %d', self.weight:size(2), self.weight:size(1))
end

return SparseLinear
