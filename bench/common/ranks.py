# bench/common/ranks.py: the PyTorch side of bench/common/ranks.lua: run(worker) starts
# worker(rank, port) in 2 processes, which join a gloo group on a free port of 127.0.0.1.
import os, socket
import torch.distributed as dist
import torch.multiprocessing as mp


def join(rank, port):
    os.environ['MASTER_ADDR'], os.environ['MASTER_PORT'] = '127.0.0.1', str(port)
    dist.init_process_group('gloo', rank=rank, world_size=2)


def run(worker):
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    mp.spawn(worker, args=(port,), nprocs=2)
