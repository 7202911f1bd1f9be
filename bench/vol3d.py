# vol3d: the PyTorch side of bench/vol3d.lua
import os, sys, torch
import torch.nn.functional as F
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
from cases import ramp, timed, report, abs_sum

x = ramp((4, 8, 8, 32, 32), 0.37, 1).requires_grad_()
w = ramp((16, 8, 3, 3, 3), 0.71, 0.1).requires_grad_()
b = ramp((16,), 0.5, 0.1).requires_grad_()
g = ramp((4, 16, 8, 32, 32), 0.13, 1)
out = {}
def conv_step():
    x.grad = w.grad = b.grad = None
    out['y'] = F.conv3d(x, w, b, padding=1)
    out['y'].backward(g)
seconds = timed(9, conv_step)
y = out['y'].detach()
report('conv3d_8to16_k3_4x8x32x32', seconds, (y * y).sum().item(), abs_sum(w.grad), abs_sum(b.grad), abs_sum(x.grad))

POOLS = [
    ('max_pool3d_k2s2', F.max_pool3d, 2, 2, 0),
    ('max_pool3d_k3s1p1', F.max_pool3d, 3, 1, 1),
    ('avg_pool3d_k2s2', F.avg_pool3d, 2, 2, 0),
    ('avg_pool3d_k3s1p1', F.avg_pool3d, 3, 1, 1),
]
for name, fn, k, s, p in POOLS:
    x = ramp((4, 16, 8, 32, 32), 0.37, 1).requires_grad_()
    y = fn(x, k, stride=s, padding=p)
    g = ramp(tuple(y.shape), 0.13, 1)
    def step():
        x.grad = None
        out['y'] = fn(x, k, stride=s, padding=p)
        out['y'].backward(g)
    seconds = timed(9, step)
    y = out['y'].detach()
    report(name, seconds, (y * y).sum().item(), abs_sum(x.grad), (x.grad * x.detach()).sum().item())
