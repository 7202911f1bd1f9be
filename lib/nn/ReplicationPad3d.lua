local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'
local t7 = require 'nn._Torch7Params'

-- nn.ReplicationPad3d(p or {left, right, top, bottom, front, back}): pads the last three dims
-- of (N, C, T, H, W) or (C, T, H, W) input by repeating their edge values (W by left and
-- right, H by top and bottom, T by front and back); negative pads crop.
local ReplicationPad3d, Module = torch.class('nn.ReplicationPad3d', 'nn.Module')

function ReplicationPad3d:__init(p)
  Module.__init(self)
  self.pads = math.type(p) == 'integer' and {p, p, p, p, p, p} or p
  local ok = type(self.pads) == 'table' and #self.pads == 6
  for i = 1, 6 do ok = ok and math.type(self.pads[i]) == 'integer' end
  if not ok then
    error('nn.ReplicationPad3d: padding must be an integer or {left, right, top, bottom, front, back}, got '
          .. t7.show(p), 3)
  end
end

function ReplicationPad3d:updateOutput(x) return F.pad(x, self.pads, {mode = 'replicate'}) end

function ReplicationPad3d:extra_repr() return '{' .. table.concat(self.pads, ', ') .. '}' end

-- Torch7: nn.VolumetricReplicationPadding(pleft, pright=pleft, ptop=pleft, pbottom=pleft,
-- pfront=pleft, pback=pleft): an nn.ReplicationPad3d.
function nn.VolumetricReplicationPadding(l, r, t, b, f, k)
  return nn.ReplicationPad3d({l, r or l, t or l, b or l, f or l, k or l})
end

return ReplicationPad3d
