local torch = require 'torch'

-- nn.MulConstant(c, inplace=false): x * c, c a number. With inplace, forward
-- multiplies x itself and the output is x; backward then multiplies gradOutput
-- by c in place, returns it and gives x its values back (Torch7 divided by c
-- again, off by a rounding; here they are the saved values, exactly).
local MulConstant, Module = torch.class('nn.MulConstant', 'nn.Module')

function MulConstant:__init(c, inplace)
  Module.__init(self)
  if torch.is_tensor(c) and c:numel() == 1 then c = c:item() end   -- Torch7's squeeze() of one value
  if type(c) ~= 'number' then error('nn.MulConstant: expected a number, got ' .. torch.type(c), 3) end
  if inplace ~= nil and type(inplace) ~= 'boolean' then
    error('nn.MulConstant: the in-place flag must be a boolean, got ' .. torch.type(inplace), 3)
  end
  self.constant_scalar = c
  self.inplace = inplace or false
end

local function check(x)
  if not torch.is_tensor(x) then error('nn.MulConstant: expected a tensor input, got ' .. torch.type(x), 4) end
end

function MulConstant:updateOutput(x)
  check(x)
  if self.inplace and not x.requires_grad then
    self._before = torch.is_tensor(self._before) and self._before:resize_(x:size()):copy_(x) or x:clone()
    x:mul_(self.constant_scalar)
    self.output = x
  else
    self.output = x * self.constant_scalar
  end
  return self.output
end

function MulConstant:updateGradInput(x, gradOutput)
  check(x)
  if self.inplace and not x.requires_grad and not gradOutput.requires_grad then
    gradOutput:mul_(self.constant_scalar)
    self.gradInput = gradOutput
    local before = self._before
    if torch.is_tensor(before) and before:numel() == x:numel() then x:copy_(before:view(x:size())) end
  else
    self.gradInput = gradOutput * self.constant_scalar
  end
  return self.gradInput
end

function MulConstant:extra_repr() return tostring(self.constant_scalar) end

return MulConstant
