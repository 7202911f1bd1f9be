# vol3d: the PyTorch side of bench/vol3d.lua
import os, time, torch
import torch.nn.functional as F
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))

def ramp(shape, step, scale):
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(0, n, dtype=torch.float32) * step).sin() * scale).view(shape)

def timed(reps, fn):
    fn()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    t.sort()
    return t[(reps + 1) // 2 - 1]

def report(case, seconds, *values):
    print('TIME %.9g %s' % (seconds, case))
    print('CHECK %s %s' % (case, ' '.join('%.7g' % v for v in values)))

def abs_sum(t):
    return t.abs().sum().item()

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
