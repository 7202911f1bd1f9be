# all_reduce: torch.distributed.all_reduce (sum) of float32 tensors between 2 processes on
# this machine, PyTorch's gloo backend (its CPU backend), the sizes and rounds of
# all_reduce.lua; rank 0 prints.
import os, sys, time
import torch
import torch.distributed as dist
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'common'))
import ranks

SIZES = [('1MB', 1 << 18, 20, 15), ('4MB', 1 << 20, 20, 15), ('16MB', 1 << 22, 10, 15), ('64MB', 1 << 24, 5, 5),
         ('256MB', 1 << 26, 3, 5)]


def worker(rank, port):
    torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
    ranks.join(rank, port)
    for name, n, reps, rounds in SIZES:
        t = torch.full((n,), rank + 1.0)
        dist.all_reduce(t)
        best = float('inf')
        for _ in range(rounds):
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(reps):
                dist.all_reduce(t)
            best = min(best, (time.perf_counter() - t0) / reps)
        t.fill_(rank + 1.0)
        dist.all_reduce(t)
        if rank == 0:
            print('TIME %.9g %s' % (best, name))
            print('CHECK %s %.6g %.6g' % (name, t[0].item(), t[n - 1].item()))
            sys.stdout.flush()
    dist.destroy_process_group()


if __name__ == '__main__':
    ranks.run(worker)
