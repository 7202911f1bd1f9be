import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
for n in (256, 1024, 2048):
    a = torch.ones(n, n) * 0.5
    b = torch.ones(n, n) * 0.25
    c = a.mm(b)
    reps = max(1, int(2e9 // (2 * n * n * n)))
    best = float('inf')
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps): c = a.mm(b)
        best = min(best, (time.perf_counter() - t0) / reps)
    print('TIME %.9g n%d' % (best, n))
    print('CHECK n%d %.6g %.6g' % (n, c[0, 0].item(), c[n - 1, n - 1].item()))
