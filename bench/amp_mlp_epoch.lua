-- amp_mlp_epoch: one training epoch of the FashionMNIST MLP (784-256-256-10) with the forward and the loss in
-- a bfloat16 autocast region (the examples' --amp); compare with fashion_epoch, the same epoch in
-- float32. NOTE: which kernel computed the bfloat16 products.
local loop = dofile((arg[0]:match('(.*/)') or './') .. 'common/epoch_loop.lua')
print(('NOTE amp: bfloat16 products on %s'):format(torch._gemm_kernel('bfloat16')))
loop.run(loop.mlp, {amp = true})
