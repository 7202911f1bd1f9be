# bench/common/epoch_loop.py: the FashionMNIST training epoch that fashion_epoch.py (the
# MLP), cnn_epoch.py (the CNN) and their amp_ twins (bfloat16 autocast) time, as
# bench/common/epoch_loop.lua does it: data already in memory, Adam 1e-3, cross-entropy,
# batches of 64, shuffled. Prints TIME and CHECK lines.
import gzip, os, time, torch

ROOT = '/usr/share/datasets/fashion-mnist'


def _idx(name, offset):
    with gzip.open(os.path.join(ROOT, name), 'rb') as f:
        return torch.frombuffer(bytearray(f.read()[offset:]), dtype=torch.uint8)


def mlp():
    """The examples' MLP."""
    return torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                               torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Dropout(0.2),
                               torch.nn.Linear(256, 10))


def cnn():
    """The examples' CNN."""
    nn = torch.nn
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))


def run(make_model, amp=False):
    """Times one epoch of make_model(), built after the seed is set (amp: the forward and the
    loss under torch.autocast('cpu', dtype=torch.bfloat16))."""
    torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
    torch.manual_seed(0)
    images = _idx('train-images-idx3-ubyte.gz', 16).view(-1, 1, 28, 28)
    labels = _idx('train-labels-idx1-ubyte.gz', 8).long()
    x_all = (images.float() / 255 - 0.2860) / 0.3530
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_all, labels), batch_size=64, shuffle=True)
    model = make_model()
    crit = torch.nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    model.train()
    t0 = time.perf_counter()
    batches = samples = 0
    for x, y in loader:
        opt.zero_grad()
        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=amp):
            loss = crit(model(x), y)
        loss.backward()
        opt.step()
        batches += 1
        samples += y.size(0)
    print('TIME %r epoch' % (time.perf_counter() - t0))
    print('CHECK epoch %d %d' % (batches, samples))
