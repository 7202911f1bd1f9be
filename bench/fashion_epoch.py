# fashion_epoch: one training epoch of the FashionMNIST MLP in PyTorch, the same
# model, optimizer, batches and loop as fashion_epoch.lua; data already in memory.
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
model = nn.Sequential(nn.Flatten(), nn.Linear(784, 256), nn.ReLU(), nn.Dropout(0.2),
                      nn.Linear(256, 256), nn.ReLU(), nn.Dropout(0.2), nn.Linear(256, 10))
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
