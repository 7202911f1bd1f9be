#!/usr/bin/env python3
"""bench/run.py: runs each benchmark pair (moontorch .lua, PyTorch .py, and an
optional C .c "hardware limit") side by side, alternating A B A B after a
warm-up, and prints medians, ratios, peak memory and a Markdown summary.

Each side prints lines:  TIME <seconds>  (the timed region; several allowed,
one per case) and  CHECK <case> <numbers...>  (compared across sides); NOTE
<text> lines from the moontorch side (its last run) are printed as they are;
MEMORY <MiB> <case> lines (a memory figure each side measures itself, from its
last run) are printed side by side with their ratio.
A benchmark whose .lua file starts with '-- whole-process' is timed from
outside (start-up benchmarks)."""
import os, re, subprocess, sys, time, glob, statistics, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TH = os.path.join(ROOT, 'build', 'th')
RUNS = int(os.environ.get('RUNS', '5'))
THREADS = os.environ.get('THREADS', '1')
TOLERANCE = float(os.environ.get('TOLERANCE', '1e-3'))


def env():
    e = dict(os.environ)
    # OpenBLAS picks its kernels from the CPU; a forced OPENBLAS_CORETYPE (this
    # sandbox sets Haswell) would measure a slower machine than the one we run on.
    e.pop('OPENBLAS_CORETYPE', None)
    for k in ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS', 'BENCH_THREADS'):
        e[k] = THREADS
    return e


def run_side(cmd, whole_process):
    """Runs one side once: {case: seconds}, {case: [numbers]}, [notes], {case: MiB}."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(), cwd=ROOT)
    out, err = proc.communicate()
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError('%s failed (%d):\n%s%s' % (' '.join(cmd), proc.returncode, out.decode(), err.decode()))
    times, checks, notes, memory = {}, {}, [], {}
    for line in out.decode().splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == 'TIME':
            case = parts[2] if len(parts) > 2 else 'main'
            times[case] = float(parts[1])
        elif parts[0] == 'CHECK':
            checks[parts[1]] = [float(v) for v in parts[2:]]
        elif parts[0] == 'NOTE':
            notes.append(line[5:])
        elif parts[0] == 'MEMORY':
            memory[parts[2] if len(parts) > 2 else 'main'] = float(parts[1])
    if whole_process:
        times = {'main': elapsed}
    return times, checks, notes, memory


def peak_mib(cmd):
    """Peak resident memory of one run of cmd, from the kernel's rusage."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env(), cwd=ROOT)
    _, status, rusage = os.wait4(proc.pid, 0)
    return rusage.ru_maxrss / 1024.0


def python_with_torch():
    for py in ('python3', '/usr/bin/python3'):
        if shutil.which(py) and subprocess.call([py, '-c', 'import torch'], stdout=subprocess.DEVNULL,
                                                stderr=subprocess.DEVNULL) == 0:
            return py
    print('bench: PyTorch not found; installing Debian python3-torch', file=sys.stderr)
    subprocess.check_call(['sh', '-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive '
                           'apt-get install -y -qq python3-torch'])
    return '/usr/bin/python3'


def c_binary(src):
    exe = os.path.join(ROOT, 'build', 'bench', os.path.basename(src)[:-2])
    os.makedirs(os.path.dirname(exe), exist_ok=True)
    if not os.path.exists(exe) or os.path.getmtime(exe) < os.path.getmtime(src):
        if '#include <mpi.h>' in open(src).read():   # an MPI program: mpicc (it starts its own ranks)
            subprocess.check_call(['mpicc', '-O3', '-march=native', src, '-o', exe])
            return exe
        flags = subprocess.check_output(['pkg-config', '--cflags', '--libs', 'openblas']).decode().split()
        subprocess.check_call(['gcc', '-O3', '-march=native', '-fopenmp', src, '-o', exe] + flags + ['-lm'])
    return exe


def compare(a, b):
    bad = []
    for case in sorted(set(a) | set(b)):
        va, vb = a.get(case), b.get(case)
        if va is None or vb is None or len(va) != len(vb):
            bad.append('%s: %s vs %s' % (case, va, vb))
            continue
        for x, y in zip(va, vb):
            if abs(x - y) > TOLERANCE * max(1.0, abs(x), abs(y)):
                bad.append('%s: %s vs %s' % (case, va, vb))
                break
    return bad


