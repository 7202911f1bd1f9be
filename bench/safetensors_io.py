# safetensors_io: the PyTorch side of bench/safetensors_io.lua (save and load
# of a 64 MB float32 state dict; interop both ways, bit for bit). load_file
# maps the file: load_copy adds a clone of each tensor, as moontorch's copy.
import os, subprocess, sys, tempfile, time, torch
from safetensors.torch import save_file, load_file
from safetensors import safe_open

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
torch.set_num_threads(int(os.environ.get('BENCH_THREADS', '1')))


def interop_tensors():
    base = (torch.arange(0, 24, dtype=torch.int64) * 37) % 201 - 100
    codes = {'F32': torch.float32, 'F64': torch.float64, 'F16': torch.float16, 'BF16': torch.bfloat16,
             'I64': torch.int64, 'I32': torch.int32, 'I16': torch.int16, 'I8': torch.int8}
    out = {}
    for code, dtype in codes.items():
        v = base.double() / 4 if dtype.is_floating_point else base
        if dtype == torch.int64:
            v = base * (1 << 40)
        out[code] = v.to(dtype).view(2, 3, 4)
    out['U8'] = ((torch.arange(0, 24, dtype=torch.int64) * 37) % 256).to(torch.uint8)
    out['BOOL'] = (torch.arange(0, 24, dtype=torch.int64) % 3) == 0
    out['scalar'] = torch.tensor(0.25, dtype=torch.float64)
    out['empty'] = torch.zeros(0, 5)
    return out


METADATA = {'written_by': 'bench/safetensors_io'}

if len(sys.argv) > 2 and sys.argv[1] == '--write':
    save_file(interop_tensors(), sys.argv[2], metadata=METADATA)
    sys.exit(0)

d = tempfile.mkdtemp()
mine, theirs = os.path.join(d, 'python.safetensors'), os.path.join(d, 'moontorch.safetensors')
save_file(interop_tensors(), mine, metadata=METADATA)
th = os.environ.get('TH', os.path.join(ROOT, 'build', 'th'))
subprocess.check_call([th, os.path.join(ROOT, 'bench', 'safetensors_io.lua'), '--write', theirs], cwd=ROOT)
want = interop_tensors()
equal, checksum = 1, 0.0
with safe_open(theirs, 'pt') as f:
    if f.metadata() != METADATA:
        equal = 0
    got = {k: f.get_tensor(k) for k in f.keys()}
for name, t in want.items():
    g = got.get(name)
    if g is None or g.dtype != t.dtype or g.shape != t.shape or \
            not torch.equal(g.reshape(-1).view(torch.uint8), t.reshape(-1).view(torch.uint8)):
        equal = 0
        print('safetensors_io: %s differs' % name, file=sys.stderr)
    checksum += t.double().sum().item()
same_bytes = 1 if open(mine, 'rb').read() == open(theirs, 'rb').read() else 0
print('CHECK interop %d %d %.6f' % (equal, same_bytes, checksum))

torch.manual_seed(0)
big = {'layer%d.weight' % i: torch.randn(1024, 2048) for i in range(1, 9)}
path = os.path.join(d, 'big.safetensors')
save_file(big, path)
t0 = time.perf_counter()
save_file(big, path)
print('TIME %r save' % (time.perf_counter() - t0))
load_file(path)
t0 = time.perf_counter()
back = {k: v.clone() for k, v in load_file(path).items()}
print('TIME %r load_copy' % (time.perf_counter() - t0))
t0 = time.perf_counter()
mapped = load_file(path)
print('TIME %r load_mmap' % (time.perf_counter() - t0))
t0 = time.perf_counter()
total = 0.0
for t in load_file(path).values():
    total += t.sum().item()
print('TIME %r load_mmap_sum' % (time.perf_counter() - t0))
same = 1 if all(torch.equal(back[k], v) and torch.equal(mapped[k], v) for k, v in big.items()) else 0
print('CHECK big_roundtrip %d' % same)
for name in os.listdir(d):
    os.remove(os.path.join(d, name))
os.rmdir(d)
