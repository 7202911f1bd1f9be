local F = require 'nn.functional'
local dropout_class = require 'nn._DropoutNd'

-- nn.Dropout(p=0.5): in training, zeroes each element with probability p and scales
-- the rest by 1/(1-p); in evaluation (model:eval()) the identity.
return dropout_class('Dropout', F.dropout)
