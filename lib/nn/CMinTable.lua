local Table = require 'nn._Table'

-- nn.CMinTable(): the elementwise minimum of the input tensors (all of one shape);
-- the gradient goes to the input holding the minimum.
return Table.elementwise('CMinTable', nil, function(a, b) return a:cmin(b) end)
