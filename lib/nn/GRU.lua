local RNNBase = require 'nn._RNNBase'

-- nn.GRU(input_size, hidden_size, opts): output, h_n = gru(x, h0).
return RNNBase.layer('GRU')
