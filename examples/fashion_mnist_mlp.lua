-- examples/fashion_mnist_mlp.lua: the FashionMNIST classifier, an MLP, in moontorch.
-- An MLP (784-256-256-10, ReLU, Dropout 0.2) trained with Adam (lr 1e-3) and
-- cross-entropy on batches of 64; train loss/accuracy and test loss/accuracy
-- each epoch; a checkpoint at the end (the loop: examples/fashion_train.lua).
--   th examples/fashion_mnist_mlp.lua --epochs 10 --batch-size 64 --lr 1e-3 --workers 0 --threads 1
--   th examples/fashion_mnist_mlp.lua --device cuda     (on a GPU)
local train = dofile((arg[0]:match('(.*/)') or './') .. 'fashion_train.lua')

local opt = train.options('Train an MLP on FashionMNIST', 'fashion_mnist_mlp.t7', 10)
train.run(opt, train.mlp)
