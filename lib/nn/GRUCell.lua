local RNNBase = require 'nn._RNNBase'

-- nn.GRUCell(input_size, hidden_size, {bias=true}): returns h'.
return RNNBase.cell('GRU')
