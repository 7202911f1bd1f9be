# amp_cnn_epoch: one training epoch of the FashionMNIST CNN in PyTorch, the forward and the loss in a bfloat16 autocast region, as amp_cnn_epoch.lua;
# the loop and the model are bench/common/epoch_loop.py's.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
import epoch_loop

epoch_loop.run(epoch_loop.cnn, amp=True)
