local pad_class = require 'nn._PadNd'

-- nn.CircularPad2d(p or {left, right, top, bottom}): pads the last two dims with the input
-- wrapped around (the columns past the right edge are the first ones; each pad at most that dim).
local CircularPad2d = pad_class('CircularPad2d', 'circular')

return CircularPad2d
