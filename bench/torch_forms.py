# torch_forms: the per-call cost of torch.* function forms on 4-element tensors
# (torch.add, torch.sum, torch.cat, torch.mm), as bench/torch_forms.lua times them.
import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
a, b = torch.tensor([1.5, -2, 0.25, 3]), torch.tensor([0.5, 1, -1, 2])
m = torch.tensor([[1., 2.], [3., 4.]])
n = 200000
cases = [('add', lambda: torch.add(a, b)), ('sum', lambda: torch.sum(a)),
         ('cat', lambda: torch.cat([a, b])), ('mm', lambda: torch.mm(m, m))]
for name, f in cases:
    for _ in range(10000): f()
    t0 = time.perf_counter()
    for _ in range(n): f()
    print('TIME %g %s' % ((time.perf_counter() - t0) / n, name))
print('CHECK value %.4f' % torch.mm(m, m).sum().item())
