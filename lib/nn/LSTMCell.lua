local RNNBase = require 'nn._RNNBase'

-- nn.LSTMCell(input_size, hidden_size, {bias=true}): returns h', c'.
return RNNBase.cell('LSTM')
