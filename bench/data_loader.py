# data_loader: one shuffled epoch of a 60000x784 float TensorDataset (labels
# 0..9) in batches of 64, num_workers=0, in PyTorch: the same work as
# data_loader.lua.
import os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))
torch.manual_seed(0)

n, features = 60000, 784
x = torch.arange(0, n * features, dtype=torch.float32).view(n, features) / (n * features)
y = torch.arange(0, n, dtype=torch.int64) % 10
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=64, shuffle=True)

for epoch in range(2):             # the second epoch is timed (the first warms the allocator)
    t0 = time.perf_counter()
    batches = samples = label_sum = 0
    for xb, yb in loader:
        batches += 1
        samples += xb.size(0)
        label_sum += yb.sum().item()
    elapsed = time.perf_counter() - t0
    if epoch == 1:
        print('TIME %r epoch' % elapsed)
        print('CHECK epoch %d %d %d' % (batches, samples, label_sum))
