local torch = require 'torch'
local fail = require('nn._Criterion7').fail   -- an error naming the module, at the caller's line

-- nn.WhiteNoise(mean=0, std=0.1): in training, x plus Gaussian noise of that mean and
-- standard deviation (drawn anew each forward); in evaluation, x + mean. The gradient
-- passes through unchanged.
local WhiteNoise, parent = torch.class('nn.WhiteNoise', 'nn.Module')
function WhiteNoise:__init(mean, std)
  parent.__init(self)
  mean, std = mean or 0, std or 0.1
  if type(mean) ~= 'number' or type(std) ~= 'number' or std < 0 then
    error(string.format('nn.WhiteNoise: expected a number mean and a std >= 0, got %s and %s', tostring(mean),
                        tostring(std)), 3)
  end
  self.mean, self.std = mean, std
end

function WhiteNoise:updateOutput(input)
  if not torch.is_tensor(input) or not input:is_floating_point() then
    fail(self, '%s', 'expected a floating point tensor, got ' .. torch.type(input))
  end
  local x = input:detach()
  if self.training then
    self.noise = torch.empty(x:size(), {dtype = x.dtype, device = x.device}):normal_(self.mean, self.std)
    self.output = x + self.noise
  else
    self.output = self.mean ~= 0 and x + self.mean or x:clone()
  end
  return self.output
end

function WhiteNoise:updateGradInput(input, gradOutput)
  self.gradInput = gradOutput:detach():clone()
  return self.gradInput
end

function WhiteNoise:extra_repr() return string.format('mean=%g, std=%g', self.mean, self.std) end

return WhiteNoise
