local Table = require 'nn._Table'

-- nn.CMaxTable(): the elementwise maximum of the input tensors (all of one shape);
-- the gradient goes to the input holding the maximum.
return Table.elementwise('CMaxTable', nil, function(a, b) return a:cmax(b) end)
