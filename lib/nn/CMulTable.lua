local Table = require 'nn._Table'

-- nn.CMulTable(): the elementwise product of the input tensors (all of one shape).
return Table.elementwise('CMulTable', nil, function(a, b) return a * b end)
