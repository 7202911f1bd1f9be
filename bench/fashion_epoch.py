# fashion_epoch: one training epoch of the FashionMNIST MLP in PyTorch, as fashion_epoch.lua;
# the loop and the model are bench/common/epoch_loop.py's.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
import epoch_loop

epoch_loop.run(epoch_loop.mlp)
