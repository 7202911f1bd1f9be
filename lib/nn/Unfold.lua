local torch = require 'torch'
local F = require 'nn.functional'
local helpers = require 'nn._helpers'

-- nn.Unfold(kernel_size, {dilation=1, padding=0, stride=1}): F.unfold, the sliding blocks of
-- (N, C, H, W) as columns (N, C * kh * kw, L).
local Unfold, Module = torch.class('nn.Unfold', 'nn.Module')
function Unfold:__init(kernel, opts)
  Module.__init(self)
  self.kernel_size, self.opts = kernel, opts or {}
end
function Unfold:updateOutput(x) return F.unfold(x, self.kernel_size, self.opts) end
function Unfold:extra_repr() return 'kernel_size=' .. helpers.show(self.kernel_size) end

return Unfold
