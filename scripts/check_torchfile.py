#!/usr/bin/env python3
"""Writes Torch7 files with moontorch's th and reads them with Python's
torchfile (github.com/bshillingford/python-torchfile, an independent reader of
Torch7's binary format), checking every value. Not part of `make test`: it
needs `pip install torchfile numpy`. Run from the repository root:
    python3 scripts/check_torchfile.py [path/to/th]
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torchfile

TH = sys.argv[1] if len(sys.argv) > 1 else './build/th'

# Each case: the Lua expression saved, and a check of what torchfile reads.
CASES = [
    ('number', '42.5', lambda v: v == 42.5),
    ('integer', '7', lambda v: v == 7),
    ('string', "'hello\\0world'", lambda v: v == b'hello\x00world'),
    ('boolean', 'true', lambda v: v is True),
    ('list', "{1, 'two', false}", lambda v: v == [1, b'two', False]),
    ('map', "{a = 1, b = {c = 'd'}}", lambda v: v[b'a'] == 1 and v[b'b'][b'c'] == b'd'),
    ('float tensor', 'torch.FloatTensor{{1, 2, 3}, {4, 5, 6.5}}',
     lambda v: v.dtype == np.float32 and (v == np.array([[1, 2, 3], [4, 5, 6.5]], np.float32)).all()),
    ('double tensor', 'torch.arange(0, 12, {dtype="float64"}):view(3, 4)',
     lambda v: v.dtype == np.float64 and (v == np.arange(12.0).reshape(3, 4)).all()),
    ('transposed view', 'torch.arange(0, 6, {dtype="float64"}):view(2, 3):t()',
     lambda v: (v == np.arange(6.0).reshape(2, 3).T).all()),
    ('narrowed view', 'torch.arange(1, 11, {dtype="float32"}):narrow(1, 3, 4)',
     lambda v: (v == np.array([3, 4, 5, 6], np.float32)).all()),
    ('byte tensor', 'torch.ByteTensor{0, 127, 255}', lambda v: v.dtype == np.uint8 and list(v) == [0, 127, 255]),
    ('char tensor', 'torch.CharTensor{-128, 0, 127}', lambda v: v.dtype == np.int8 and list(v) == [-128, 0, 127]),
    ('short tensor', 'torch.ShortTensor{-32768, 32767}', lambda v: v.dtype == np.int16 and list(v) == [-32768, 32767]),
    ('int tensor', 'torch.IntTensor{-5, 2147483647}', lambda v: v.dtype == np.int32 and list(v) == [-5, 2147483647]),
    ('long tensor', 'torch.LongTensor{-1, 9007199254740993}',
     lambda v: v.dtype == np.int64 and list(v) == [-1, 9007199254740993]),
    ('shared storage', '(function() local b = torch.arange(0, 6, {dtype="float64"}) '
     'return {x = b:narrow(1, 1, 4), y = b:narrow(1, 3, 4)} end)()',
     lambda v: list(v[b'x']) == [0, 1, 2, 3] and list(v[b'y']) == [2, 3, 4, 5]
     and np.shares_memory(v[b'x'], v[b'y'])),
    ('same tensor twice', '(function() local t = torch.ones(2) return {a = t, b = t} end)()',
     lambda v: v[b'a'] is v[b'b']),
    ('cycle', '(function() local t = {} t.self = t return t end)()', lambda v: v[b'self'] is v),
    ('nn.Linear', '(function() require "nn" torch.manual_seed(0) return nn.Linear(3, 2) end)()',
     lambda v: v.torch_typename() == b'nn.Linear' and v.weight.shape == (2, 3) and v.bias.shape == (2,)),
    ('nn.Sequential', '(function() require "nn" return nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Tanh()) end)()',
     lambda v: v.torch_typename() == b'nn.Sequential'
     and [m.torch_typename() for m in v.modules] == [b'nn.Linear', b'nn.ReLU', b'nn.Tanh']),
]


def main():
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, expr, check) in enumerate(CASES):
            path = os.path.join(tmp, 'case%d.t7' % i)
            lua = "torch.save(%r, %s, 'binary')" % (path, expr)
            run = subprocess.run([TH, '-e', lua], capture_output=True, text=True)
            if run.returncode != 0:
                print('FAIL %-18s th: %s' % (name, (run.stderr or run.stdout).strip()))
                failures += 1
                continue
            try:
                value = torchfile.load(path)
                ok = check(value)
            except Exception as e:  # a reader error is a failure of the case
                value, ok = repr(e), False
            print('%s %-18s %s' % ('ok  ' if ok else 'FAIL', name, repr(value).replace('\n', ' ')[:70]))
            failures += not ok
    print('%d of %d cases read back by torchfile' % (len(CASES) - failures, len(CASES)))
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
