local torch = require 'torch'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.Fold(output_size, kernel_size, {dilation=1, padding=0, stride=1}): F.fold, columns
-- (N, C * kh * kw, L) summed back into (N, C, out_h, out_w).
local Fold, Module = torch.class('nn.Fold', 'nn.Module')
function Fold:__init(size, kernel, opts)
  Module.__init(self)
  self.output_size, self.kernel_size, self.opts = size, kernel, opts or {}
end
function Fold:updateOutput(x) return F.fold(x, self.output_size, self.kernel_size, self.opts) end
function Fold:extra_repr()
  return 'output_size=' .. helpers.show(self.output_size) .. ', kernel_size=' .. helpers.show(self.kernel_size)
end

return Fold
