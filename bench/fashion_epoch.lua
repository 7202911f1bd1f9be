-- fashion_epoch: one training epoch of the FashionMNIST MLP (784-256-256-10, ReLU,
-- Dropout 0.2), the examples/fashion_mnist_mlp.lua model; the loop and the model are
-- bench/common/epoch_loop.lua's.
-- Also prints (NOTE) how close the epoch comes to the time its matrix products alone
-- take at this machine's GEMM rate.
local loop = dofile((arg[0]:match('(.*/)') or './') .. 'common/epoch_loop.lua')
local seconds = loop.run(loop.mlp)

-- Multiply-adds per sample: forward and weight gradients of the three layers, input
-- gradients of all but the first (the images need none).
local forward = 784 * 256 + 256 * 256 + 256 * 10
local flops = 60000 * 2 * (3 * forward - 784 * 256)
local a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
a:mm(b)
local reps, t0 = 20, torch.clock()
for _ = 1, reps do a:mm(b) end
local rate = reps * 2 * 1024 ^ 3 / (torch.clock() - t0)
print(string.format('NOTE matrix products %.1f GFLOP: %.2f s at %.0f GFLOP/s (a 1024x1024 mm, %d thread(s)); ' ..
                    'the epoch reaches %.0f%% of that floor', flops / 1e9, flops / rate, rate / 1e9,
                    torch.getnumthreads(), 100 * flops / rate / seconds))
