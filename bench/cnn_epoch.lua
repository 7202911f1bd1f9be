-- cnn_epoch: one training epoch of examples/fashion_mnist_cnn.lua's CNN (conv 1->32, BN,
-- ReLU, max-pool; conv 32->64, BN, ReLU, max-pool; Linear 3136-128, ReLU, Dropout 0.3,
-- Linear 128-10); the loop and the model are bench/common/epoch_loop.lua's.
local loop = dofile((arg[0]:match('(.*/)') or './') .. 'common/epoch_loop.lua')
loop.run(loop.cnn)
