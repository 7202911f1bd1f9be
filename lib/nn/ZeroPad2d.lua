local pad_class = require 'nn._PadNd'

-- nn.ZeroPad2d(p or {left, right, top, bottom}): zeros around the last two dims.
-- Torch7: nn.SpatialZeroPadding(l, r, t, b).
local ZeroPad2d = pad_class('ZeroPad2d', 'constant', 'SpatialZeroPadding')

return ZeroPad2d
