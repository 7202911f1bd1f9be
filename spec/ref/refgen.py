# refgen.py: how the reference-value generators under spec/ref write their files.
#
#   python3 spec/ref/gen_X.py           rewrites spec/ref/X_ref.lua
#   python3 spec/ref/gen_X.py --check   changes nothing; exits 1 when the file differs
#
# Another PyTorch version (or libm) moves some values in their last digits. Such
# noise is not a change: a number within TOLERANCE of the committed one keeps its
# committed spelling, so regenerating reproduces the committed file, and a diff
# shows only values that really moved and the lines of new or removed cases (lines
# are matched by their text without the numbers). The header line that names the PyTorch version is kept too
# unless something else changed.
import difflib, math, os, re, sys, tempfile

TOLERANCE = 1e-6          # relative, or absolute below 1e-30
NUMBER = re.compile(r'(?<![\w.])-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])')


def _split(text):
    """(skeleton, numbers): the text with each number replaced by a mark, and the numbers."""
    numbers = NUMBER.findall(text)
    return NUMBER.sub('\0', text), numbers


def _close(a, b):
    x, y = float(a), float(b)
    if x == y or (math.isnan(x) and math.isnan(y)):
        return True
    return abs(x - y) <= TOLERANCE * max(abs(x), abs(y), 1e-30)


def _merge_line(committed, generated):
    (gs, gn), (cs, cn) = _split(generated), _split(committed)
    if gs != cs or len(gn) != len(cn):
        return generated
    kept = iter([c if _close(c, g) else g for c, g in zip(cn, gn)])
    return re.sub('\0', lambda _: next(kept), gs)


def merge(committed, generated):
    """generated, with committed's spelling of every number that did not move: lines are
    matched by their text without numbers (so added or removed cases leave the other lines
    as they were), and a matched line keeps each committed number within TOLERANCE."""
    com, gen = committed.split('\n'), generated.split('\n')
    if not com or not gen:
        return generated
    skel = lambda lines: [_split(line)[0] for line in lines[1:]]
    out = []
    matcher = difflib.SequenceMatcher(None, skel(com), skel(gen), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == 'equal':
            out += [_merge_line(com[1 + i1 + k], gen[1 + j1 + k]) for k in range(j2 - j1)]
        else:
            out += gen[1 + j1:1 + j2]
    body = '\n'.join(out)
    header = com[0] if body == '\n'.join(com[1:]) else gen[0]
    return header + '\n' + body


def finish(path, lines):
    """Writes '\n'.join(lines) to path (atomically), merged with what path holds;
    with --check on the command line, writes nothing and exits 1 on a difference."""
    generated = '\n'.join(lines) + '\n'
    committed = open(path).read() if os.path.exists(path) else ''
    text = merge(committed, generated) if committed else generated
    if '--check' in sys.argv[1:]:
        if text == committed:
            print('%s: reproduced' % path)
            return
        old, new = committed.split('\n'), text.split('\n')
        for i, (a, b) in enumerate(zip(old, new)):
            if a != b:
                print('%s:%d differs\n  committed: %s\n  generated: %s' % (path, i + 1, a[:200], b[:200]))
                break
        else:
            print('%s: %d lines committed, %d generated' % (path, len(old), len(new)))
        sys.exit(1)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.realpath(path)), prefix='.refgen-')
    with os.fdopen(fd, 'w') as f:
        f.write(text)
    os.replace(tmp, os.path.realpath(path))
    print('wrote %s' % path)
