-- nn.Criterion: the base of the losses. Subclasses implement
-- updateOutput(input, target) returning a 0-dim tensor. `crit(input, target)`
-- and Torch7's crit:forward(input, target) give the loss (loss:backward()
-- works; only forward keeps it, in crit.output); crit:backward(input, target)
-- gives d loss / d input.
local torch = require 'torch'
local nn = require 'nn'

local Criterion, Module = torch.class('nn.Criterion', 'nn.Module')

function Criterion:__init()
  Module.__init(self)
end

-- crit(input, target): the loss, recorded for autograd; kept nowhere (as a module
-- called PyTorch's way: the loss would hold the whole graph alive).
local function loss_of(self, input, target, ...) return self:updateOutput(input, target, ...) end
function Criterion.__call(self, input, target, ...)
  return Module._guarded_call(self, loss_of, input, target, ...)    -- errors at the caller's line
end

local function as_leaf(v)
  if torch.is_tensor(v) then
    if v:is_floating_point() and not v.requires_grad then return v:detach():requires_grad_() end
    return v
  elseif type(v) == 'table' and getmetatable(v) == nil then
    local out = {}
    for k, x in pairs(v) do out[k] = as_leaf(x) end
    return out
  end
  return v
end

-- crit:forward(input, target): the loss, kept in self.output (Torch7's); input is made a
-- leaf that requires grad (when it does not) so that backward can give the gradient of
-- the input.
function Criterion:forward(input, target, ...)
  local x = input
  if torch.is_grad_enabled() then x = as_leaf(input) end
  rawset(self, '_t7_input', x)
  local out = self:updateOutput(x, target, ...)
  self.output = out
  return out
end

local function flat(v, out)
  out = out or {}
  if torch.is_tensor(v) then out[#out + 1] = v
  elseif type(v) == 'table' then for _, x in ipairs(v) do flat(x, out) end end
  return out
end

-- crit:backward(input, target): d loss / d input of the last forward (gradInput).
function Criterion:backward(input, target)
  local out = self.output
  local x = rawget(self, '_t7_input') or input
  if not torch.is_tensor(out) or not out.requires_grad then
    error(torch.typename(self) .. ':backward: call forward first, with an input that can carry a gradient', 2)
  end
  local xs = flat(x)
  local gs = torch.autograd.grad({out}, xs, {retain_graph = true, allow_unused = true})
  for i, t in ipairs(xs) do if gs[i] == nil then gs[i] = torch.zeros_like(t) end end
  local gi = torch.is_tensor(x) and gs[1] or gs
  self.gradInput = gi
  return gi
end
Criterion.updateGradInput = Criterion.backward

return Criterion
