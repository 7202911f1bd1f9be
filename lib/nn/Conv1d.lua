local F = require 'nn.functional'
local conv_class = require 'nn._ConvNd'

-- nn.Conv1d(in_channels, out_channels, kernel_size, opts): on (N, C, L).
return conv_class('Conv1d', 1, F.conv1d)
