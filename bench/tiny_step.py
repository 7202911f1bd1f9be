import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
w = torch.tensor([[0.1, -0.2, 0.3, 0.05], [0.2, 0.1, -0.1, 0.3], [-0.3, 0.2, 0.1, 0.1], [0.05, 0.05, 0.2, -0.2]],
                 requires_grad=True)
b = torch.tensor([[0.01, 0.02, 0.03, 0.04]], requires_grad=True)
x = torch.tensor([[1.0, 2.0, 3.0, 4.0], [0.5, -1.0, 2.0, 0.0]])
def step():
    w.grad, b.grad = None, None
    loss = (x.mm(w) + b).tanh().sum()
    loss.backward()
    return loss
for _ in range(2000): loss = step()
n = 20000
t0 = time.perf_counter()
for _ in range(n): loss = step()
print('TIME %r' % ((time.perf_counter() - t0) / n))
print('CHECK step %.6f %.6f %.6f' % (loss.item(), w.grad[0, 0].item(), b.grad[0, 3].item()))
