local torch = require 'torch'

-- nn.Sqrt(eps): the square root of x. Its gradient is 0.5 * gradOutput / sqrt(x),
-- and 0 where sqrt(x) is 0 (Torch7's, where the derivative is infinite). eps is
-- kept in self.eps and, as in Torch7, does not enter the computation.
local Sqrt, Module = torch.class('nn.Sqrt', 'nn.Module')

function Sqrt:__init(eps)
  Module.__init(self)
  if eps ~= nil and type(eps) ~= 'number' then error('nn.Sqrt: expected a number, got ' .. torch.type(eps), 3) end
  self.eps = eps or 0
end

function Sqrt:updateOutput(x)
  if not torch.is_tensor(x) then error('nn.Sqrt: expected a tensor input, got ' .. torch.type(x), 3) end
  self.output = torch.sqrt(x)
  return self.output
end

function Sqrt:updateGradInput(x, gradOutput)
  if not torch.is_tensor(x) then error('nn.Sqrt: expected a tensor input, got ' .. torch.type(x), 3) end
  local out = torch.sqrt(x:detach())        -- of this input (the module may have run on others since)
  if not torch.is_tensor(gradOutput) or gradOutput:numel() ~= out:numel() then
    error(string.format('nn.Sqrt: gradOutput %s does not match the output of size %s',
                        torch.is_tensor(gradOutput) and 'of size ' .. tostring(gradOutput:size()) or torch.type(gradOutput),
                        tostring(out:size())), 3)
  end
  out, gradOutput = out:reshape(x:size()), gradOutput:reshape(x:size())
  local zero = out:eq(0)
  self.gradInput = torch.where(zero, torch.zeros_like(out), gradOutput * 0.5 / out:masked_fill(zero, 1))
  return self.gradInput
end

return Sqrt
