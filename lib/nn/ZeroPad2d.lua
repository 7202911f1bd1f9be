local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- nn.ZeroPad2d(p or {left, right, top, bottom}). Torch7: nn.SpatialZeroPadding(l, r, t, b).
local ZeroPad2d, Module = torch.class('nn.ZeroPad2d', 'nn.Module')
function ZeroPad2d:__init(p)
  Module.__init(self)
  self.pads = type(p) == 'number' and {p, p, p, p} or p
end
function ZeroPad2d:updateOutput(x) return F.pad(x, self.pads) end
function ZeroPad2d:extra_repr() return '{' .. table.concat(self.pads, ', ') .. '}' end
function nn.SpatialZeroPadding(l, r, t, b) return nn.ZeroPad2d({l, r or l, t or l, b or l}) end

return ZeroPad2d
