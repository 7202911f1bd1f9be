# fashion_epoch: one training epoch of the FashionMNIST MLP in PyTorch, the model of
# fashion_epoch.lua; the loop is bench/common/epoch_loop.py.
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
import torch.nn as nn
import epoch_loop

epoch_loop.run(lambda: nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
                                     nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10)))
