-- examples/fashion_mnist_ddp.lua: the FashionMNIST MLP trained data-parallel over
-- several processes: the model in nn.DistributedDataParallel (gradients averaged
-- over the ranks during backward), each rank a disjoint share of every epoch
-- (data.DistributedSampler), rank 0 printing and writing the checkpoint (the loop:
-- examples/fashion_train.lua). --batch-size is per rank: 2 ranks of 32 take the
-- steps one process takes with batches of 64.
--   mpirun -np 2 th examples/fashion_mnist_ddp.lua --epochs 3 --batch-size 32 --threads 1
--   (as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun ...)
local train = dofile((arg[0]:match('(.*/)') or './') .. 'fashion_train.lua')

local opt = train.options('Train an MLP on FashionMNIST over the ranks mpirun starts', 'fashion_mnist_ddp.t7', 3)
opt.ddp = true
train.run(opt, train.mlp)
