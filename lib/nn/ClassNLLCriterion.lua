local C7 = require 'nn._Criterion7'

-- the log-probabilities as (N, C) and the checked labels (N) of a 1-D input (one sample:
-- a number, or a one-element tensor) or a 2-D input (a batch: one label per row); then
-- ignore when some label may equal it, else nil
local function batch_of(self, input, target, ignore)
  C7.input(self, input)
  if input:dim() ~= 1 and input:dim() ~= 2 then
    C7.fail(self, 'input must be 1-D (one sample) or 2-D (a batch), got size %s', C7.size_of(input))
  end
  local logp = input:dim() == 1 and input:view(1, -1) or input
  local t, ignoring = C7.classes(self, target, logp:size(1), logp:size(2), ignore)
  return logp, t, ignoring and ignore or nil
end

-- nn.ClassNLLCriterion(weights, sizeAverage=true, ignoreIndex=-100): Torch7's negative
-- log-likelihood of log-probabilities (a LogSoftMax output) at 1-based class labels:
-- -sum w[y] x[y] over the samples whose label is not ignoreIndex, divided by the sum of
-- their weights w[y] (1 each without weights) when sizeAverage. Input (C) with a number
-- label, or (N, C) with N labels (a tensor of integers, or whole numbers in a float tensor).
local ClassNLLCriterion = C7.define('ClassNLLCriterion', function(self, weights, sizeAverage, ignoreIndex)
  self.weights = C7.weights(self, weights)
  self.sizeAverage = C7.size_average(sizeAverage)
  self.ignoreIndex = ignoreIndex or -100
end, function(self, input, target)
  local logp, t, ignore = batch_of(self, input, target, self.ignoreIndex)
  if self.weights ~= nil and self.weights:numel() ~= logp:size(2) then
    C7.fail(self, 'weights must have one element per class (%d), got size %s', logp:size(2), C7.size_of(self.weights))
  end
  return C7.nll(logp, t, self.weights, ignore, self.sizeAverage)
end)
ClassNLLCriterion.batch_of = batch_of

-- the (N, C) log-probabilities the C closed form reads (a 1-D input as one row) and the
-- ignored label, or nil
local dim, view = torch._method('dim'), torch._method('view')
local is_tensor = torch.is_tensor
local function as_batch(self, input, target)
  local f = rawget(self, '_fields') or self
  local ignore = math.tointeger(f.ignoreIndex)
  if f.weights ~= nil or not is_tensor(target) or not is_tensor(input) or ignore == nil then return nil end
  local d = dim(input)
  if d == 2 then return input, ignore, f.sizeAverage end
  if d == 1 then return view(input, 1, -1), ignore, f.sizeAverage end
end

-- the loss and its gradient in C, each in one pass and from nothing forward kept
-- (torch._class_nll, _class_nll_grad): no class weights, every label in 1..C and none
-- ignored; nil for anything else, which the paths below take (and explain, when wrong)
function ClassNLLCriterion:_closed_loss(input, target)
  local logp, ignore, mean = as_batch(self, input, target)
  if logp ~= nil then return (torch._class_nll(logp, target, ignore, mean)) end
end
function ClassNLLCriterion:_closed_grad(input, target)
  local logp, ignore, mean = as_batch(self, input, target)
  local g = logp and torch._class_nll_grad(logp, target, ignore, mean)
  if g ~= nil and logp ~= input then return view(g, input:size()) end
  return g
end

-- the loss and its gradient in closed form (see _Criterion7) when no class is weighted or
-- ignored: -mean (or -sum) of the picked log-probabilities; the gradient is -1/N (or -1)
-- at each sample's label, 0 elsewhere. In Lua, for what the C forms decline (tensors off
-- the CPU): the loss and a function that gives its gradient
function ClassNLLCriterion:_direct(input, target)
  if self.weights ~= nil then return nil end
  local logp, t, ignore = batch_of(self, input, target, self.ignoreIndex)
  if ignore ~= nil then return nil end
  local x, idx = logp:detach(), t:view(-1, 1)
  local n, mean = x:size(1), self.sizeAverage and t:numel() > 0
  local picked = x:gather(2, idx)
  local loss = -(mean and picked:mean() or picked:sum()):item()
  return loss, function()
    local g = torch.zeros_like(x)
    g:scatter_(2, idx, mean and -1 / n or -1)
    return input:dim() == 1 and g:view(input:size()) or g
  end
end

-- #crit: the number of class weights (0 without)
function ClassNLLCriterion:__len() return self.weights and self.weights:numel() or 0 end

return ClassNLLCriterion
