# bench/common/cases.py: the PyTorch side of bench/common/cases.lua (fixed input
# values, a median timing, the TIME/CHECK lines bench/run.py reads)
import time, torch

def ramp(shape, step, scale):
    n = 1
    for s in shape:
        n *= s
    return ((torch.arange(0, n, dtype=torch.float32) * step).sin() * scale).view(shape)

def timed(reps, fn):
    fn()
    t = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        t.append(time.perf_counter() - t0)
    t.sort()
    return t[(reps + 1) // 2 - 1]

def report(case, seconds, *values):
    print('TIME %.9g %s' % (seconds, case))
    print('CHECK %s %s' % (case, ' '.join('%.7g' % v for v in values)))

def abs_sum(t):
    return t.abs().sum().item()
