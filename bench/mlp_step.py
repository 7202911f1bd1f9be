# mlp_step: a 784-256-256-10 MLP (ReLU, cross-entropy) on a batch of 64:
# backward alone, and forward + backward
import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
def param(n, m, scale):
    return (torch.arange(0, n * m, dtype=torch.float32).sin() * scale).reshape(n, m).requires_grad_()
w1, b1 = param(784, 256, 0.05), param(1, 256, 0.01)
w2, b2 = param(256, 256, 0.06), param(1, 256, 0.01)
w3, b3 = param(256, 10, 0.1), param(1, 10, 0.01)
x = torch.arange(0, 64 * 784, dtype=torch.float32).cos().reshape(64, 784)
y = (torch.arange(0, 64) % 10).view(64, 1)
params = [w1, b1, w2, b2, w3, b3]

def forward():
    h = (x.mm(w1) + b1).relu()
    h = (h.mm(w2) + b2).relu()
    logits = h.mm(w3) + b3
    return -logits.log_softmax(1).gather(1, y).mean()
def zero():
    for p in params: p.grad = None

for _ in range(20):
    zero(); forward().backward()
n, bwd = 300, 0.0
for _ in range(n):
    zero()
    loss = forward()
    t0 = time.perf_counter()
    loss.backward()
    bwd += time.perf_counter() - t0
print('TIME %r backward' % (bwd / n))
t0 = time.perf_counter()
for _ in range(n):
    zero(); loss = forward(); loss.backward()
print('TIME %r forward+backward' % ((time.perf_counter() - t0) / n))
check = '%.5f %.6f %.6f' % (loss.item(), w1.grad.sum().item(), w3.grad[0, 0].item())
print('CHECK backward ' + check)
print('CHECK forward+backward ' + check)
