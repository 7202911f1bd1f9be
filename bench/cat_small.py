import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
parts = [torch.ones(64) * (i + 1) for i in range(1000)]
r = torch.cat(parts, 0)
reps, best = 200, float('inf')
for _ in range(5):
    t0 = time.perf_counter()
    for _ in range(reps): r = torch.cat(parts, 0)
    best = min(best, (time.perf_counter() - t0) / reps)
print('TIME %.9g' % best)
print('CHECK cat %.6g %.6g %d' % (r[0].item(), r[63999].item(), r.size(0)))
