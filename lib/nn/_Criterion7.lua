-- The builder of Torch7's criteria and the checks they share: crit:forward(input, target)
-- gives the loss as a Lua number, crit:backward(input, target) the gradient of the input,
-- both from one differentiable loss function per criterion (autograd gives the gradient).
local torch = require 'torch'
local nn = require 'nn'

local Criterion7 = {}

-- ---- errors, at the caller's line ----

-- Criterion7.fail(self, fmt, ...): an error naming the criterion (nn.MSECriterion: ...)
function Criterion7.fail(self, fmt, ...)
  error(torch.typename(self) .. ': ' .. string.format(fmt, ...), torch._caller_level())
end
local fail = Criterion7.fail

local function size_of(x)
  if torch.is_tensor(x) then
    local parts = {}
    for i = 1, x:dim() do parts[i] = tostring(x:size(i)) end
    return #parts == 0 and '[] (0-dim)' or table.concat(parts, 'x')
  end
  return type(x)
end
Criterion7.size_of = size_of

-- Criterion7.input(self, x, what): x, checked to be a floating point tensor
function Criterion7.input(self, x, what)
  what = what or 'input'
  if not torch.is_tensor(x) then fail(self, '%s must be a tensor, got %s', what, type(x)) end
  if not x:is_floating_point() then
    fail(self, '%s must be a floating point tensor, got %s of size %s', what, x.dtype, size_of(x))
  end
  return x
end

-- Criterion7.pair(self, x, y): the input and a target of as many elements (a number for a
-- one-element input), the target read in the input's shape and dtype, as Torch7's
-- elementwise criteria do.
function Criterion7.pair(self, x, y)
  Criterion7.input(self, x)
  if type(y) == 'number' then
    if x:numel() ~= 1 then fail(self, 'a number target needs a one-element input, got input of size %s', size_of(x)) end
    return x, torch.full(x:size(), y, {dtype = x.dtype})
  end
  if not torch.is_tensor(y) then fail(self, 'target must be a tensor, got %s', type(y)) end
  if y:numel() ~= x:numel() then
    fail(self, 'input of size %s and target of size %s differ in number of elements', size_of(x), size_of(y))
  end
  if y.dtype ~= x.dtype then y = y:to(x.dtype) end
  if y:dim() ~= x:dim() or y:size() ~= x:size() then y = y:reshape(x:size()) end
  return x, y
end

-- Criterion7.signs(self, y, x): a target of 1s and -1s as a tensor of x's dtype and shape
-- (checked: it picks one of two formulas)
function Criterion7.signs(self, y, x)
  local _, t = Criterion7.pair(self, x, y)
  if t:numel() > 0 and not t:eq(1):logical_or(t:eq(-1)):all():item() then
    fail(self, 'target values must be 1 or -1')
  end
  return t
end

-- Criterion7.weights(self, w, what): a 1-D weight tensor, or nil
function Criterion7.weights(self, w, what)
  if w == nil then return nil end
  if not torch.is_tensor(w) or w:dim() ~= 1 then
    fail(self, '%s must be a 1-D tensor, got %s', what or 'weights', size_of(w))
  end
  return w
end

-- Criterion7.reduce(self, loss, count): the sum of loss, divided by count when sizeAverage
function Criterion7.reduce(self, loss, count)
  local total = loss:sum()
  if self.sizeAverage and count > 0 then return total / count end
  return total
end

-- ---- class targets (1-based) ----

-- Criterion7.labels(self, target, n): n class labels as an int64 vector, from a number,
-- or a tensor of n elements (integers or whole floats)
function Criterion7.labels(self, target, n)
  local t = target
  if type(t) == 'number' then
    if math.tointeger(t) == nil then fail(self, 'class label %s is not a whole number', tostring(t)) end
    t = torch.tensor({math.tointeger(t)}, {dtype = 'int64'})
  elseif not torch.is_tensor(t) then
    fail(self, 'target must be a tensor of class labels or a number, got %s', type(t))
  elseif t:is_floating_point() then
    if t:numel() > 0 and not t:eq(t:floor()):all():item() then
      fail(self, 'class labels must be whole numbers, got a fraction in a target of size %s', size_of(t))
    end
    t = t:long()
  elseif t.dtype ~= 'int64' then
    t = t:long()
  end
  if t:numel() ~= n then
    fail(self, 'expected %d class label%s, got %s', n, n == 1 and '' or 's',
         torch.is_tensor(target) and 'a target of size ' .. size_of(target) or 'one number')
  end
  return (t:reshape(n))
end

-- Criterion7.check_labels(self, t, classes, used): t, whose labels (those where the bool
-- tensor used is true, or all) lie in 1..classes
function Criterion7.check_labels(self, t, classes, used)
  local checked = used and t:masked_select(used) or t
  if checked:numel() > 0 then
    local lo, hi = checked:min():item(), checked:max():item()
    if lo < 1 or hi > classes then
      fail(self, 'class label %d is out of range 1..%d (class labels are 1-based)', lo < 1 and lo or hi, classes)
    end
  end
  return t
