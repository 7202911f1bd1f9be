local RNNBase = require 'nn._RNNBase'

-- nn.LSTM(input_size, hidden_size, opts): output, {h_n, c_n} = lstm(x, {h0, c0}).
return RNNBase.layer('LSTM')
