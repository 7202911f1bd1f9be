local RNNBase = require 'nn._RNNBase'

-- nn.RNN(input_size, hidden_size, {num_layers=1, nonlinearity='tanh', bias=true,
-- batch_first=false, dropout=0, bidirectional=false}): output, h_n = rnn(x, h0).
return RNNBase.layer('RNN')
