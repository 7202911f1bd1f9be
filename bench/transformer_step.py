# transformer_step: a 4-layer TransformerEncoder (d_model 256, 4 heads, feed-forward 2048,
# GELU, dropout 0, batch first) on a batch of 16 sequences of 128, mean squared error
# against a fixed target: forward, forward + backward, and a whole AdamW training step
import math, os, time, torch
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))

N, L, E, HEADS, FF, LAYERS = 16, 128, 256, 4, 2048, 4
def fixed(n, salt):
    k = torch.arange(0, n, dtype=torch.int64)
    return ((k * k + salt * 7919) % 10007).float().sin()

layer = torch.nn.TransformerEncoderLayer(E, HEADS, dim_feedforward=FF, dropout=0.0, activation='gelu',
                                         batch_first=True)
model = torch.nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False)
model.train()
with torch.no_grad():
    for i, (name, p) in enumerate(model.named_parameters(), 1):
        if p.dim() == 2: v = fixed(p.numel(), i) * (1 / math.sqrt(p.size(1)))
        elif 'norm' in name and name.endswith('weight'): v = fixed(p.numel(), i) * 0.1 + 1
        else: v = fixed(p.numel(), i) * 0.02
        p.copy_(v.view(p.shape))
x = fixed(N * L * E, 1000).view(N, L, E)
target = (fixed(N * L * E, 2000) * 0.5).view(N, L, E)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)

def forward(): return ((model(x) - target) ** 2).mean()
first = forward().item()
loss = None
def step():
    global loss
    opt.zero_grad()
    loss = forward()
    loss.backward()
    opt.step()

reps = 5
def timed(name, fn):
    fn()
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    print('TIME %.9g %s' % (best, name))
def fwd():
    global loss
    loss = forward()
def fwd_bwd():
    global loss
    opt.zero_grad(); loss = forward(); loss.backward()
timed('forward', fwd)
timed('forward+backward', fwd_bwd)
grad_check = '%.6f %.6f' % (loss.item(), model.layers[0].linear1.weight.grad.sum().item())
timed('step', step)
print('CHECK forward %.6f' % first)
print('CHECK forward+backward ' + grad_check)
print('CHECK step %.6f %.6f' % (forward().item(), model.layers[3].norm2.weight.sum().item()))
