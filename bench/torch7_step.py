# torch7_step: a training step written the Torch7 way: nn.Sequential of
# Linear(784, 256), Tanh, Linear(256, 10), LogSoftMax with ClassNLLCriterion on
# a batch of 64 (float32), zeroGradParameters, forward, the criterion's forward
# and backward, backward, updateParameters(0.01); against the same network and
# step in PyTorch (nn.Sequential, nll_loss, backward, p -= lr * grad).
# PyTorch's step never computes the input's gradient (x does not require grad); it
# is timed twice, once for each of the Lua side's cases (`step`: Torch7's backward
# as written; `step_gradInput_nil`: with the first layer's gradInput = nil).
import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
nn = torch.nn

def fill(t, scale):
    with torch.no_grad():
        t.copy_((torch.arange(0, t.numel(), dtype=torch.float32).sin() * scale).view_as(t))
x = torch.arange(0, 64 * 784, dtype=torch.float32).cos().view(64, 784)
y = torch.arange(0, 64) % 10

def run(case):
    model = nn.Sequential(nn.Linear(784, 256), nn.Tanh(), nn.Linear(256, 10), nn.LogSoftmax(dim=1))
    fill(model[0].weight, 0.05); fill(model[0].bias, 0.01)
    fill(model[2].weight, 0.1); fill(model[2].bias, 0.01)
    params = list(model.parameters())

    def step():
        for p in params: p.grad = None
        out = model(x)
        loss = torch.nn.functional.nll_loss(out, y)
        loss.backward()
        with torch.no_grad():
            for p in params: p.sub_(p.grad, alpha=0.01)
        return loss

    for _ in range(20): step()
    n = 300
    t0 = time.perf_counter()
    for _ in range(n): loss = step()
    print('TIME %r %s' % ((time.perf_counter() - t0) / n, case))
    print('CHECK %s %.5f %.6f %.6f' % (case, loss.item(), model[0].weight.sum().item(), model[2].bias[0].item()))

run('step')
run('step_gradInput_nil')
