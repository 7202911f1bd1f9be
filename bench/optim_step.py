# optim_step: one optimizer step (Adam; SGD with momentum) over the weights
# of a 784-256-256-10 MLP (784x256, 256x256, 256x10) with fixed gradients;
# the step alone is timed (torch.optim defaults: foreach where PyTorch picks it)
import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))

shapes = [(784, 256), (256, 256), (256, 10)]
def setup():
    params = []
    for i, (a, b) in enumerate(shapes, 1):
        n = a * b
        p = (torch.arange(0, n).sin() * 0.05).reshape(a, b).requires_grad_()
        p.grad = (torch.arange(0, n).cos() * (0.01 * i)).reshape(a, b)
        params.append(p)
    return params

rounds, reps = 5, 20
for name, make in [('adam', lambda ps: torch.optim.Adam(ps, lr=1e-3)),
                   ('sgd_momentum', lambda ps: torch.optim.SGD(ps, lr=0.01, momentum=0.9))]:
    params = setup()
    opt = make(params)
    opt.step()
    best = float('inf')
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps): opt.step()
        best = min(best, (time.perf_counter() - t0) / reps)
    print('TIME %.9g %s' % (best, name))
    p = params[0]
    print('CHECK %s %.6g %.6g %.6g' % (name, p[0, 0].item(), p[783, 255].item(), params[2].abs().sum().item()))
