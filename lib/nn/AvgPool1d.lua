local F = require 'nn.functional'
local pool_class = require 'nn._PoolNd'

-- nn.AvgPool1d(kernel_size, {stride=kernel_size, padding=0, ceil_mode=false,
-- count_include_pad=true}) of (N, C, L) or (C, L).
local AvgPool1d = pool_class('AvgPool1d', F.avg_pool1d)

return AvgPool1d
