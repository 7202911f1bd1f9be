local pad_class = require 'nn._PadNd'

-- nn.ReflectionPad2d(p or {left, right, top, bottom}): pads the last two dims with their
-- reflection about the edge (each pad less than that dim). Torch7: nn.SpatialReflectionPadding(l, r, t, b).
local ReflectionPad2d = pad_class('ReflectionPad2d', 'reflect', 'SpatialReflectionPadding')

return ReflectionPad2d
