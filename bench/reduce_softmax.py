import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
x = (torch.arange(0, 4096 * 4096).float().remainder(97).view(4096, 4096)) * 0.01
ops = {
    'sum_dim1': lambda: x.sum(0),
    'sum_dim2': lambda: x.sum(1),
    'mean_dim1': lambda: x.mean(0),
    'mean_dim2': lambda: x.mean(1),
    'max_dim1': lambda: x.max(0),
    'max_dim2': lambda: x.max(1),
    'softmax': lambda: x.softmax(1),
}


def check(name, r):
    """The first and last value, and for max the first and last index (1-based, as moontorch's)."""
    values = (r[0] if isinstance(r, tuple) else r).reshape(-1)
    line = 'CHECK %s %.6g %.6g' % (name, values[0].item(), values[-1].item())
    if isinstance(r, tuple):
        indices = r[1].reshape(-1)
        line += ' %d %d' % (indices[0].item() + 1, indices[-1].item() + 1)
    return line


for name in ('sum_dim1', 'sum_dim2', 'mean_dim1', 'mean_dim2', 'max_dim1', 'max_dim2', 'softmax'):
    r = ops[name]()
    best = float('inf')
    for _ in range(5):
        t0 = time.perf_counter()
        r = ops[name]()
        best = min(best, time.perf_counter() - t0)
    print('TIME %.9g %s' % (best, name))
    print(check(name, r))
