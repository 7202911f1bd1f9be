local RNNBase = require 'nn._RNNBase'

-- nn.RNNCell(input_size, hidden_size, {bias=true, nonlinearity='tanh'}): h' = tanh(W_ih x + b_ih + W_hh h + b_hh).
return RNNBase.cell('RNN')
