import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
for size, dtype in ((256, None), (1024, None), (2048, None), (4096, None), (1024, 'bfloat16'), (2048, 'bfloat16'),
                    (4096, 'bfloat16')):
    a = torch.ones(size, size) * 0.5
    b = torch.ones(size, size) * 0.25
    if dtype:
        a, b = a.to(getattr(torch, dtype)), b.to(getattr(torch, dtype))
    n = '%d_%s' % (size, dtype) if dtype else str(size)
    c = a.mm(b)
    reps = max(1, int(2e9 // (2 * size * size * size)))
    best = float('inf')
    for _ in range(7 if size >= 1024 else 3):  # one product a round from 1024 up: more rounds
        t0 = time.perf_counter()
        for _ in range(reps): c = a.mm(b)
        best = min(best, (time.perf_counter() - t0) / reps)
    print('TIME %.9g n%s' % (best, n))
    print('CHECK n%s %.6g %.6g' % (n, c[0, 0].item(), c[size - 1, size - 1].item()))
