import time, torch

def timed(case, reps, fn):
    fn()
    torch.cuda.synchronize()
    best = float('inf')
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(reps): fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / reps)
    print('TIME %.9g %s' % (best, case))

torch.backends.cuda.matmul.allow_tf32 = False
n = 4096
a = (torch.ones(n, n) * 0.5).cuda()
b = (torch.ones(n, n) * 0.25).cuda()
r = {}
timed('mm_f32', 10, lambda: r.__setitem__('c', a.mm(b)))
print('CHECK mm_f32 %.6g %.6g' % (r['c'][0, 0].item(), r['c'][n - 1, n - 1].item()))
ah, bh = a.bfloat16(), b.bfloat16()
timed('mm_bf16', 20, lambda: r.__setitem__('c', ah.mm(bh)))
print('CHECK mm_bf16 %.6g' % r['c'][n - 1, n - 1].item())
x = torch.ones(1 << 26).cuda()
y = (torch.ones(1 << 26) * 2).cuda()
timed('add_64M', 20, lambda: r.__setitem__('z', x + y))
print('CHECK add_64M %.6g' % r['z'][(1 << 26) - 1].item())
timed('sum_64M', 20, lambda: r.__setitem__('s', y.sum()))
print('CHECK sum_64M %.6g' % r['s'].item())
m = (torch.ones(8192, 4096) * 0.5).cuda()
timed('softmax_8192x4096', 20, lambda: r.__setitem__('p', m.softmax(1)))
print('CHECK softmax_8192x4096 %.6g' % r['p'][0, 0].item())
