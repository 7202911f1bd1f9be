local Table = require 'nn._Table'

-- nn.CSubTable(): input[1] - input[2], elementwise (two tensors of one shape).
return Table.elementwise('CSubTable', 2, function(a, b) return a - b end)
