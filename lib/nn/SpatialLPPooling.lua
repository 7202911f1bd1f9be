local torch = require 'torch'
-- fail(self, fmt, ...): an error naming the module, at the caller's line
local fail = require('nn._Criterion7').fail
local F = require 'nn.functional'

-- nn.SpatialLPPooling(nInputPlane, pnorm, kW, kH, dW=kW, dH=kH): the p-norm of each kW x kH
-- window of (C, H, W) or (N, C, H, W), step dW x dH: (sum over the window of x^p)^(1/p), p = pnorm
-- (p = 2: the square root of the sum of squares). As Torch7's, x^p is taken as it is (no
-- absolute value): an odd or fractional p wants non-negative inputs. No parameters.
local SpatialLPPooling, Module = torch.class('nn.SpatialLPPooling', 'nn.Module')
function SpatialLPPooling:__init(nInputPlane, pnorm, kw, kh, dw, dh)
  Module.__init(self)
  if type(pnorm) ~= 'number' or pnorm == 0 then
    fail(self, 'pnorm must be a non-zero number, got %s', tostring(pnorm))
  end
  for _, v in ipairs({{'kW', kw}, {'kH', kh}, {'dW', dw or kw}, {'dH', dh or kh}}) do
    if math.type(v[2]) ~= 'integer' or v[2] < 1 then
      fail(self, '%s must be a positive integer, got %s', v[1], tostring(v[2]))
    end
  end
  self.nInputPlane, self.pnorm = nInputPlane, pnorm
  self.kW, self.kH, self.dW, self.dH = kw, kh, dw or kw, dh or kh
end

function SpatialLPPooling:updateOutput(x)
  if not torch.is_tensor(x) or (x:dim() ~= 3 and x:dim() ~= 4) then
    fail(self, '%s', 'expected a 3-D or 4-D input ((N,) C, H, W), got '
         .. (torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x)))
  end
  local p = self.pnorm
  local powered = p == 2 and x * x or x:pow(p)
  local sums = F.avg_pool2d(powered, {self.kH, self.kW}, {stride = {self.dH, self.dW}, divisor_override = 1})
  if p == 2 then return (sums:sqrt()) end
  return (sums:pow(1 / p))
end

function SpatialLPPooling:extra_repr()
  return string.format('%s, %dx%d, %d,%d', tostring(self.pnorm), self.kW, self.kH, self.dW, self.dH)
end

return SpatialLPPooling
