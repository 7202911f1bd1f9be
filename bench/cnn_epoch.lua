-- cnn_epoch: one training epoch of examples/fashion_mnist_cnn.lua's CNN (conv 1->32, BN,
-- ReLU, max-pool; conv 32->64, BN, ReLU, max-pool; Linear 3136-128, ReLU, Dropout 0.3,
-- Linear 128-10); the loop is bench/common/epoch_loop.lua.
dofile((arg[0]:match('(.*/)') or './') .. 'common/epoch_loop.lua')(function(nn)
  return nn.Sequential(
    nn.Conv2d(1, 32, 3, {padding = 1}), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, {padding = 1}), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
end)