end

-- Criterion7.classes(self, target, n, classes, ignore): n labels 1..classes as an int64
-- vector; labels equal to ignore pass unchecked. The second result says whether some
-- label may equal ignore (false: none does, the common case, told by the labels'
-- range alone).
function Criterion7.classes(self, target, n, classes, ignore)
  local t = Criterion7.labels(self, target, n)
  if t:numel() == 0 then return t, false end
  local lo, hi = t:min():item(), t:max():item()
  if lo >= 1 and hi <= classes and (ignore == nil or ignore < lo or ignore > hi) then return t, false end
  return Criterion7.check_labels(self, t, classes, ignore and t:ne(ignore) or nil), ignore ~= nil
end

-- Criterion7.nll(logp, t, weights, ignore, size_average): Torch7's class negative
-- log-likelihood of log-probabilities logp (N, C) at labels t (N): -sum w[t] logp[t] over
-- the labels not ignored, divided by the sum of their weights when size_average (and that
-- sum is not 0).
function Criterion7.nll(logp, t, weights, ignore, size_average)
  local kept = ignore and t:ne(ignore) or nil
  local safe = kept and torch.where(kept, t, 1) or t
  local w
  if weights ~= nil then
    w = weights:to(logp.dtype):index_select(1, safe)
    if kept then w = w * kept:to(logp.dtype) end
  elseif kept then
    w = kept:to(logp.dtype)
  end
  local picked = logp:gather(2, safe:view(-1, 1)):view(-1)
  if w == nil and size_average and t:numel() > 0 then return -picked:mean() end
  local loss = w and -(picked * w):sum() or -picked:sum()
  if size_average then
    local total = w and w:sum():item() or t:numel()
    if total ~= 0 then loss = loss / total end
  end
  return loss
end

-- ---- the class ----

local function leaves(v)
  if torch.is_tensor(v) then
    if v:is_floating_point() then return v:detach():requires_grad_() end
    return v
  elseif type(v) == 'table' and getmetatable(v) == nil then
    local out = {}
    for k, x in pairs(v) do out[k] = leaves(x) end
    return out
  end
  return v
end

