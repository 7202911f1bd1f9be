#!/usr/bin/env python3
"""bench/builds.py: moontorch against moontorch, for changes of the build itself (ARCH,
compiler flags): each benchmark's .lua run by two builds' th, alternating A B A B after a
warm-up, with medians and the ratio B / A per case; the two builds' CHECK lines must agree.

  python3 bench/builds.py [names...]      (all benchmarks but the GPU ones when none named)
  BUILD_A=build BUILD_B=build-base RUNS=5 THREADS=1

Build the second tree first, e.g. `make BUILD=build-native ARCH=native CUDA=0`."""
import os, sys, glob, statistics
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run

A = os.environ.get('BUILD_A', 'build')
B = os.environ.get('BUILD_B', 'build-base')


def main():
    names = sorted(os.path.basename(p)[:-4] for p in glob.glob(os.path.join(run.HERE, '*.lua')))
    only = [a for a in sys.argv[1:] if a]
    if only:
        unknown = [n for n in only if n not in names]
        if unknown:
            sys.exit('builds: no benchmark named %s' % ', '.join(unknown))
        names = [n for n in names if n in only]
    sides = []
    for build in (A, B):
        th = os.path.join(run.ROOT, build, 'th')
        if not os.path.exists(th):
            sys.exit('builds: no %s (build it first)' % th)
        sides.append((build, th))
    print('%s (A) vs %s (B), %s thread(s), %d runs each (median)\n' % (A, B, run.THREADS, run.RUNS))
    rows, failures = [], []
    for name in names:
        lua_file = os.path.join(run.HERE, name + '.lua')
        first = open(lua_file).readline()
        if first.startswith('-- gpu'):
            continue
        whole = first.startswith('-- whole-process')
        samples, checks = {b: {} for b, _ in sides}, {}
        try:
            for _, th in sides:
                run.run_side([th, lua_file], whole)      # warm-up
            for _ in range(run.RUNS):
                for build, th in sides:
                    times, checks[build], _, _ = run.run_side([th, lua_file], whole)
                    for case, t in times.items():
                        samples[build].setdefault(case, []).append(t)
        except RuntimeError as e:                       # a bench that cannot run here: said, then the next
            failures.append(name)
            print('!!! %s: %s' % (name, str(e).splitlines()[0]), flush=True)
            continue
        mismatch = run.compare(checks[A], checks[B])
        if mismatch:
            failures.append(name)
            print('!!! %s: RESULTS DIFFER between the builds:\n    %s' % (name, '\n    '.join(mismatch)))
        for case in sorted(samples[A]):
            ta = statistics.median(samples[A][case])
            tb = statistics.median(samples[B].get(case, [float('nan')]))
            label = name if case == 'main' else '%s %s' % (name, case)
            rows.append((label, ta, tb))
            print('%-44s A %10s  B %10s  B/A %6.3f' % (label, run.fmt(ta), run.fmt(tb), tb / ta), flush=True)
    print('\n| benchmark | %s | %s | B/A |' % (A, B))
    print('|---|---|---|---|')
    for label, ta, tb in rows:
        print('| %s | %s | %s | %.3f |' % (label, run.fmt(ta), run.fmt(tb), tb / ta))
    if failures:
        print('\nbuilds: failed or differ: %s' % ', '.join(failures))
        sys.exit(1)


if __name__ == '__main__':
    main()
