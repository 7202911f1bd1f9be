# cnn_epoch: one training epoch of the FashionMNIST CNN in PyTorch, the same model,
# optimizer, batches and loop as cnn_epoch.lua; data already in memory.
import gzip, os, time, torch
import torch.nn as nn
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
torch.manual_seed(0)
root = '/usr/share/datasets/fashion-mnist'
def idx(name, offset):
    with gzip.open(os.path.join(root, name), 'rb') as f:
        return torch.frombuffer(bytearray(f.read()[offset:]), dtype=torch.uint8)
images = idx('train-images-idx3-ubyte.gz', 16).view(-1, 1, 28, 28)
labels = idx('train-labels-idx1-ubyte.gz', 8).long()
x_all = (images.float() / 255 - 0.2860) / 0.3530
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_all, labels), batch_size=64, shuffle=True)
model = nn.Sequential(
    nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.3), nn.Linear(128, 10))
crit = nn.CrossEntropyLoss()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
model.train()
t0 = time.perf_counter()
batches = samples = 0
for x, y in loader:
    opt.zero_grad()
    loss = crit(model(x), y)
    loss.backward()
    opt.step()
    batches += 1
    samples += y.size(0)
print('TIME %r epoch' % (time.perf_counter() - t0))
print('CHECK epoch %d %d' % (batches, samples))
