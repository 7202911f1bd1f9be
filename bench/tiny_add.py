import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
a, b = torch.tensor([1.5]), torch.tensor([2.25])
n = 200000
for _ in range(10000): c = a + b
t0 = time.perf_counter()
for _ in range(n): c = a + b
print('TIME %r' % ((time.perf_counter() - t0) / n))
print('CHECK value %r' % c[0].item())
