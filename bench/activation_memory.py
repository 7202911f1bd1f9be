# activation_memory: a deep MLP (24 layers of Linear 256->256 followed by tanh,
# sigmoid and GELU in turn, batch 8192) called the usual way, model(x), forward +
# backward. What it measures is memory: the peak resident set (run.py) and its
# growth above what the process held before the model was built (MEMORY); each
# layer's activation is 8 MiB, so what autograd saves dominates both. CHECK: the
# loss (sum of squares) and the gradient of the 16th Linear's weight (abs sum).
import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
nn = torch.nn

def resident(field):
    """resident memory in MiB: the current set (VmRSS) or its peak (VmHWM)"""
    with open('/proc/self/status') as f:
        for line in f:
            if line.startswith(field + ':'):
                return int(line.split()[1]) / 1024
start = resident('VmRSS')

def values(n, mult, mod, scale):
    """n fixed values in [-scale/2, scale/2), the same on both sides, with no low-rank
    structure (an integer hash: sin(k) laid out in rows would be rank 2)"""
    return ((torch.arange(0, n) * mult % mod).float() / mod - 0.5) * scale

width, batch, depth = 256, 8192, 24
acts = [nn.Tanh, nn.Sigmoid, nn.GELU]
layers = []
with torch.no_grad():
    for i in range(1, depth + 1):
        lin = nn.Linear(width, width)
        lin.weight.copy_(values(width * width, 7919 + i, 1009, 0.2).reshape(width, width))
        lin.bias.copy_(values(width, 31, 101, 0.02))
        layers += [lin, acts[(i - 1) % 3]()]
model = nn.Sequential(*layers)
x = values(batch * width, 104729, 1013, 2).reshape(batch, width)

def step():
    model.zero_grad()
    loss = model(x).pow(2).sum()
    loss.backward()
    return loss

step()
n = 3
t0 = time.perf_counter()
for _ in range(n):
    loss = step()
print('TIME %r forward+backward' % ((time.perf_counter() - t0) / n))
print('CHECK forward+backward %.2f %.4f' % (loss.item(), model[30].weight.grad.abs().sum().item()))
print('MEMORY %.1f growth' % (resident('VmHWM') - start))
