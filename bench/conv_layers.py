# conv_layers: the PyTorch side of bench/conv_layers.lua
import os, sys, torch
import torch.nn.functional as F
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
from cases import ramp, timed, report, abs_sum

CONVS = [
    ('conv3x3_64to64_56x56_b32', 32, 64, 64, 56, True, 3),
    ('cnn_conv1_1to32_28x28_b64', 64, 1, 32, 28, False, 9),
    ('cnn_conv2_32to64_14x14_b64', 64, 32, 64, 14, True, 9),
]
for name, n, cin, cout, size, input_grad, reps in CONVS:
    x = ramp((n, cin, size, size), 0.37, 1).requires_grad_(input_grad)
    w = ramp((cout, cin, 3, 3), 0.71, 0.1).requires_grad_()
    b = ramp((cout,), 0.5, 0.1).requires_grad_()
    g = ramp((n, cout, size, size), 0.13, 1)
    out = {}
    def step():
        x.grad = w.grad = b.grad = None
        out['y'] = F.conv2d(x, w, b, padding=1)
        out['y'].backward(g)
    seconds = timed(reps, step)
    y = out['y'].detach()
    report(name, seconds, (y * y).sum().item(), abs_sum(w.grad), abs_sum(b.grad), abs_sum(x.grad) if input_grad else 0)

x = (ramp((64, 32, 28, 28), 0.37, 2) + 0.5).requires_grad_()
w = (ramp((32,), 0.9, 0.5) + 1).requires_grad_()
b = ramp((32,), 0.4, 0.1).requires_grad_()
rm, rv = torch.zeros(32), torch.ones(32)
g = ramp((64, 32, 28, 28), 0.13, 1)
out = {}
def bn_step():
    x.grad = w.grad = b.grad = None
    out['y'] = F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
    out['y'].backward(g)
seconds = timed(9, bn_step)
y = out['y'].detach()
report('batch_norm2d_64x32x28x28', seconds, (y * y).sum().item(), abs_sum(w.grad), abs_sum(b.grad), abs_sum(x.grad))
