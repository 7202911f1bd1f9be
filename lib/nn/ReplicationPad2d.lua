local pad_class = require 'nn._PadNd'

-- nn.ReplicationPad2d(p or {left, right, top, bottom}): pads the last two dims by repeating
-- their edge values. Torch7: nn.SpatialReplicationPadding(l, r, t, b).
local ReplicationPad2d = pad_class('ReplicationPad2d', 'replicate', 'SpatialReplicationPadding')

return ReplicationPad2d
