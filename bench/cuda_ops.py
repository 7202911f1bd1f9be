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
torch.backends.cudnn.allow_tf32 = False
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
F = torch.nn.functional
v = torch.linspace(-1, 1, 8 * 32 * 16 * 28 * 28).view(8, 32, 16, 28, 28).cuda()
k = (torch.linspace(-1, 1, 64 * 32 * 27).view(64, 32, 3, 3, 3) * 0.05).cuda()
vr, kr = v.clone().requires_grad_(), k.clone().requires_grad_()
timed('conv3d_fwd', 10, lambda: r.__setitem__('o', F.conv3d(v, k, None, padding=1)))
print('CHECK conv3d_fwd %.6g' % (r['o'].abs().sum().item() / r['o'].numel()))
def fwd_bwd():
    vr.grad, kr.grad = None, None
    F.conv3d(vr, kr, None, padding=1).sum().backward()
timed('conv3d_fwd_bwd', 5, fwd_bwd)
print('CHECK conv3d_fwd_bwd %.6g' % (kr.grad.abs().sum().item() / kr.grad.numel()))
o = r['o']
timed('max_pool3d', 20, lambda: r.__setitem__('p', F.max_pool3d(o, 2)))
print('CHECK max_pool3d %.6g' % (r['p'].sum().item() / r['p'].numel()))
timed('avg_pool3d', 20, lambda: r.__setitem__('p', F.avg_pool3d(o, 3, stride=2, padding=1)))
print('CHECK avg_pool3d %.6g' % (r['p'].sum().item() / r['p'].numel()))