local function flat(v, out)
  if torch.is_tensor(v) then
    if v.requires_grad then out[#out + 1] = v end
  elseif type(v) == 'table' and getmetatable(v) == nil then
    for _, x in ipairs(v) do flat(x, out) end
  end
  return out
end

-- the structure of v with each differentiable tensor replaced by its gradient (zeros when
-- the loss does not reach it)
local function rebuild(v, grads, pos)
  if torch.is_tensor(v) then
    if not v.requires_grad then return torch.zeros_like(v) end
    pos[1] = pos[1] + 1
    return grads[pos[1]] or torch.zeros_like(v)
  end
  local out = {}
  for i, x in ipairs(v) do out[i] = rebuild(x, grads, pos) end
  return out
end

-- Criterion7.gradient(lossfn, input): d lossfn(input) / d input, a tensor or a table
-- like input, without history
function Criterion7.gradient(lossfn, input)
  return torch.enable_grad(function()
    local x = leaves(input)
    local loss = lossfn(x)
    local xs = flat(x, {})
    local grads = {}
    if #xs > 0 and torch.is_tensor(loss) and loss.requires_grad then
      grads = torch.autograd.grad({loss}, xs, {allow_unused = true})
    end
    return rebuild(x, grads, {0})
  end)
end

-- the number of a loss (a 0-dim tensor, or already a number)
function Criterion7.number(loss)
  if torch.is_tensor(loss) then return loss:item() end
  return loss
end

-- Criterion7.zeros(v): zeros in the structure of v (a tensor, or a table of them)
function Criterion7.zeros(v)
  return rebuild(v, {}, {0})
end

-- ---- the containers' pieces ----

-- Criterion7.scaled(g, w): w g for a gradient g (a tensor, or a table of them)
function Criterion7.scaled(g, w)
  if torch.is_tensor(g) then return w == 1 and g or g * w end
  local out = {}
  for i, x in ipairs(g) do out[i] = Criterion7.scaled(x, w) end
  return out
end

-- Criterion7.add_scaled(a, w, b): a + w b for gradients alike (a may be nil)
function Criterion7.add_scaled(a, w, b)
  if a == nil then return Criterion7.scaled(b, w) end
  if torch.is_tensor(a) then return a + b * w end
  local out = {}
  for i, x in ipairs(a) do out[i] = Criterion7.add_scaled(x, w, b[i]) end
  return out
end

-- Criterion7.check_add(self, criterion, weight): the weight (1 by default) of a criterion
-- added to a container, both checked
function Criterion7.check_add(self, criterion, weight)
  if not nn.is_module(criterion) or type(criterion.forward) ~= 'function' then
    fail(self, 'add: expected a criterion, got %s', torch.type(criterion))
  end
  if weight ~= nil and type(weight) ~= 'number' then
    fail(self, 'add: the weight must be a number, got %s', type(weight))
  end
  return weight or 1
end

local methods = {}

-- the tensors of a value (a tensor or a table of them) and their version counters
local function versions(v, out)
  if torch.is_tensor(v) then out[#out + 1] = v._version
  elseif type(v) == 'table' and getmetatable(v) == nil then
    for _, x in ipairs(v) do versions(x, out) end
  end
  return out
end
local function same_list(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end

-- A criterion whose class has _closed_loss(self, input, target) and _closed_grad(...)
-- computes them from nothing else (a number, a tensor; nil leaves the case to what follows).
-- Torch7's loop calls forward, then backward on the same input and target: forward keeps
-- what backward needs -- the loss's graph (on leaves of the input), or, for a criterion
-- whose class has _direct, the function that gives the gradient in closed form -- so that
-- backward does not compute the loss again, when neither input nor target has changed since
-- (same objects, same version counters). Weak keys: a criterion's entry goes with it.
-- _direct(self, input, target) gives the loss as a number and that function, or nothing for
-- the cases it leaves to the graph.
local last_forward = setmetatable({}, {__mode = 'k'})

-- entry, stamped with the call it was made for
local function remember(self, entry, input, target)
  entry.input, entry.target = input, target
  entry.versions = versions(target, versions(input, {}))
  last_forward[self] = entry
end

-- forward's entry when backward is called on the same input and target, unchanged since
local function recall(self, input, target)
  local e = last_forward[self]
  last_forward[self] = nil
  if e and rawequal(e.input, input) and rawequal(e.target, target)
     and same_list(e.versions, versions(target, versions(input, {}))) then
    return e
  end
end

-- self[k] = v for a plain field (output, gradInput), straight into the module's values
local function set_plain(self, k, v)
  local f = rawget(self, '_fields')
  if f ~= nil then f[k] = v else self[k] = v end
end

-- crit:updateOutput(input, target) / crit:forward(input, target): the loss as a number,
-- kept in crit.output
function methods:updateOutput(input, target)
  last_forward[self] = nil
  local closed = self._closed_loss
  if closed ~= nil then
    local loss = closed(self, input, target)
    if loss ~= nil then
      set_plain(self, 'output', loss)
      return loss
    end
  end
  local direct = self._direct
  if direct ~= nil then
    local loss, grad = direct(self, input, target)
    if loss ~= nil then
      remember(self, {grad = grad}, input, target)
      self.output = loss
      return loss
    end
  end
  if torch.is_grad_enabled() then
    local entry = torch.enable_grad(function()
      local x = leaves(input)
      return {x = x, loss = self:loss(x, target)}
    end)
    if torch.is_tensor(entry.loss) and entry.loss.requires_grad then remember(self, entry, input, target) end
    self.output = Criterion7.number(entry.loss)
    return self.output
  end
  local loss = torch.no_grad(function() return self:loss(input, target) end)
  self.output = Criterion7.number(loss)
  return self.output
end

-- crit:updateGradInput(input, target) / crit:backward(input, target): d loss / d input,
-- kept in crit.gradInput
function methods:updateGradInput(input, target)
  local closed = self._closed_grad
  if closed ~= nil then
    local g = closed(self, input, target)
    if g ~= nil then
      last_forward[self] = nil
      set_plain(self, 'gradInput', g)
      return g
    end
  end
  local e = recall(self, input, target)
  if e and e.grad then
    self.gradInput = e.grad()
  elseif e then
    local xs = flat(e.x, {})
    local grads = torch.autograd.grad({e.loss}, xs, {allow_unused = true})
    self.gradInput = rebuild(e.x, grads, {0})
  else
    self.gradInput = Criterion7.gradient(function(x) return self:loss(x, target) end, input)
  end
  return self.gradInput
end

function methods:forward(input, target) return self:updateOutput(input, target) end
function methods:backward(input, target) return self:updateGradInput(input, target) end

-- crit(input, target): the loss as a 0-dim tensor on the autograd graph (loss:backward()
-- works), as PyTorch's criteria give it
local function loss_of(self, input, target) return self:loss(input, target) end
function methods.__call(self, input, target) return nn.Module._guarded_call(self, loss_of, input, target) end

-- Criterion7.define(name, init, loss, parent): defines nn.<name>, a subclass of parent
-- (nn.Criterion by default) with Torch7's forward/backward; init(self, ...) reads the
-- constructor's arguments (after the parent's own __init with none), loss(self, input,
-- target) computes the loss as a differentiable 0-dim tensor.
function Criterion7.define(name, init, loss, parent)
  local cls, super = torch.class('nn.' .. name, parent or 'nn.Criterion')
  local base_init = parent and super.__init or nn.Criterion.__init
  function cls:__init(...)
    base_init(self)
    self.output = 0
    self.gradInput = torch.Tensor()
    if self.sizeAverage == nil then self.sizeAverage = true end
    if init then init(self, ...) end
  end
  for k, f in pairs(methods) do cls[k] = f end
  cls.loss = loss
  return cls
end

-- Torch7's sizeAverage argument: true unless false is given
function Criterion7.size_average(v)
  return v ~= false
end

return Criterion7
