local torch = require 'torch'

-- nn.AddConstant(c, inplace=false): x + c, c a number or a tensor that broadcasts
-- to x (Torch7: a vector of x's last size). With inplace, forward adds c to x
-- itself and the output is x; backward gives x its values back (Torch7 subtracted
-- c again, off by a rounding; here they are the saved values, exactly).
local AddConstant, Module = torch.class('nn.AddConstant', 'nn.Module')

function AddConstant:__init(c, inplace)
  Module.__init(self)
  if torch.is_tensor(c) and c:numel() == 1 then c = c:item() end   -- Torch7's squeeze() of one value
  if type(c) ~= 'number' and not torch.is_tensor(c) then
    error('nn.AddConstant: expected a number or a tensor, got ' .. torch.type(c), 3)
  end
  if inplace ~= nil and type(inplace) ~= 'boolean' then
    error('nn.AddConstant: the in-place flag must be a boolean, got ' .. torch.type(inplace), 3)
  end
  self.constant_scalar = c
  self.inplace = inplace or false
end

-- c in a form that adds to x (a tensor constant converted to x's type)
local function constant_for(self, x)
  local c = self.constant_scalar
  if not torch.is_tensor(x) then
    error('nn.AddConstant: expected a tensor input, got ' .. torch.type(x), 4)
  end
  if torch.is_tensor(c) then
    local fits = c:dim() <= x:dim()
    for i = 1, c:dim() do
      if fits and c:size(-i) ~= 1 and c:size(-i) ~= x:size(-i) then fits = false end
    end
    if not fits then
      error(string.format('nn.AddConstant: constant of size %s does not fit input of size %s',
                          tostring(c:size()), tostring(x:size())), 4)
    end
    return c:to(x.dtype)
  end
  return c
end

function AddConstant:updateOutput(x)
  local c = constant_for(self, x)
  if self.inplace and not x.requires_grad then
    self._before = torch.is_tensor(self._before) and self._before:resize_(x:size()):copy_(x) or x:clone()
    x:add_(c)
    self.output = x
  else
    self.output = x + c
  end
  return self.output
end

function AddConstant:updateGradInput(x, gradOutput)
  if self.inplace and not x.requires_grad then
    self.gradInput = gradOutput
    local before = self._before
    if torch.is_tensor(before) and before:numel() == x:numel() then x:copy_(before:view(x:size())) end
  else
    self.gradInput = gradOutput:clone()
  end
  return self.gradInput
end

function AddConstant:extra_repr()
  return torch.is_tensor(self.constant_scalar) and 'tensor' or tostring(self.constant_scalar)
end

return AddConstant
