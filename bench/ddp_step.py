# ddp_step: PyTorch's DistributedDataParallel (gloo backend) over 2 processes on the MLP
# of ddp_step.lua: a 784-256-256-10 MLP (ReLU, cross-entropy, SGD) on a batch of 64 per
# rank; rank 0 prints the step time (best of 3 rounds of 200 after 20 warm-up steps) and
# the first step's loss.
import os, sys, time
import torch
import torch.distributed as dist
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
import ranks
import torch.nn as nn
import torch.nn.functional as F


def fill(t, scale):
    with torch.no_grad():
        t.copy_((torch.arange(0, t.numel()).float().sin() * scale).view_as(t))


def worker(rank, port):
    torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
    ranks.join(rank, port)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10))
    for i, p in enumerate(model.parameters()):
        fill(p, 0.05 / (i + 1))
    x = (torch.arange(0, 64 * 784).float().cos() + rank).reshape(64, 784)
    y = torch.arange(0, 64) % 10
    ddp = nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
    loss = None

    def step():
        nonlocal loss
        opt.zero_grad()
        loss = F.cross_entropy(ddp(x), y)
        loss.backward()
        opt.step()

    step()
    first = loss.item()
    for _ in range(20):
        step()
    best = float('inf')
    for _ in range(3):
        dist.barrier()
        t0 = time.perf_counter()
        for _ in range(200):
            step()
        best = min(best, (time.perf_counter() - t0) / 200)
    if rank == 0:
        print('TIME %.9g step' % best)
        print('CHECK step %.5f' % first)
        sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == '__main__':
    ranks.run(worker)
