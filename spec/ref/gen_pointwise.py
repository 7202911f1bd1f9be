# Generates the reference data block of spec/pointwise_spec.lua with PyTorch.
import math, torch, warnings
warnings.filterwarnings('ignore')

UNARY_FLOAT = ['exp','expm1','log','log1p','log2','log10','sqrt','rsqrt','sin','cos','tan','asin','acos',
               'atan','sinh','cosh','tanh','sigmoid','erf','erfc','reciprocal','gelu','gelu_tanh','silu','frac']
UNARY_ROUND = ['floor','ceil','round','trunc']
UNARY_SAME = ['neg','abs','sign','relu','square']
UNARY_BOOL = ['isnan','isinf','isfinite','logical_not']
BINARY = ['add','sub','mul','maximum','minimum','fmod','remainder','pow']
BINARY_FLOAT = ['div','atan2']
COMPARE = ['eq','ne','lt','le','gt','ge','logical_and','logical_or','logical_xor']
DT = {'float32': torch.float32, 'float64': torch.float64, 'float16': torch.float16, 'bfloat16': torch.bfloat16,
      'int8': torch.int8, 'uint8': torch.uint8, 'int16': torch.int16, 'int32': torch.int32, 'int64': torch.int64,
      'bool': torch.bool}
NAME = {v: k for k, v in DT.items()}
FLOATS = ['float32', 'float64', 'float16', 'bfloat16']
INTS = ['int64', 'int32', 'uint8']
DIGITS = {'float32': 9, 'float64': 17, 'float16': 5, 'bfloat16': 4}

def fn(op):
    if op == 'gelu_tanh':
        return lambda x: torch.nn.functional.gelu(x, approximate='tanh')
    if op in ('gelu', 'silu', 'relu'):
        return getattr(torch.nn.functional, op)
    return getattr(torch, op)

def num(v, dt):
    if isinstance(v, bool): return 'true' if v else 'false'
    if isinstance(v, int): return str(v)
    if math.isnan(v): return 'NAN'
    if math.isinf(v): return 'INF' if v > 0 else '-INF'
    s = '%.*g' % (DIGITS.get(dt, 17), v)
    return s

def vals(t):
    dt = NAME[t.dtype]
    lst = t.flatten().tolist()
    return '{' + ', '.join(num(v, dt) for v in lst) + '}'

def result(f):
    try:
        r = f()
    except Exception:
        return 'ERR'
    return "{'%s', %s}" % (NAME[r.dtype], vals(r))

FLOAT_IN = [-2.5, -1.0, -0.5, 0.0, 0.3, 0.5, 1.0, 1.5, 2.5, 3.7]
INT_IN = [-3, -1, 0, 1, 2, 7]
UINT8_IN = [0, 1, 2, 3, 7, 200]
BOOL_IN = [True, False, True, True, False, False]

def input_for(dt):
    if dt in FLOATS: return torch.tensor(FLOAT_IN, dtype=DT[dt]).reshape(2, 5)
    if dt == 'uint8': return torch.tensor(UINT8_IN, dtype=torch.uint8).reshape(2, 3)
    if dt == 'bool': return torch.tensor(BOOL_IN).reshape(2, 3)
    return torch.tensor(INT_IN, dtype=DT[dt]).reshape(2, 3)

out = []
w = out.append
w('-- Generated with PyTorch %s (see the header comment); do not edit by hand.' % torch.__version__.split('+')[0])
w('local NAN, INF, ERR = 0 / 0, math.huge, false')
w('local REF = {}')
w('REF.unary_input = {float = {%s}, int = {%s}, uint8 = {%s}, bool = {%s}}' % (
    ', '.join(num(v, 'float64') for v in FLOAT_IN), ', '.join(map(str, INT_IN)),
    ', '.join(map(str, UINT8_IN)), ', '.join('true' if b else 'false' for b in BOOL_IN)))
w('REF.unary = {')
for op in UNARY_FLOAT + UNARY_ROUND + UNARY_SAME + UNARY_BOOL:
    w('  %s = {' % op)
    for dt in FLOATS + INTS + ['bool']:
        w('    %s = %s,' % (dt, result(lambda: fn(op)(input_for(dt)))))
    w('  },')
w('}')

FA = [-2.5, -1.0, 0.0, 0.5, 3.0, 7.25]
FB = [2.0, -0.5, 0.0, 1.5, -3.0, 0.75]
IA = [-7, -1, 0, 3, 5, 10]
IB = [2, -3, 1, 4, -2, 3]
UA = [0, 1, 2, 3, 5, 10]
UB = [2, 3, 1, 4, 2, 3]
BA = [True, False, True, False, True, False]
BB = [True, True, False, False, True, False]

def pair(dt):
    if dt in FLOATS: a, b = FA, FB
    elif dt == 'uint8': a, b = UA, UB
    elif dt == 'bool': a, b = BA, BB
    else: a, b = IA, IB
    return torch.tensor(a, dtype=DT[dt]).reshape(2, 3), torch.tensor(b, dtype=DT[dt]).reshape(2, 3)

