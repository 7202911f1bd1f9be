-- fashion_epoch: one training epoch of the FashionMNIST MLP (784-256-256-10, ReLU,
-- Dropout 0.2), the examples/fashion_mnist_mlp.lua model; the loop is bench/common/epoch_loop.lua.
dofile((arg[0]:match('(.*/)') or './') .. 'common/epoch_loop.lua')(function(nn)
  return nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
                       nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
end)
