local torch = require 'torch'

-- nn.Collapse(nInputDim): x flattened to a vector, or to (batch, features) when x has
-- more than nInputDim dims.
local Collapse, Module = torch.class('nn.Collapse', 'nn.Module')
function Collapse:__init(n_input_dim)
  Module.__init(self)
  if math.type(n_input_dim) ~= 'integer' then
    error('nn.Collapse: expected the integer nInputDim, got ' .. tostring(n_input_dim), 3)
  end
  self.nInputDim = n_input_dim
end
function Collapse:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Collapse: expected a tensor input, got ' .. torch.type(x), 3) end
  if x:dim() > self.nInputDim then return (x:reshape(x:size(1), -1)) end
  return (x:reshape(-1))
end
function Collapse:extra_repr() return 'nInputDim=' .. self.nInputDim end

return Collapse
