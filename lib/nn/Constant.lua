local torch = require 'torch'

-- nn.Constant(value, nInputDim): value (a number or a tensor) whatever the input, one copy
-- per example when the input has more than nInputDim dims; no gradient reaches the input.
local Constant, Module = torch.class('nn.Constant', 'nn.Module')
function Constant:__init(value, n_input_dim)
  Module.__init(self)
  if type(value) == 'number' then value = torch.tensor({value}) end
  if not torch.is_tensor(value) then error('nn.Constant: expected a number or a tensor, got ' .. torch.type(value), 3) end
  self.value, self.nInputDim = value, n_input_dim
end
function Constant:updateOutput(x)
  local value = self.value
  if torch.is_tensor(x) then value = value:to(x.dtype) end
  if self.nInputDim and torch.is_tensor(x) and x:dim() > self.nInputDim then
    local sizes = value:size():totable()
    table.insert(sizes, 1, x:size(1))
    self.output = value:unsqueeze(1):expand(sizes):clone()
  else
    self.output = value:clone()
  end
  return self.output
end

-- no gradient reaches the input: zeros of its shape (Torch7's)
function Constant:updateGradInput(x)
  self.gradInput = torch.zeros_like(x)
  return self.gradInput
end

return Constant
