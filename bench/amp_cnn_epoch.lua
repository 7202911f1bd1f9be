-- amp_cnn_epoch: one training epoch of the FashionMNIST CNN with the forward and the loss in
-- a bfloat16 autocast region (the examples' --amp); compare with cnn_epoch, the same epoch in
-- float32. NOTE: which kernel computed the bfloat16 products.
local loop = dofile((arg[0]:match('(.*/)') or './') .. 'common/epoch_loop.lua')
print(('NOTE amp: bfloat16 products on %s'):format(torch._gemm_kernel('bfloat16')))
loop.run(loop.cnn, {amp = true})
