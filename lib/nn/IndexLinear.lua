local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line

-- nn.IndexLinear(inputSize, outputSize, doGradInput=false, keysOffset=0, weight, bias,
-- normalize=false): a Linear layer for sparse inputs given as keys and values, Torch7's:
-- y = bias + sum over the nonzeros of value * weight[key], with weight inputSize x
-- outputSize (the transpose of Linear's) and keys in 1+keysOffset .. inputSize+keysOffset.
-- Inputs: {keys, values} (two 1-D tensors: one example, output of outputSize), {{keys...},
-- {values...}} (one pair per example, output batch x outputSize), or the flat batch {keys,
-- values, sizes} (all the examples' keys and values concatenated, sizes their counts).
-- weight and bias start at zero (or are the tensors given, shared). The weight gradient is
-- kept sparse (the gradient rows of the keys seen since zeroGradParameters) and applied by
-- updateParameters(lr); gradBias is dense. With doGradInput, gradInput is {keys, dense
-- gradient} in the input's layout (all inputSize keys of each example). Torch7's max-abs
-- input normalization (normalize) and its weightDecay are not supported. Inside a container
-- (Sequential:forward / backward) it is one node of the autograd graph, as nn.SparseLinear.
local IndexLinear, parent = torch.class('nn.IndexLinear', 'nn.Module')
function IndexLinear:__init(inputSize, outputSize, doGradInput, keysOffset, weight, bias, normalize)
  parent.__init(self)
  if normalize then
    error('nn.IndexLinear: the normalize option (max-abs input normalization) is not supported by moontorch', 3)
  end
  if weight ~= nil then
    if not torch.is_tensor(weight) or weight:dim() ~= 2 then
      error('nn.IndexLinear: expected a 2-D weight (inputSize x outputSize), got ' .. torch.type(weight), 3)
    end
    inputSize, outputSize = weight:size(1), weight:size(2)
  end
  if math.type(inputSize) ~= 'integer' or math.type(outputSize) ~= 'integer' or inputSize < 1 or outputSize < 1 then
    error(string.format('nn.IndexLinear: expected positive integer sizes, got %s and %s', tostring(inputSize),
                        tostring(outputSize)), 3)
  end
  if bias ~= nil and (not torch.is_tensor(bias) or bias:numel() ~= outputSize) then
    error(string.format('nn.IndexLinear: expected a bias of %d values, got %s', outputSize,
                        torch.is_tensor(bias) and tostring(bias:size()) or torch.type(bias)), 3)
  end
  self.inputSize, self.outputSize = inputSize, outputSize
  self.weight = weight or torch.zeros(inputSize, outputSize)
  self.bias = bias or torch.zeros(outputSize)
  self.gradBias = torch.zeros(outputSize)
  self.doGradInput = doGradInput or false
  self.keysOffset = keysOffset or 0
  self.normalize = 0
  self.weightDecay = 0
  self.running = {}           -- {rows, gradient rows} of each accGradParameters since zeroGradParameters
end

-- module:reset(stdv): weight uniform in +-stdv*sqrt(3) (by default +-1/sqrt(outputSize)),
-- bias in 1e-6 times that range (Torch7's).
function IndexLinear:reset(stdv)
  stdv = stdv and stdv * math.sqrt(3) or 1 / math.sqrt(self.weight:size(2))
  self.weight:uniform_(-stdv, stdv)
  self.bias:uniform_(-stdv, stdv):mul_(1e-6)
  return self
end

-- the input's nonzeros: {keys (weight rows), values, example of each, examples, layout}
function IndexLinear:_entries(input)
  local function bad(msg) fail(self, '%s', msg) end
  if type(input) ~= 'table' or torch.is_tensor(input) or (#input ~= 2 and #input ~= 3) then
    bad('expected {keys, values}, {{keys...}, {values...}} or {keys, values, sizes}, got ' .. torch.type(input))
  end
  local keys, values, sizes, layout
  if #input == 3 then
    keys, values, sizes, layout = input[1], input[2], input[3], 'flat'
    if type(sizes) == 'number' then sizes = torch.tensor({sizes}, {dtype = 'int64'}) end
    if not (torch.is_tensor(keys) and torch.is_tensor(values) and torch.is_tensor(sizes)) or keys:dim() ~= 1
       or values:dim() ~= 1 or keys:numel() ~= values:numel() then
      bad('the flat input {keys, values, sizes} needs 1-D keys and values of one length and a sizes tensor')
    end
    sizes = sizes:reshape(-1):long()
    if sizes:numel() == 0 or sizes:min():item() < 0 or sizes:sum():item() ~= keys:numel() then
      bad(string.format('sizes must be counts (at least one, none negative) adding up to the %d keys', keys:numel()))
    end
  elseif torch.is_tensor(input[1]) and torch.is_tensor(input[2]) then
    keys, values, layout = input[1], input[2], 'single'
    sizes = torch.tensor({keys:numel()}, {dtype = 'int64'})
  elseif type(input[1]) == 'table' and type(input[2]) == 'table' and #input[1] == #input[2] then
    layout = 'table'
    local ks, vs, ns = {}, {}, {}
    for i = 1, #input[1] do
      ks[i], vs[i] = input[1][i], input[2][i]
      if not torch.is_tensor(ks[i]) or not torch.is_tensor(vs[i]) or ks[i]:dim() ~= 1 or vs[i]:dim() ~= 1
         or ks[i]:numel() ~= vs[i]:numel() then
        bad(string.format('example %d needs 1-D keys and values of one length, got %s and %s', i,
                          torch.is_tensor(ks[i]) and tostring(ks[i]:size()) or torch.type(ks[i]),
                          torch.is_tensor(vs[i]) and tostring(vs[i]:size()) or torch.type(vs[i])))
      end
      ns[i] = ks[i]:numel()
    end
    if #ks == 0 then bad('expected at least one example') end
    keys, values = torch.cat(ks, 1), torch.cat(vs, 1)
    sizes = torch.tensor(ns, {dtype = 'int64'})
  else
    bad('expected {keys, values}, {{keys...}, {values...}} or {keys, values, sizes}')
  end
  if keys:dim() ~= 1 or values:dim() ~= 1 or keys:numel() ~= values:numel() then
    bad(string.format('keys and values must be 1-D and of one length, got %s and %s', tostring(keys:size()),
                       tostring(values:size())))
  end
  local device = self.weight.device
  local rows = keys:long():to({device = device}) - self.keysOffset
  if rows:numel() > 0 then
    local lo, hi = rows:min():item(), rows:max():item()
    if lo < 1 or hi > self.inputSize then
      bad(string.format('key %d out of range %d..%d', (lo < 1 and lo or hi) + self.keysOffset, 1 + self.keysOffset,
                         self.inputSize + self.keysOffset))
    end
  end
  local n = sizes:numel()
  -- the example of each nonzero: 1 + how many examples after the first start at or before it
  local total = keys:numel()
  local example = torch.ones(total, {dtype = 'int64', device = device})
  if n > 1 and total > 0 then
    local starts = (sizes:cumsum(1) - sizes + 1):narrow(1, 2, n - 1)
    starts = starts:masked_select(starts:le(total))
    local marker = torch.zeros(total, {dtype = 'int64', device = device})
    starts = starts:to({device = device})
    marker:index_add_(1, starts, torch.ones(starts:numel(), {dtype = 'int64', device = device}))
    example = marker:cumsum(1) + 1
  end
  return rows, values:to({dtype = self.weight.dtype, device = device}), example, n, layout
end

-- the distinct rows u of the nonzeros and the n x #u dense input restricted to them
function IndexLinear:_compact(rows, values, example, n)
  local device = self.weight.device
  local mark = torch.zeros(self.inputSize, {dtype = 'int64', device = device})
  mark:index_fill_(1, rows, 1)
  local u = mark:nonzero():view(-1)
  mark:index_copy_(1, u, torch.arange(1, u:numel() + 1, {dtype = 'int64', device = device}))
  local col = mark:index_select(1, rows)
  local dense = torch.zeros(n, u:numel(), {dtype = self.weight.dtype, device = device})
  if rows:numel() > 0 then dense:view(-1):index_add_(1, (example - 1) * u:numel() + col, values) end
  return u, dense
end

function IndexLinear:updateOutput(input)
  local rows, values, example, n, layout = self:_entries(input)
  local u, dense = self:_compact(rows, values, example, n)
  local out = self.bias:view(1, -1):expand(n, self.outputSize):clone()
  if u:numel() > 0 then out:add_(dense:matmul(self.weight:index_select(1, u))) end
  self.output = layout == 'single' and out[1] or out
  return self.output
end

local function batch_rows(g) return g:dim() == 1 and g:view(1, -1) or g end

-- the weight gradient of one call: the rows u and their gradients scale * dense^T gradOutput
function IndexLinear:_gradient(input, gradOutput, scale)
  local rows, values, example, n = self:_entries(input)
  local u, dense = self:_compact(rows, values, example, n)
  local g = batch_rows(gradOutput):to(self.weight.dtype)
  if g:size(1) ~= n or g:size(2) ~= self.outputSize then
    fail(self, 'gradOutput of size %s for %d examples of %d outputs', tostring(gradOutput:size()), n, self.outputSize)
  end
  return u, dense:t():matmul(g) * scale, g
end

function IndexLinear:updateGradInput(input, gradOutput)
  local _, _, _, n, layout = self:_entries(input)
  if not self.doGradInput then
    self.gradInput = {}
    return self.gradInput
  end
  local gi = batch_rows(gradOutput):matmul(self.weight:t())      -- n x inputSize
  local keys = torch.arange(1 + self.keysOffset, self.inputSize + self.keysOffset + 1, {dtype = 'int64', device = gi.device})
  if layout == 'flat' then
    self.gradInput = {keys:view(1, -1):expand(n, self.inputSize):clone(), gi}
  elseif layout == 'single' then
    self.gradInput = {keys, gi[1]}
  else
    local ks, gs = {}, {}
    for i = 1, n do ks[i], gs[i] = keys:clone(), gi[i]:clone() end
    self.gradInput = {ks, gs}
  end
  return self.gradInput
end

function IndexLinear:accGradParameters(input, gradOutput, scale)
  scale = scale or 1
  local u, grad, g = self:_gradient(input, gradOutput, scale)
  self.running[#self.running + 1] = {u, grad}
  self.gradBias:add_(g:sum(1):view(-1), {alpha = scale})
end

-- module:accUpdateGradParameters(input, gradOutput, lr): weight and bias move by -lr times
-- this call's gradients at once (the kept gradients are left as they are).
function IndexLinear:accUpdateGradParameters(input, gradOutput, lr)
  self:_no_decay('accUpdateGradParameters')
  local u, grad, g = self:_gradient(input, gradOutput, lr)
  if u:numel() > 0 then self.weight:index_add_(1, u, grad, {alpha = -1}) end
  self.bias:add_(g:sum(1):view(-1), {alpha = -lr})
end

-- module:backwardUpdate(input, gradOutput, lr): updateGradInput, then accUpdateGradParameters.
function IndexLinear:backwardUpdate(input, gradOutput, lr)
  self:updateGradInput(input, gradOutput)
  self:accUpdateGradParameters(input, gradOutput, lr)
  return self.gradInput
end

function IndexLinear:_no_decay(who)
  if self.weightDecay ~= 0 then
    error('nn.IndexLinear:' .. who .. ': weightDecay is not supported by moontorch (set it to 0; use a '
          .. 'weight decay of the optimizer)', 3)
  end
end

-- module:updateParameters(lr): weight -= lr * (the weight gradients kept since
-- zeroGradParameters, at their rows), bias -= lr * gradBias.
function IndexLinear:updateParameters(lr)
  if type(lr) ~= 'number' then error('nn.IndexLinear:updateParameters: expected a learning rate, got ' .. type(lr), 2) end
  self:_no_decay('updateParameters')
  for _, r in ipairs(self.running) do
    if r[1]:numel() > 0 then self.weight:index_add_(1, r[1], r[2], {alpha = -lr}) end
  end
  self.bias:add_(self.gradBias, {alpha = -lr})
end

-- module:zeroGradParameters(): forgets the kept weight gradients and zeroes gradBias.
function IndexLinear:zeroGradParameters()
  self.running = {}
  self.gradBias:zero_()
end

-- module:gradWeightDense(): the kept weight gradient as a dense inputSize x outputSize tensor.
function IndexLinear:gradWeightDense()
  local gw = torch.zeros_like(self.weight)
  for _, r in ipairs(self.running) do
    if r[1]:numel() > 0 then gw:index_add_(1, r[1], r[2]) end
  end
  return gw
end

-- module:parameters(): {weight, bias} and {the dense weight gradient, gradBias}.
function IndexLinear:parameters()
  return {self.weight, self.bias}, {self:gradWeightDense(), self.gradBias}
end

-- module:getParameters(): refused: the weight gradient is kept sparse (use updateParameters).
function IndexLinear:getParameters()
  error('nn.IndexLinear:getParameters: the weight gradient is kept sparse and cannot be flattened; '
        .. 'update with module:updateParameters(lr) or accUpdateGradParameters', 2)
end

-- the gradients of the input's tensors, in order, for the graph (none without doGradInput;
-- none for keys and sizes): each value's is its key's weight row times the gradOutput of
-- its example
function IndexLinear:_input_grads(input, gradOutput)
  if not self.doGradInput then return {} end
  local rows, _, example, _, layout = self:_entries(input)
  local g = batch_rows(gradOutput):to(self.weight.dtype)
  local per_value = (self.weight:index_select(1, rows) * g:index_select(1, example)):sum(2)
  if layout ~= 'table' then return {nil, per_value:view(input[2]:size()):to(input[2].dtype)} end
  local out, n, at = {}, #input[1], 1
  for k, v in ipairs(input[2]) do
    out[n + k] = per_value:narrow(1, at, v:numel()):view(v:size()):to(v.dtype)
    at = at + v:numel()
  end
  return out
end

local Plain = require 'nn._Plain7'
Plain.define_to(IndexLinear, {'weight', 'bias', 'gradBias', 'running'})
Plain.define_graph(IndexLinear)

function IndexLinear:extra_repr() return string.format('%d -> %d', self.inputSize, self.outputSize) end

return IndexLinear
