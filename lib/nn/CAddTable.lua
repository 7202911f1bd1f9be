local Table = require 'nn._Table'

-- nn.CAddTable(ip): the elementwise sum of the input tensors (all of one shape).
-- ip (Torch7's in-place flag, kept in self.inplace) changes nothing here: the
-- output is always a new tensor, so the inputs stay as they were for backward.
return Table.elementwise('CAddTable', nil, function(a, b) return a + b end,
  function(self, ip) self.inplace = ip == true end)