def main():
    only = [a for a in sys.argv[1:] if a]                 # names to run (several: one table)
    py = python_with_torch()
    torch_version = subprocess.check_output([py, '-c', 'import torch; print(torch.__version__)'],
                                            env=env()).decode().strip()
    names = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(HERE, '*.lua')))
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            sys.exit('bench: no benchmark named %s' % ', '.join(unknown))
        names = [n for n in names if n in only]
    rows, failures = [], []
    print('moontorch vs PyTorch %s, %s thread(s), %d runs each (median)\n' % (torch_version, THREADS, RUNS))
    gpu = None
    for name in names:
        lua_file = os.path.join(HERE, name + '.lua')
        py_file = os.path.join(HERE, name + '.py')
        c_file = os.path.join(HERE, name + '.c')
        first = open(lua_file).readline()
        if first.startswith('-- gpu'):                 # GPU benchmarks: only where PyTorch sees a GPU
            if gpu is None:
                gpu = subprocess.run([py, '-c', 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'],
                                     env=env()).returncode == 0
            if not gpu:
                print('%s: skipped (no GPU)\n' % name)
                continue
        whole = first.startswith('-- whole-process')
        sides = [('moontorch', [TH, lua_file]), ('pytorch', [py, py_file])]
        if os.path.exists(c_file):
            sides.append(('C', [c_binary(c_file)]))
        samples = {s: {} for s, _ in sides}
        checks, notes, memory = {}, [], {}
        for _, cmd in sides:
            run_side(cmd, whole)                       # warm-up (caches, page cache)
        for _ in range(RUNS):
            for side, cmd in sides:
                times, check, note, memory[side] = run_side(cmd, whole)
                checks[side] = check
                if side == 'moontorch':
                    notes = note
                for case, t in times.items():
                    samples[side].setdefault(case, []).append(t)
        peaks = {side: peak_mib(cmd) for side, cmd in sides}
        mismatch = compare(checks['moontorch'], checks['pytorch'])
        if 'C' in checks:                              # the C side checks the cases it times
            mismatch += compare({k: v for k, v in checks['moontorch'].items() if k in checks['C']}, checks['C'])
        if mismatch:
            failures.append(name)
            print('!!! %s: RESULTS DIFFER between moontorch and PyTorch or C:\n    %s' % (name, '\n    '.join(mismatch)))
        for case in sorted(samples['moontorch']):
            mt = statistics.median(samples['moontorch'][case])
            pt = statistics.median(samples['pytorch'].get(case, [float('nan')]))
            c = statistics.median(samples['C'][case]) if 'C' in samples and case in samples['C'] else None
            label = name if case == 'main' else '%s %s' % (name, case)
            rows.append((label, mt, pt, mt / pt if pt else float('nan'), c, peaks['moontorch'], peaks['pytorch'],
                         'MISMATCH' if mismatch else 'ok'))
            print('%-34s moontorch %10s  pytorch %10s  ratio %6.3f%s' % (
                label, fmt(mt), fmt(pt), mt / pt, '' if c is None else '  C %10s (mt/C %.3f)' % (fmt(c), mt / c)))
        for note in notes:
            print('    %s: %s' % (name, note))
        print('    %s: peak resident memory moontorch %.0f MiB, PyTorch %.0f MiB, ratio %.3f (<1: moontorch smaller)'
              % (name, peaks['moontorch'], peaks['pytorch'], peaks['moontorch'] / peaks['pytorch']))
        for case in sorted(memory['moontorch']):
            mm, pm = memory['moontorch'][case], memory['pytorch'].get(case, float('nan'))
            print('    %s: memory %s moontorch %.1f MiB, PyTorch %.1f MiB, ratio %.3f' % (
                name, case, mm, pm, mm / pm if pm else float('nan')))
    print('\n| benchmark | moontorch | PyTorch | ratio (<1: moontorch faster) | C limit | peak MiB mt / pt | check |')
    print('|---|---|---|---|---|---|---|')
    for label, mt, pt, ratio, c, pm, pp, ok in rows:
        print('| %s | %s | %s | %.3f | %s | %.0f / %.0f | %s |' % (label, fmt(mt), fmt(pt), ratio,
                                                           '' if c is None else fmt(c), pm, pp, ok))
    if failures:
        print('\nbench: results differ in: %s' % ', '.join(failures))
        sys.exit(1)


def fmt(seconds):
    if seconds is None:
        return ''
    if seconds < 1e-6:
        return '%.1f ns' % (seconds * 1e9)
    if seconds < 1e-3:
        return '%.2f us' % (seconds * 1e6)
    if seconds < 1:
        return '%.2f ms' % (seconds * 1e3)
    return '%.3f s' % seconds


if __name__ == '__main__':
    main()
