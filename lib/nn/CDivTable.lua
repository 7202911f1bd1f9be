local Table = require 'nn._Table'

-- nn.CDivTable(): input[1] / input[2], elementwise (two tensors of one shape).
return Table.elementwise('CDivTable', 2, function(a, b) return a / b end)
