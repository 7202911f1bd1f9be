import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
n = 16 * 1024 * 1024
a = torch.ones(n) * 0.5
b = torch.ones(n) * 0.25
ops = {'add': lambda: a + b, 'mul': lambda: a * b, 'exp': lambda: a.exp(), 'tanh': lambda: a.tanh(),
       'sigmoid': lambda: a.sigmoid(), 'log': lambda: a.log()}
for name in ('add', 'mul', 'exp', 'tanh', 'sigmoid', 'log'):
    f = ops[name]
    r = f()
    best = float('inf')
    for _ in range(5):
        t0 = time.perf_counter()
        r = f()
        best = min(best, time.perf_counter() - t0)
    print('TIME %.9g %s' % (best, name))
    print('CHECK %s %.6g %.6g' % (name, r[0].item(), r[n - 1].item()))