w('REF.binary_input = {')
w('  float = {{%s}, {%s}},' % (', '.join(num(v, 'float64') for v in FA), ', '.join(num(v, 'float64') for v in FB)))
w('  int = {{%s}, {%s}},' % (', '.join(map(str, IA)), ', '.join(map(str, IB))))
w('  uint8 = {{%s}, {%s}},' % (', '.join(map(str, UA)), ', '.join(map(str, UB))))
w('  bool = {{%s}, {%s}},' % (', '.join('true' if v else 'false' for v in BA), ', '.join('true' if v else 'false' for v in BB)))
w('}')
w('REF.binary = {')
for op in BINARY + BINARY_FLOAT + COMPARE:
    w('  %s = {' % op)
    for dt in FLOATS + INTS + ['bool']:
        a, b = pair(dt)
        w('    %s = %s,' % (dt, result(lambda: fn(op)(a, b))))
    w('  },')
w('}')

# broadcasting: a (2x3) with b's first row (3) and with b's first column (2x1)
w('REF.broadcast = {')
for op in BINARY + BINARY_FLOAT + COMPARE:
    parts = []
    for dt in ['float32', 'int64']:
        a, b = pair(dt)
        parts.append('%s = {row = %s, col = %s, row_left = %s}' % (dt,
            result(lambda: fn(op)(a, b[0])), result(lambda: fn(op)(a, b[:, :1])),
            result(lambda: fn(op)(b[0], a))))
    w('  %s = {%s},' % (op, ', '.join(parts)))
w('}')

# Lua numbers on either side: x op 2, x op 2.5, 2 op x, 2.5 op x
w('REF.scalar = {')
for op in BINARY + BINARY_FLOAT + COMPARE:
    parts = []
    for dt in ['float32', 'int64', 'uint8']:
        a, _ = pair(dt)
        # ops whose Python API takes no number: a 0-dim tensor, which promotes
        # as a wrapped number would for these dtypes (int64 / default float)
        takes_number = op in ('add', 'sub', 'mul', 'div', 'pow', 'fmod', 'remainder', 'eq', 'ne', 'lt', 'le', 'gt', 'ge')
        def right(s): return result(lambda: fn(op)(a, s if takes_number else torch.tensor(s)))
        # a number on the left: torch.tensor(s) promotes as a wrapped number
        # would for these dtypes (int64 / default float 0-dim)
        def left(s): return result(lambda: torch.pow(s, a) if op == 'pow' else fn(op)(torch.tensor(s), a))
        parts.append('%s = {int = %s, float = %s, int_left = %s, float_left = %s}' % (
            dt, right(2), right(2.5), left(2), left(2.5)))
    w('  %s = {%s},' % (op, ', '.join(parts)))
w('}')

# div with rounding_mode (the MT_BINARY_DIV_OPS list): the binary, broadcast
# and number forms above, per mode
w('REF.rounded_div = {')
for mode in ['floor', 'trunc']:
    def div(a, b, mode=mode): return torch.div(a, b, rounding_mode=mode)
    w('  %s = {' % mode)
    w('    binary = {')
    for dt in FLOATS + INTS + ['bool']:
        a, b = pair(dt)
        w('      %s = %s,' % (dt, result(lambda: div(a, b))))
    w('    },')
    parts = []
    for dt in ['float32', 'int64']:
        a, b = pair(dt)
        parts.append('%s = {row = %s, col = %s, row_left = %s}' % (dt,
            result(lambda: div(a, b[0])), result(lambda: div(a, b[:, :1])), result(lambda: div(b[0], a))))
    w('    broadcast = {%s},' % ', '.join(parts))
    parts = []
    for dt in ['float32', 'int64', 'uint8']:
        a, _ = pair(dt)
        parts.append('%s = {int = %s, float = %s, int_left = %s, float_left = %s}' % (dt,
            result(lambda: div(a, 2)), result(lambda: div(a, 2.5)),
            result(lambda: div(torch.tensor(2), a)), result(lambda: div(torch.tensor(2.5), a))))
    w('    scalar = {%s},' % ', '.join(parts))
    w('  },')
w('}')

# result types: rows = first operand dtype, columns = second, in DTYPES order
DTYPES = ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8', 'int16', 'int32', 'int64', 'bool']
def rt(a, b):
    return NAME[torch.result_type(a, b)]
def mk(dt, zero):
    return torch.zeros((), dtype=DT[dt]) if zero else torch.zeros(2, dtype=DT[dt])
w('REF.dtypes = {%s}' % ', '.join("'%s'" % d for d in DTYPES))
for key, za, zb in [('dim_dim', False, False), ('dim_zero', False, True), ('zero_zero', True, True)]:
    w('REF.promote_%s = {' % key)
    for da in DTYPES:
        w("  %s = {%s}," % (da, ', '.join("'%s'" % rt(mk(da, za), mk(db, zb)) for db in DTYPES)))
    w('}')
for key, zero in [('dim', False), ('zero', True)]:
    w('REF.promote_%s_scalar = {' % key)
    for da in DTYPES:
        w("  %s = {int = '%s', float = '%s', bool = '%s'}," % (da, rt(mk(da, zero), 2), rt(mk(da, zero), 2.5), rt(mk(da, zero), True)))
    w('}')
print('\n'.join(out))
