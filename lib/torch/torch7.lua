-- Torch7's forms of the torch package, in both dialects, and the Torch7
-- dialect itself (th --torch7, torch.dialect('torch7'), TH_DIALECT=torch7).
--
-- Both dialects: result-tensor-first calls (torch.add(res, a, b),
-- torch.max(values, indices, x, 2), torch.addmm(res, beta, M, alpha, a, b)),
-- Torch7's names (cinv, csub, cpow, nDimension, ...), the number draws and
-- in-place fills of the random generator.
--
-- The Torch7 dialect changes the answers where the two disagree, and only
-- for the user's code: moontorch's own libraries (torch, nn, optim, data,
-- ...) always see PyTorch's, so that they work the same in both. Every
-- switch point is in this file, in the `dialect` section, and docs/torch7.md
-- lists them.
local torch = require 'torch.core'
local methods = torch._methods
local is_tensor = torch.is_tensor
local at_caller = torch._at_caller
local error_text = torch._error_text

-- f(...) for a wrapper that passes a call through: its error is raised at
-- the wrapper's caller (a binding called from Lua names the Lua line that
-- called it, which would be the wrapper's). One result, or two.
-- Called through pcall, a binding's argument errors cannot name it: the
-- name goes back in.
local function reraise(name, r) error(error_text(r, name), 4) end
local function pass1(name, f, ...)
  local ok, r = pcall(f, ...)
  if ok then return r end
  reraise(name, r)
end
-- f(...) from a wrapper that works on the result (not in tail position): an
-- error is raised at the wrapper's caller, naming the op.
local function call_named(name, f, ...)
  local res = table.pack(pcall(f, ...))
  if res[1] then return table.unpack(res, 2, res.n) end
  error(error_text(res[2], name), 3)
end
local function pass2(name, f, ...)
  local ok, r, r2 = pcall(f, ...)
  if ok then return r, r2 end
  reraise(name, r)
end

-- what the torch table and the tensor methods held before this file: a
-- wrapper of one of them is documented by its text (torch._help_alias)
local before = {torch = {}, methods = {}}
for k, v in pairs(torch) do before.torch[k] = v end
for k, v in pairs(methods) do before.methods[k] = v end

-- ---- which code is calling: the user's, or moontorch's own ----
local here = debug.getinfo(1, 'S').source
local lib_root = here:match('^(@.*[/\\])torch[/\\]torch7%.lua$')
local own_packages = {torch = true, nn = true, optim = true, data = true, distributed = true,
                      paths = true, sys = true, xlua = true, nngraph = true}
local library_source = {}

local function source_in_library(src)
  local known = library_source[src]
  if known == nil then
    known = false
    if lib_root and src:sub(1, #lib_root) == lib_root then
      known = own_packages[src:sub(#lib_root + 1):match('^([%w_]+)[/\\]')] or false
    end
    library_source[src] = known
  end
  return known
end

-- each Lua function met up the stack -> whether it is one of the libraries' (weak keys)
local function_in_library = setmetatable({}, {__mode = 'k'})
local caller_function = torch._caller_function

-- true when the first Lua function up the stack from `level` (1: the
-- caller of the function calling this) is a file of moontorch's libraries
local function from_library(level)
  local f = caller_function(level + 2)
  if f == nil then return false end
  local known = function_in_library[f]
  if known == nil then
    known = source_in_library(debug.getinfo(f, 'S').source)
    function_in_library[f] = known
  end
  return known
end

-- The Torch7 dialect's lift of autograd's refusals (src/autograd: writing in
-- place into a leaf that requires grad, resizing or set-ing one): Torch7 had
-- no autograd, so the user's code writes into a module's parameters as into
-- any tensor, and the write happens as under no_grad. Called by the engine
-- at the refusal only (level 2: the binding refusing); the torch package's
-- own files are passed over (their wrappers write for their caller), and the
-- first frame past them decides: moontorch's libraries keep the refusal.
local torch_dir = lib_root and lib_root .. 'torch/'
local function user_writes()
  local level = 2
  while true do
    local info = debug.getinfo(level, 'S')
    if not info then return false end
    local src = info.source
    if info.what ~= 'C' and not (torch_dir and src:sub(1, #torch_dir) == torch_dir) then
      return not from_library(level - 1)       -- from_library's level 1 is two frames up
    end
    level = level + 1
  end
end

-- the dialect and its forms (set in the dialect section below)
local dialect = 'pytorch'
local t7form = {}
local fits

-- ---- result-tensor-first forms (both dialects) ----

-- a tensor's size as 2x3 ('[]' for 0-dim)
local function size_text(x)
  local d = {}
  for i = 1, x:dim() do d[i] = tostring(x:size(i)) end
  return #d == 0 and '[]' or table.concat(d, 'x')
end

-- r's values into res, res resized to r's size as Torch7 did
local function into(res, r)
  if not is_tensor(r) then
    res:resize_(1)
    res:fill_(r)
    return res
  end
  if not res:isSameSizeAs(r) then res:resize_(r:size()) end
  res:copy_(r)
  return res
end

-- Wraps torch[name] and methods[name] (when present) so that a call whose
-- arguments `is_rf(...)` recognises as the result-first form computes
-- f(the rest) into the leading `nres` tensors. `method_rf` says the same
-- of a method call's arguments after self (self then being the result);
-- `method_inplace`, when given, is what a method call that is not
-- result-first does in the Torch7 dialect (Torch7's methods of the math
-- functions write into self).
local result_first = {}

-- torch[name] = a gate in front of f (torch._gate, src/vm/lt_gate.c): calls
-- whose argument types may be another form (kind, k: the first k arguments
-- are userdata; or the first is, with at least k positional ones; or the
-- first is a number; or every call) go to handler(...), which answers
-- true, results... or declines with false; the others reach f directly.
local GATE_LEAD, GATE_NARGS, GATE_FIRST_NUM, GATE_ALWAYS = 0, 1, 2, 3

-- f(...) inside a gate's handler: an error goes up with no position (the
-- gate adds the caller's)
local function in_gate(f, ...)
  local res = table.pack(pcall(f, ...))
  if res[1] then return table.unpack(res, 2, res.n) end
  error(error_text(res[2]), 0)
end
local function gated(name, f, kind, k, handler)
  local g = torch._gate(f, handler, kind, k, name)
  torch._help_alias(g, f)
  torch[name] = g
  return g
end

-- g(the arguments after the nres results) into the results; binary: the
-- second operand takes the first's shape when they count alike (Torch7)
-- An error is raised at `level` above rf_apply's caller (0: with no position,
-- for a gate, which adds the caller's).
local function rf_apply(level, g, nres, binary, ...)
  local res = {...}
  local args = table.pack(select(nres + 1, ...))
  if binary then args[2] = fits(args[1], args[2]) end
  local out = table.pack(pcall(g, table.unpack(args, 1, args.n)))
  if not out[1] then error(error_text(out[2]), level == 0 and 0 or level + 1) end
  for i = 1, nres do into(res[i], out[i + 1]) end
  return table.unpack(res, 1, nres)
end

local function rf(name, nres, is_rf, spec, opts)
  opts = opts or {}
  local f = rawget(torch, name) or methods[name]
  if not f then return end
  result_first[name] = {f = f, nres = nres, is_rf = is_rf, opts = opts}
  gated(name, f, spec[1], spec[2], function(...)
    if not is_rf(...) then return false end
    local g, binary = f, false
    if dialect == 'torch7' and not from_library(1) then g, binary = t7form[name] or f, opts.binary end
    return true, rf_apply(0, g, nres, binary, ...)
  end)
end

local function T(v) return is_tensor(v) end
local function N(v) return type(v) == 'number' end

-- unary: torch.abs(res, x)
local unary = {'abs', 'exp', 'log', 'log1p', 'log2', 'log10', 'expm1', 'sqrt', 'rsqrt', 'sin', 'cos', 'tan',
               'asin', 'acos', 'atan', 'sinh', 'cosh', 'tanh', 'sigmoid', 'floor', 'ceil', 'round', 'trunc',
               'frac', 'neg', 'sign', 'reciprocal', 'erf', 'erfinv', 'lgamma', 'digamma', 'exp2'}
for _, name in ipairs(unary) do rf(name, 1, function(a, b) return T(a) and T(b) end, {GATE_LEAD, 2}) end

-- binary: torch.cmul(res, a, b), torch.mul(res, a, value), torch.pow(res, value, x)
local binary = {'mul', 'div', 'cmul', 'cdiv', 'pow', 'fmod', 'remainder', 'atan2', 'cmax', 'cmin',
                'maximum', 'minimum', 'bitand', 'bitor', 'bitxor', 'cbitand', 'cbitor', 'cbitxor', 'lshift',
                'rshift', 'clshift', 'crshift', 'bitwise_and', 'bitwise_or', 'bitwise_xor',
                'bitwise_left_shift', 'bitwise_right_shift'}
for _, name in ipairs(binary) do
  rf(name, 1, function(r, a, b) return T(r) and (T(a) or N(a)) and (T(b) or N(b)) and (T(a) or T(b)) end,
     {GATE_NARGS, 3}, {binary = true})
end

-- comparisons: torch.gt(res, a, b), res:gt(a, b): a's test against b as 0s
-- and 1s in res's own type (Torch7's res:gt(x, 0) on a DoubleTensor gives
-- doubles, which nn's tests multiply with); with no result, a mask as before
for _, name in ipairs({'eq', 'ne', 'lt', 'le', 'gt', 'ge'}) do
  rf(name, 1, function(r, a, b) return T(r) and T(a) and (T(b) or N(b)) end, {GATE_NARGS, 3}, {binary = true})
end

-- everything taking a tensor and more arguments that are not tensors:
-- torch.sum(res, x, 2), torch.cumsum(res, x, 2), torch.tril(res, x, k) ...
local unary_more = {'sum', 'prod', 'mean', 'cumsum', 'cumprod', 'std', 'var', 'norm', 'tril', 'triu', 'diag',
                    'renorm', 'logsumexp', 'nonzero', 'histc', 'bhistc', 'all', 'any'}
local function no_grad_result(r) return not r.requires_grad end
for _, name in ipairs(unary_more) do
  rf(name, 1, function(r, x) return T(r) and T(x) and no_grad_result(r) end, {GATE_LEAD, 2})
end
-- torch.reshape(res, x, sizes)
rf('reshape', 1, function(r, x, s) return T(r) and T(x) and s ~= nil and no_grad_result(r) end, {GATE_LEAD, 2})

-- clamp(res, x, lo, hi): PyTorch's clamp(x, tmin, tmax) takes tensor bounds
rf('clamp', 1, function(r, x, lo, hi) return T(r) and T(x) and N(lo) and N(hi) and no_grad_result(r) end,
   {GATE_LEAD, 2})

-- products: torch.mm(res, a, b), mv, bmm, ger/outer, dot is a number
for _, name in ipairs({'mm', 'mv', 'bmm', 'outer', 'ger', 'matmul', 'kron'}) do
  rf(name, 1, function(r, a, b) return T(r) and T(a) and T(b) end, {GATE_LEAD, 3})
end

-- selections with values and indices: torch.max(values, indices, x, dim),
-- sort, topk, kthvalue, median, mode
for _, name in ipairs({'max', 'min', 'sort', 'topk', 'kthvalue', 'median', 'mode'}) do
  rf(name, 2, function(v, i, x) return T(v) and T(i) and T(x) end, {GATE_LEAD, 3})
end

-- index ops: torch.gather(res, x, dim, index), index_select/index(res, x, dim, idx), masked_select
for _, name in ipairs({'gather', 'index_select', 'index'}) do
  rf(name, 1, function(r, x, d, i) return T(r) and T(x) and N(d) and T(i) end, {GATE_LEAD, 2})
end
for _, name in ipairs({'masked_select', 'maskedSelect', 'take'}) do
  rf(name, 1, function(r, x, m) return T(r) and T(x) and T(m) end, {GATE_LEAD, 3})
end

-- r's values into res in res's own geometry when they have as many elements
-- (Torch7's range, linspace, logspace write into a view), else as into
local function into_same_count(res, r)
  if T(r) and res:numel() == r:numel() and not res:isSameSizeAs(r) then
    res:copy_(r:reshape(res:size()))
    return res
  end
  return into(res, r)
end

-- x:range(a, b [, step]), x:linspace(a, b [, n]), x:logspace(a, b [, n]):
-- Torch7's methods writing into x
for _, name in ipairs({'range', 'linspace', 'logspace'}) do
  local f = torch[name]
  if rawget(methods, name) == nil then
    methods[name] = function(x, ...)
      if not T(x) then error(string.format('%s: self must be a tensor, got %s', name, torch.type(x)), 2) end
      local args = table.pack(...)
      args.n = args.n + 1
      args[args.n] = {dtype = x.dtype}
      return into_same_count(x, call_named(name, f, table.unpack(args, 1, args.n)))
    end
  end
end

-- creation: torch.zeros(res, sizes), ones, rand, randn, eye, linspace,
-- logspace, range, arange, randperm: a tensor first is the result
for _, name in ipairs({'zeros', 'ones', 'rand', 'randn', 'eye', 'linspace', 'logspace', 'range', 'arange',
                       'randperm'}) do
  rf(name, 1, function(r, a, b) return T(r) and not T(a) and not T(b) end, {GATE_LEAD, 1})
end

-- add and sub: torch.add(res, a, b), (res, a, value, b); (res, a, value)
-- is PyTorch's add(a, b, alpha) in the PyTorch dialect. Torch7's
-- torch.add(a, value, b) is a + value * b.
for _, name in ipairs({'add', 'sub', 'csub'}) do
  local f = rawget(torch, name) or methods[name]
  if f then
    local base = name == 'csub' and torch.sub or f
    gated(name, f, GATE_NARGS, 3, function(...)
      local n = select('#', ...)
      local r, a, b, c = ...
      if T(r) and (T(a) or N(a)) and n <= 4 then
        if T(b) and n == 3 and T(a) then return true, into(r, in_gate(base, a, b)) end
        if N(b) and T(c) and n == 4 then return true, into(r, in_gate(base, a, c, b)) end
        if N(b) and n == 3 and T(a) and dialect == 'torch7' and not from_library(1) then
          return true, into(r, in_gate(base, a, b))
        end
        if N(a) and T(b) and n == 3 then return true, in_gate(base, r, b, a) end   -- add(x, value, y)
      end
      return false
    end)
  end
end

-- lerp(res, a, b, w)
rf('lerp', 1, function(r, a, b, w) return T(r) and T(a) and T(b) and (N(w) or T(w)) end, {GATE_LEAD, 3})
-- torch.lerp(a, b, w) of numbers: a + w * (b - a), a number (Torch7)
do
  local lerp = torch.lerp
  gated('lerp', lerp, GATE_FIRST_NUM, 3, function(a, b, w, ...)
    if N(a) and N(b) and N(w) and select('#', ...) == 0 then return true, a + w * (b - a) end
    return false
  end)
end
-- conv2(res, x, k [, mode]) and xcorr2, conv3, xcorr3
for _, name in ipairs({'conv2', 'xcorr2', 'conv3', 'xcorr3'}) do
  rf(name, 1, function(r, x, k) return T(r) and T(x) and T(k) end, {GATE_LEAD, 3})
end
-- cross(res, a, b [, dim])
rf('cross', 1, function(r, a, b) return T(r) and T(a) and T(b) end, {GATE_LEAD, 3})

-- addcmul / addcdiv: torch.addcmul([res,] x, [value,] t1, t2)
for _, name in ipairs({'addcmul', 'addcdiv'}) do
  local f = rawget(torch, name) or methods[name]
  if f then
    gated(name, f, GATE_NARGS, 4, function(...)
      local args = table.pack(...)
      local res, at = nil, 1
      local tensors = 0
      for i = 1, args.n do if T(args[i]) then tensors = tensors + 1 end end
      if tensors == 4 then res, at = args[1], 2 end
      local x = args[at]
      local value, t1, t2 = 1, args[at + 1], args[at + 2]
      if N(t1) then value, t1, t2 = t1, args[at + 2], args[at + 3]
      elseif type(args[at + 3]) == 'table' and not T(args[at + 3]) then return false
      elseif N(args[at + 3]) and not res then return false end               -- PyTorch's (x, t1, t2, value)
      local r = in_gate(f, x, t1, t2, {value = value})
      if res then return true, into(res, r) end
      return true, r
    end)
  end
end

-- Torch7's add* products with positional scalars:
-- torch.addmm([res,] [beta,] M, [alpha,] a, b) and addmv, addr, addbmm, baddbmm
local function positional_product(name)
  local f = rawget(torch, name) or methods[name]
  if not f then return end
  gated(name, f, GATE_NARGS, 4, function(...)
    local args = table.pack(...)
    local last = args[args.n]
    if type(last) == 'table' and not T(last) then return false end           -- PyTorch's options table
    local tensors, numbers = {}, {}
    for i = 1, args.n do
      local v = args[i]
      if T(v) then tensors[#tensors + 1] = v
      elseif N(v) then numbers[#numbers + 1] = {v, #tensors}
      elseif v ~= nil then error(string.format('%s: unexpected argument %d (%s)', name, i, type(v)), 2) end
    end
    if #numbers == 0 and #tensors <= 3 then return false end
    if #tensors ~= 3 and #tensors ~= 4 then
      error(string.format('%s: expects ([res,] [beta,] M, [alpha,] a, b), got %d tensors', name, #tensors), 2)
    end
    local res = #tensors == 4 and tensors[1] or nil
    local first = res and 1 or 0                  -- tensors before M
    local beta, alpha = 1, 1
    for _, p in ipairs(numbers) do
      if p[2] == first then beta = p[1]
      elseif p[2] == first + 1 then alpha = p[1]
      else error(string.format('%s: a number after the matrices', name), 2) end
    end
    local r = in_gate(f, tensors[first + 1], tensors[first + 2], tensors[first + 3], {beta = beta, alpha = alpha})
    if res then return true, into(res, r) end
    return true, r
  end)
end
for _, name in ipairs({'addmm', 'addmv', 'addr', 'addbmm', 'baddbmm'}) do positional_product(name) end

-- torch.cat([res,] x1, x2, [dim]) and torch.cat(res, {x1, x2, ...}, [dim]);
-- with no dim, Torch7's cat joins along the last dim (a switch point: PyTorch's
-- joins along the first)
local cat_gates
local function cat_default_dim(list)
  if dialect ~= 'torch7' or from_library(2) then return 1 end
  local d = 1
  for _, t in ipairs(list) do if T(t) and t:dim() > d then d = t:dim() end end
  return d
end
do
  local raw_cat = torch.cat
  -- in the Torch7 dialect empty vectors join nothing, whatever the dim, and
  -- take no part in the result's type (Torch7's empty tensors have no dims)
  local function cat(list, ...)
    if dialect ~= 'torch7' or type(list) ~= 'table' or T(list) or getmetatable(list) ~= nil then
      return raw_cat(list, ...)
    end
    local kept, dropped = {}, false
    for i = 1, #list do
      local t = list[i]
      if T(t) and t:dim() == 1 and t:numel() == 0 then dropped = true else kept[#kept + 1] = t end
    end
    if not dropped then return raw_cat(list, ...) end
    if #kept == 0 then return list[1]:clone() end
    return raw_cat(kept, ...)
  end
  local function list_form(v) return type(v) == 'table' and not T(v) end
  local function handler(...)
    local n = select('#', ...)
    local a, b, c, d = ...
    if T(a) and list_form(b) and (n == 2 or n == 3 and N(c)) then          -- cat(res, {x1, x2}, dim)
      return true, into(a, in_gate(cat, b, c or cat_default_dim(b)))
    end
    if T(a) and T(b) and T(c) and (n == 3 or n == 4 and N(d)) then         -- cat(res, x1, x2, dim)
      return true, into(a, in_gate(cat, {b, c}, d or cat_default_dim({b, c})))
    end
    if T(a) and T(b) and (n == 2 or n == 3 and N(c)) then                   -- cat(x1, x2, dim)
      return true, in_gate(cat, {a, b}, c or cat_default_dim({a, b}))
    end
    if dialect == 'torch7' and list_form(a) and (n == 1 or n == 2 and N(b)) then
      return true, in_gate(cat, a, b or cat_default_dim(a))
    end
    return false
  end
  -- the PyTorch dialect looks only at calls with a tensor first; the Torch7
  -- dialect at every one (a list's default dim and its empty vectors)
  cat_gates = {pytorch = torch._gate(raw_cat, handler, GATE_LEAD, 1, 'cat'),
               torch7 = torch._gate(raw_cat, handler, GATE_ALWAYS, 0, 'cat')}
  torch._help_alias(cat_gates.pytorch, raw_cat)
  torch._help_alias(cat_gates.torch7, raw_cat)
  torch.cat = cat_gates.pytorch
  torch.catArray = torch.cat
end

-- torch.split([result,] x, size [, dim]) and torch.chunk([result,] x, n [, dim]):
-- a table first receives the pieces
for _, name in ipairs({'split', 'chunk'}) do
  local f = torch[name]
  gated(name, f, GATE_ALWAYS, 0, function(result, ...)
    if type(result) == 'table' and not T(result) and getmetatable(result) == nil and T((...)) then
      local pieces = table.pack(in_gate(f, ...))
      if pieces.n == 1 and type(pieces[1]) == 'table' then pieces = pieces[1] end
      for k in pairs(result) do result[k] = nil end
      for i, p in ipairs(pieces) do result[i] = p end
      return true, result
    end
    return false
  end)
end

-- ---- names Torch7 had ----
local function alias(new, old)
  if methods[old] ~= nil and rawget(methods, new) == nil then methods[new] = methods[old] end
  if rawget(torch, old) ~= nil and rawget(torch, new) == nil then torch[new] = torch[old] end
  if methods[old .. '_'] ~= nil and rawget(methods, new .. '_') == nil then methods[new .. '_'] = methods[old .. '_'] end
end
alias('cinv', 'reciprocal')
alias('csub', 'sub')
alias('cpow', 'pow')
alias('cfmod', 'fmod')
alias('cremainder', 'remainder')
alias('nDimension', 'dim')
alias('ger', 'outer')
alias('mod', 'fmod')        -- Torch7's deprecated names
alias('cmod', 'cfmod')
if rawget(methods, 'dist') == nil and rawget(torch, 'dist') ~= nil then methods.dist = torch.dist end
torch.isTensor = torch.is_tensor
-- torch.Tensor.isTensor(v), torch.FloatTensor.isTensor(v), ...: Torch7's
-- spelling of torch.isTensor on the typed constructors
for _, ctor in pairs(torch) do
  if type(ctor) == 'table' and type(rawget(ctor, '__typename')) == 'string' and rawget(ctor, '__typename'):match('Tensor$') then
    rawset(ctor, 'isTensor', torch.is_tensor)
  end
end
rawset(torch.Tensor, 'isTensor', torch.is_tensor)

function methods.isSameSizeAs(x, y)
  if not T(y) then error('isSameSizeAs: expects a tensor, got ' .. torch.type(y), 2) end
  if x:dim() ~= y:dim() then return false end
  for i = 1, x:dim() do if x:size(i) ~= y:size(i) then return false end end
  return true
end

-- x:isSize(sizes): the sizes as a table, torch.Size or LongStorage
function methods.isSize(x, sizes)
  if type(sizes) ~= 'table' and not torch.isStorage(sizes) then
    error('isSize: expects a table, torch.Size or LongStorage of sizes, got ' .. torch.type(sizes), 2)
  end
  local n = #sizes
  if x:dim() ~= n then return false end
  for i = 1, n do if x:size(i) ~= sizes[i] then return false end end
  return true
end

function methods.viewAs(x, y) return x:view(y:size()) end

-- x:apply(fn): fn(value) for every element in order; a value it returns
-- replaces the element. x:map(y, fn(xv, yv)) and x:map2(y, z, fn(xv, yv, zv))
-- the same over two and three tensors of one element count.
local function each(name, x, others, fn)
  if type(fn) ~= 'function' then error(name .. ': expects a function last', 3) end
  local n = x:numel()
  for _, o in ipairs(others) do
    if not T(o) then error(name .. ': expects tensors before the function', 3) end
    if o:numel() ~= n then
      error(string.format('%s: tensors of %d and %d elements', name, n, o:numel()), 3)
    end
  end
  if n == 0 then return x end
  local xs = x:contiguous()
  local flat = xs:view(-1)
  local vals = {}
  for k, o in ipairs(others) do vals[k] = o:contiguous():view(-1):totable() end
  local xv = flat:totable()
  local changed = false
  for i = 1, n do
    local r
    if #others == 0 then r = fn(xv[i])
    elseif #others == 1 then r = fn(xv[i], vals[1][i])
    else r = fn(xv[i], vals[1][i], vals[2][i]) end
    if r ~= nil then xv[i] = r; changed = true end
  end
  if changed then
    local src = torch.tensor(xv, {dtype = x.dtype})
    x:copy_(src:view(x:size()))
  end
  return x
end
function methods.apply(x, fn) return each('apply', x, {}, fn) end
function methods.map(x, y, fn) return each('map', x, {y}, fn) end
function methods.map2(x, y, z, fn) return each('map2', x, {y, z}, fn) end

-- x:real(): the default floating type's tensor (Torch7's real type)
function methods.real(x) return x:to(torch.get_default_dtype()) end

-- x:view(src, sizes...), x:viewAs(src, y), x:expand(src, sizes...),
-- x:expandAs(src, y), x:repeatTensor(src, sizes...): Torch7's forms with a
-- source tensor after self, which becomes the result (x takes its memory and
-- geometry, as x:set(result))
for _, name in ipairs({'view', 'viewAs', 'expand', 'expandAs', 'repeatTensor', 'reshape', 'unfold', 'narrow',
                       'select', 'transpose', 't', 'squeeze', 'unsqueeze', 'permute'}) do
  local f = methods[name]
  if f then
    local two = name == 'viewAs' or name == 'expandAs'
    local g = torch._gate(f, function(x, ...)
      local src = ...
      if T(x) and T(src) and (not two or T(select(2, ...))) then return true, x:set_(in_gate(f, ...)) end
      return false
    end, GATE_LEAD, two and 3 or 2, name)
    torch._help_alias(g, f)
    methods[name] = g
  end
end
-- torch.repeatTensor(res, src, sizes...): the result first
do
  local f = rawget(torch, 'repeatTensor')
  if f then
    local g = torch._gate(f, function(x, ...)
      if T(x) and T((...)) then return true, x:set_(in_gate(f, ...)) end
      return false
    end, GATE_LEAD, 2, 'repeatTensor')
    torch._help_alias(g, f)
    torch.repeatTensor = g
  end
end

-- x:cat({x1, x2, ...} [, dim]) and x:cat(x1, x2 [, dim]): Torch7's method form of
-- torch.cat with x the result; x:cat(y [, dim]) concatenates x and y
function methods.cat(x, ...)
  if not T(x) then error('cat: expects a tensor self, got ' .. torch.type(x), 2) end
  return (at_caller(torch.cat, x, ...))
end

-- torch.setheaptracking(bool): Torch7 let Lua's collector count the memory
-- of tensors; moontorch's collector always does (src/vm/lt_tensor.c pays
-- Lua's debt from the engine's allocations), so this records the flag only.
torch._heaptracking = true
function torch.setheaptracking(on) torch._heaptracking = on and true or false end
function torch.getheaptracking() return torch._heaptracking end

-- torch.pointer(obj): the address of a tensor's first element, a storage's,
-- or of any other Lua object, as an integer
function torch.pointer(obj)
  if T(obj) then return obj:data_ptr() end
  if torch.isStorage(obj) then return obj:_pointer() end
  local s = tostring(obj):match('0x%x+')
  return s and tonumber(s) or 0
end

-- torch.include(package, file): runs a package's file, as Torch7's
-- packages did to assemble themselves
function torch.include(pkg, file)
  if type(pkg) ~= 'string' or type(file) ~= 'string' then
    error(string.format('torch.include: expects a package name and a file name, got %s and %s', type(pkg), type(file)), 2)
  end
  local path = package.searchpath(pkg .. '.' .. file:gsub('%.lua$', ''), package.path)
  if not path then error(string.format("torch.include: no file '%s' in package '%s'", file, pkg), 2) end
  return dofile(path)
end

-- torch.serializeToStorage(obj [, format]) / torch.deserializeFromStorage(s):
-- torch.serialize's bytes in a CharStorage, and back
function torch.serializeToStorage(obj, format)
  local bytes = at_caller(torch.serialize, obj, format)
  return torch.CharStorage():string(bytes)
end
function torch.deserializeFromStorage(s, format)
  if not torch.isStorage(s) then error('deserializeFromStorage: expects a CharStorage, got ' .. torch.type(s), 2) end
  return at_caller(torch.deserialize, s:string(), format)
end

-- ---- the random generator: Torch7's names and forms ----
-- Torch7 takes a generator as the first argument of every draw:
-- torch.random(gen, 1, 10), x:uniform(gen, -1, 1), torch.rand(gen, 3).
local generator_mt = debug.getregistry()['torch.Generator']
local function is_generator(v) return getmetatable(v) == generator_mt end

-- (gen, ...) -> gen or nil, the rest
local function split_generator(...)
  local g = ...
  if is_generator(g) then return g, select(2, ...) end
  return nil, ...
end

-- torch.manualSeed([gen,] n), torch.seed([gen]), torch.initialSeed([gen])
function torch.manualSeed(...)
  local g, n = split_generator(...)
  if g then return g:manual_seed(n) end
  return torch.manual_seed(n)
end
-- torch.seed([gen]): seeds from a non-deterministic source; returns the seed
local seed = torch.seed
function torch.seed(g)
  if is_generator(g) then return g:seed() end
  return seed()
end
-- torch.initialSeed([gen]): the seed the generator was last seeded with
function torch.initialSeed(g)
  if is_generator(g) then return g:initial_seed() end
  return torch.initial_seed()
end
-- torch.getRNGState([gen]): a ByteTensor holding the generator's state
function torch.getRNGState(g)
  if is_generator(g) then return g:get_state() end
  return torch.get_rng_state()
end
-- torch.setRNGState([gen,] state): sets a generator's state back
function torch.setRNGState(...)
  local g, state = split_generator(...)
  if g then return g:set_state(state) end
  return torch.set_rng_state(state)
end

-- The tensor methods: x:uniform([gen,] a, b) fills x in place and returns x.
local samplers = {
  uniform = {'uniform_', 0, 1}, normal = {'normal_', 0, 1}, exponential = {'exponential_', 1},
  cauchy = {'cauchy_', 0, 1}, logNormal = {'log_normal_', 1, 2}, geometric = {'geometric_'},
}
for name, spec in pairs(samplers) do
  local inplace = methods[spec[1]]
  local function fill(x, ...)
    local g, a, b = split_generator(...)
    if a == nil then a = spec[2] end
    if b == nil then b = spec[3] end
    if a == nil then error(string.format('%s: expects a parameter', name), 3) end
    if g then return at_caller(inplace, x, a, b, {generator = g}) end
    return at_caller(inplace, x, a, b)
  end
  if rawget(methods, name) == nil then methods[name] = function(x, ...) return fill(x, ...) end end
  -- torch.uniform([gen,] a, b) ... : one number
  local number = function(...)
    local t = torch.empty(1, {dtype = 'float64'})
    fill(t, ...)
    return t[1]
  end
  if name == 'normal' then
    local normal = torch.normal
    gated('normal', normal, GATE_ALWAYS, 0, function(...)
      local g, a, b = split_generator(...)
      local n = select('#', ...)
      if g or n == 0 or (N(a) and n == 1) or (N(a) and N(b) and n == 2) then return true, number(...) end
      return false
    end)
  elseif name == 'uniform' then
    torch.uniform = number
  elseif rawget(torch, name) == nil then
    torch[name] = number
  end
end
methods.log_normal = methods.logNormal

-- x:random([gen,] [a,] b): integers in [a, b] (a = 1 by default), every
-- value of the dtype's range when none is given; torch.random(...) one
-- number the same way.
local random_ = methods.random_
local function random_fill(x, ...)
  local g, a, b = split_generator(...)
  local opts = g and {generator = g} or nil
  if a ~= nil and b == nil then a, b = 1, a end
  if a ~= nil then
    if not (math.type(a) == 'integer' or (N(a) and a == math.floor(a))) or not (N(b) and b == math.floor(b)) then
      error(string.format('random: bounds must be integers, got %s and %s', tostring(a), tostring(b)), 3)
    end
    if b < a then error(string.format('random: the range [%s, %s] is empty', tostring(a), tostring(b)), 3) end
    if opts then return at_caller(random_, x, math.tointeger(a), math.tointeger(b) + 1, opts) end
    return at_caller(random_, x, math.tointeger(a), math.tointeger(b) + 1)
  end
  if opts then return at_caller(random_, x, opts) end
  return at_caller(random_, x)
end
methods.random = function(x, ...) return random_fill(x, ...) end
function torch.random(...)
  local t = torch.empty(1, {dtype = 'int64'})
  random_fill(t, ...)
  return t[1]
end

-- x:bernoulli([gen,] p): x filled in place with 0 and 1 drawn with
-- probability p, a number or a tensor of probabilities (Torch7); a switch
-- point: PyTorch's x:bernoulli(p) returns a new tensor. torch.bernoulli(p)
-- with a number is one draw.
local bernoulli_ = methods.bernoulli_
local function bernoulli_fill(x, ...)
  local g, p = split_generator(...)
  if p == nil then p = 0.5 end
  if g then return at_caller(bernoulli_, x, p, {generator = g}) end
  return at_caller(bernoulli_, x, p)
end
do
  local bernoulli = torch.bernoulli
  gated('bernoulli', bernoulli, GATE_ALWAYS, 0, function(...)
    local g, p = split_generator(...)
    if g or N(p) or select('#', ...) == 0 then
      local t = torch.empty(1, {dtype = 'float64'})
      bernoulli_fill(t, ...)
      return true, t[1]
    end
    return false
  end)
end

-- torch.rand([res,] [gen,] sizes...), randn, randperm, multinomial: a
-- generator in front becomes the {generator=} option
-- torch.multinomial(res, probs, n, replacement): the result first
result_first.multinomial = {f = torch.multinomial, nres = 1, is_rf = function(r, p) return T(r) and T(p) end,
                            opts = {}}
for _, name in ipairs({'rand', 'randn', 'randperm', 'randint', 'multinomial'}) do
  local entry = result_first[name]
  local raw = entry and entry.f or torch[name]
  gated(name, raw, GATE_LEAD, 1, function(...)
    local first, second = ...
    if T(first) and is_generator(second) then                     -- (res, gen, ...)
      local args = table.pack(select(3, ...))
      args.n = args.n + 1
      args[args.n] = {generator = second}
      return true, into(first, in_gate(raw, table.unpack(args, 1, args.n)))
    end
    if is_generator(first) then
      local args = table.pack(select(2, ...))
      local last = args[args.n]
      if type(last) == 'table' and getmetatable(last) == nil then
        last.generator = first
      else
        args.n = args.n + 1
        args[args.n] = {generator = first}
      end
      return true, in_gate(raw, table.unpack(args, 1, args.n))
    end
    if entry and entry.is_rf(...) then return true, into(first, in_gate(raw, select(2, ...))) end
    return false
  end)
end
-- torch.multinomialAliasSetup(probs [, state]) -> {J, q}: the tables of
-- Walker's alias method for the distribution probs (a vector, normalised
-- here), written into state when given; torch.multinomialAlias(output,
-- state) fills output (a LongTensor) with draws from it in O(1) each: a
-- uniform column k, kept with probability q[k], else its alias J[k].
function torch.multinomialAliasSetup(probs, state)
  if not T(probs) or probs:dim() ~= 1 or probs:numel() == 0 then
    error('multinomialAliasSetup: expects a non-empty vector of probabilities', 2)
  end
  local n = probs:numel()
  local p = probs:double():totable()
  local total = 0
  for i = 1, n do
    if not (p[i] >= 0) or p[i] == math.huge then
      error(string.format('multinomialAliasSetup: probability %d is %s', i, tostring(p[i])), 2)
    end
    total = total + p[i]
  end
  if total <= 0 then error('multinomialAliasSetup: the probabilities sum to 0', 2) end
  local q, J, small, large = {}, {}, {}, {}
  for i = 1, n do
    q[i] = p[i] * n / total
    J[i] = i
    if q[i] < 1 then small[#small + 1] = i else large[#large + 1] = i end
  end
  while #small > 0 and #large > 0 do
    local s, l = table.remove(small), large[#large]
    J[s] = l
    q[l] = q[l] - (1 - q[s])
    if q[l] < 1 then table.remove(large); small[#small + 1] = l end
  end
  for _, i in ipairs(large) do q[i] = 1 end
  for _, i in ipairs(small) do q[i] = 1 end         -- rounding leftovers
  state = state or {}
  state[1] = into(T(state[1]) and state[1] or torch.LongTensor(), torch.LongTensor(J))
  state[2] = into(T(state[2]) and state[2] or torch.empty(0, {dtype = probs.dtype}), torch.tensor(q, {dtype = probs.dtype}))
  return state
end

function torch.multinomialAlias(output, state)
  if not T(output) then error('multinomialAlias: expects an output tensor first', 2) end
  if type(state) ~= 'table' or not T(state[1]) or not T(state[2]) then
    error('multinomialAlias: expects the state multinomialAliasSetup returned', 2)
  end
  local J, q = state[1], state[2]
  local n, m = J:numel(), output:numel()
  if m == 0 then return output end
  local k = torch.LongTensor(m):random(1, n)
  local keep = torch.rand(m, {dtype = 'float64'}):lt(q:double():index(1, k))
  local draws = torch.where(keep, k, J:long():index(1, k))
  output:copy_(draws:view(output:size()))
  return output
end


-- ---- the dialect: every switch point ----
local is_reduction = {}
local reductions_to_number = {'sum', 'prod', 'mean', 'max', 'min', 'norm', 'dot', 'std', 'var', 'dist', 'trace',
                              'median', 'mode', 'kthvalue', 'all', 'any', 'logsumexp'}
-- reductions that work along the last dim when none is given (Torch7)
local along_last = {median = true, mode = true, kthvalue = true}

local saved = {}
local function install(tbl, name, fn)
  local key = tostring(tbl) .. name
  if saved[key] == nil then saved[key] = {tbl, name, rawget(tbl, name)} end
  torch._help_alias(fn, saved[key][3])
  rawset(tbl, name, fn)
end

-- torch._method(name): the tensor method as the PyTorch dialect has it, whichever dialect
-- is on. The libraries get PyTorch's forms anyway; their hot paths (a linear layer's
-- forward) call these to skip the dialect's wrapper and its look at who is calling.
function torch._method(name)
  local s = type(name) == 'string' and saved[tostring(methods) .. name]
  local f = s and s[3] or methods[name]
  if type(f) ~= 'function' then error('torch._method: no tensor method ' .. tostring(name), 2) end
  return f
end

-- a 0-dim result is a number unless it requires grad through a tensor the
-- user asked gradients of: one that requires grad only through nn's
-- parameters and inputs (Torch7 had no autograd) is a number too
-- (a reduction tail-called sees past the function that tail-called it: the
-- libraries' functions the user calls do not end in `return x:sum()`, see
-- nn.functional's reduce)
local function number_if_scalar(r)
  if T(r) and r:dim() == 0 and (not r.requires_grad or not torch._ag_user_grad(r)) then
    return r:item()
  end
  return r
end

-- all and any answer a boolean (a uint8 tensor's 0 would be true in Lua)
local function truth(r)
  r = number_if_scalar(r)
  if type(r) == 'number' then return r ~= 0 end
  return r
end

local torch7_switches = {}

-- Torch7's answer of a reduction called as x:name(...) or torch.name(x, ...)
-- (no result tensors: the result-first wrapper strips them and calls this)
local function reduction_form(name, f)
  return function(x, ...)
    local n = select('#', ...)
    if not T(x) then return f(x, ...) end
    local a, b = ...
    if n == 0 then
      if along_last[name] then return f(x, math.max(x:dim(), 1), true) end
      if name == 'all' or name == 'any' then return truth(f(x)) end
      return number_if_scalar(f(x))
    end
    if name == 'std' or name == 'var' then          -- std(dim, biased): true divides by n
      if N(a) and (b == nil or type(b) == 'boolean') and n <= 2 then return f(x, a, not b, true) end
    elseif name == 'norm' then
      if N(a) and N(b) and n == 2 then return f(x, a, b, true) end
      if n == 1 and (N(a) or type(a) == 'string') then return number_if_scalar(f(x, a)) end
    elseif name == 'dot' and T(a) and n == 1 and a:numel() == x:numel() then
      return number_if_scalar(f(x:reshape(-1), a:reshape(-1)))     -- any shapes of one element count
    elseif name == 'dot' or name == 'dist' or name == 'trace' then
      return number_if_scalar(f(x, ...))
    elseif name == 'kthvalue' then                 -- kthvalue(k [, dim])
      if N(a) and n == 1 then return f(x, a, math.max(x:dim(), 1), true) end
      if N(a) and N(b) and n == 2 then return f(x, a, b, true) end
    elseif (name == 'all' or name == 'any') then
      if n == 1 and N(a) then return f(x, a, true) end
    elseif N(a) and n == 1 then
      return f(x, a, true)
    end
    return f(x, ...)
  end
end

-- t7form (declared above): the Torch7 forms of the torch functions while the
-- dialect is on; the result-first wrappers compute with these for the user's code.

-- full reductions return numbers; a reduction over a dim keeps it
for _, name in ipairs(reductions_to_number) do
  is_reduction[name] = true
  torch7_switches[#torch7_switches + 1] = function(tbl)
    local f = rawget(tbl, name)
    if not f then return end
    local plain = tbl == torch and result_first[name] and result_first[name].f or f
    local form = reduction_form(name, plain)
    if tbl == torch then t7form[name] = form end
    local nres = result_first[name] and result_first[name].nres or 1
    install(tbl, name, function(x, ...)
      if from_library(1) then return (nres == 1 and pass1 or pass2)(name, f, x, ...) end
      if tbl == methods and result_first[name] and result_first[name].is_rf(x, ...) then
        return torch[name](x, ...)                     -- res:sum(x, 2): torch.sum(res, x, 2)
      end
      if tbl == torch and result_first[name] and result_first[name].is_rf(x, ...) then
        return rf_apply(2, form, nres, false, x, ...)  -- results first, Torch7's answer into them
      end
      return form(x, ...)
    end)
  end
end

-- torch.round(2.6), torch.abs(-1), torch.sqrt(4) ...: Torch7's math functions
-- took a number too and answered a number (a float, as Torch7's real)
local function round_half_away(v)
  if v >= 0 then return math.floor(v + 0.5) + 0.0 end
  return -math.floor(-v + 0.5) + 0.0
end
local number_forms = {
  abs = math.abs, exp = math.exp, log = math.log, log1p = function(v) return math.log(1 + v) end,
  sqrt = math.sqrt, rsqrt = function(v) return 1 / math.sqrt(v) end, sin = math.sin, cos = math.cos,
  tan = math.tan, asin = math.asin, acos = math.acos, atan = math.atan,
  sinh = function(v) return (math.exp(v) - math.exp(-v)) / 2 end,
  cosh = function(v) return (math.exp(v) + math.exp(-v)) / 2 end,
  tanh = function(v)
    if v > 20 then return 1.0 elseif v < -20 then return -1.0 end
    local e = math.exp(2 * v)
    return (e - 1) / (e + 1)
  end,
  sigmoid = function(v) return 1 / (1 + math.exp(-v)) end,
  floor = function(v) return math.floor(v) + 0.0 end, ceil = function(v) return math.ceil(v) + 0.0 end,
  round = round_half_away,
  trunc = function(v) return (v >= 0 and math.floor(v) or math.ceil(v)) + 0.0 end,
  frac = function(v) return v - (v >= 0 and math.floor(v) or math.ceil(v)) end,
}
for name, g in pairs(number_forms) do
  torch7_switches[#torch7_switches + 1] = function(tbl)
    local f = tbl == torch and rawget(tbl, name)
    if not f then return end
    install(tbl, name, function(x, ...)
      if N(x) and select('#', ...) == 0 and not from_library(1) then return g(x + 0.0) end
      return pass1(name, f, x, ...)
    end)
  end
end

-- x:select(dim, i) of a 1-D tensor is the number at i (Torch7 did not look at dim)
torch7_switches[#torch7_switches + 1] = function(tbl)
  local f = rawget(tbl, 'select')
  if not f or tbl ~= methods then return end
  install(tbl, 'select', function(x, d, i, ...)
    if T(x) and x:dim() == 1 and not from_library(1) and select('#', ...) == 0 then
      if math.type(i) ~= 'integer' or i < 1 or i > x:size(1) then
        error(string.format('select: index %s out of range [1, %d]%s', tostring(i), x:size(1),
                            i == 0 and ' (indices are 1-based)' or ''), 2)
      end
      return x[i]
    end
    return pass1('select', f, x, d, i, ...)
  end)
end

-- a * b of two tensors is Torch7's product: dot of vectors (a number), mv,
-- mm; a tensor times a number scales it
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  local mt = torch._tensor_mt
  local mul = rawget(mt, '__mul')
  install(mt, '__mul', function(a, b)
    if T(a) and T(b) and not from_library(1) then
      local da, db = a:dim(), b:dim()
      if da == 1 and db == 1 then return call_named('__mul', torch.dot, a, b):item() end
      if da == 2 and db == 1 then return call_named('__mul', torch.mv, a, b) end
      if da == 2 and db == 2 then return call_named('__mul', torch.mm, a, b) end
      error(string.format('__mul: Torch7 multiplies vectors and matrices, got %dD and %dD tensors', da, db), 2)
    end
    return mul(a, b)
  end)
end

-- a + b and a - b take operands of one element count and other shapes
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  local mt = torch._tensor_mt
  for _, key in ipairs({'__add', '__sub'}) do
    local op = rawget(mt, key)
    install(mt, key, function(a, b)
      if T(a) and T(b) and not from_library(1) then return op(a, fits(a, b)) end
      return op(a, b)
    end)
  end
end

-- an empty tensor has no dims (Torch7's torch.Tensor() is 0-dimensional)
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  for _, name in ipairs({'dim', 'nDimension'}) do
    local f = rawget(tbl, name)
    install(tbl, name, function(x)
      if T(x) and x:numel() == 0 and not from_library(1) then return 0 end
      return f(x)
    end)
  end
end

-- res:name(args) is torch.name(res, args) for every result-first form:
-- res:sum(x, 2), idx:nonzero(x), vals:sort(idx, x)
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  local creation = {zeros = true, ones = true, rand = true, randn = true, eye = true, linspace = true,
                    logspace = true, range = true, arange = true, randperm = true}
  for name, entry in pairs(result_first) do
    -- (the reductions' own switch takes their result-first method calls: a
    -- wrapper here would tail-call theirs, which could no longer tell)
    local f = not creation[name] and not is_reduction[name] and rawget(tbl, name)
    local via = torch[name]
    if f then
      install(tbl, name, function(x, ...)
        if not from_library(1) and entry.is_rf(x, ...) then return via(x, ...) end
        return f(x, ...)
      end)
    end
  end
end

-- x:bernoulli([gen,] p) fills x in place (PyTorch's returns a new tensor)
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  local f = rawget(tbl, 'bernoulli')
  install(tbl, 'bernoulli', function(x, ...)
    if T(x) and not from_library(1) then return bernoulli_fill(x, ...) end
    return f(x, ...)
  end)
end

-- x:scatter(dim, index, src|value) writes into x (PyTorch's returns a new tensor)
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  local f, fill = rawget(tbl, 'scatter'), rawget(tbl, 'scatter_')
  if not (f and fill) then return end
  install(tbl, 'scatter', function(x, ...)
    if T(x) and not from_library(1) then return (at_caller(fill, x, ...)) end
    return f(x, ...)
  end)
end

-- torch.rand(n, 7, 3.5), zeros, ones, randn: Torch7 cut a fractional size to
-- an integer (toward zero), as its C did when it read a size
for _, name in ipairs({'rand', 'randn', 'zeros', 'ones'}) do
  torch7_switches[#torch7_switches + 1] = function(tbl)
    if tbl ~= torch then return end
    local f = rawget(tbl, name)
    install(tbl, name, function(...)
      local n = select('#', ...)
      for i = 1, n do
        local v = select(i, ...)
        if math.type(v) == 'float' and v ~= math.floor(v) and v == v and v > -2^53 and v < 2^53
           and not from_library(1) then
          local args = table.pack(...)
          for k = 1, n do
            local a = args[k]
            if math.type(a) == 'float' and a == a and a > -2^53 and a < 2^53 then
              args[k] = math.tointeger(a >= 0 and math.floor(a) or math.ceil(a))
            end
          end
          return at_caller(f, table.unpack(args, 1, n))
        end
      end
      return f(...)
    end)
  end
end

-- x:new() with no arguments is a tensor on x's memory (Torch7's constructor
-- called with x); x:new(sizes) as in both dialects
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  local f = rawget(tbl, 'new')
  install(tbl, 'new', function(x, ...)
    if T(x) and select('#', ...) == 0 and not from_library(1) then return torch.Tensor(x):type(x:type()) end
    -- x.new(sizes) with a dot: Torch7's type metatable knew x's type; here the
    -- methods are every type's, so the default type's constructor answers
    if not T(x) and not from_library(1) then
      if x == nil then return torch.Tensor() end
      return call_named('new', torch.Tensor, x, ...)
    end
    return f(x, ...)
  end)
end

-- x:sub(s1, e1 [, s2, e2 [, s3, e3 [, s4, e4]]]): Torch7's sub-tensor, a view
-- narrowed along the first dims (negative indices count from the end, -1 the
-- last); PyTorch's x:sub(y) subtracts, which Torch7 spelled csub
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  local f = rawget(tbl, 'sub')
  install(tbl, 'sub', function(x, ...)
    local n = select('#', ...)
    if from_library(1) or not T(x) or n < 2 or n % 2 == 1 or n > 8 then return pass1('sub', f, x, ...) end
    local bounds = {...}
    for i = 1, n do if math.type(bounds[i]) ~= 'integer' then return pass1('sub', f, x, ...) end end
    if n // 2 > x:dim() then
      error(string.format('sub: %d ranges for a %dD tensor', n // 2, x:dim()), 2)
    end
    local r = x
    for d = 1, n // 2 do
      local size = x:size(d)
      local s, e = bounds[2 * d - 1], bounds[2 * d]
      if s < 0 then s = size + s + 1 end
      if e < 0 then e = size + e + 1 end
      if s < 1 or e > size or s > e then
        local zero = bounds[2 * d - 1] == 0 or bounds[2 * d] == 0
        error(string.format('sub: range %d..%d out of 1..%d in dim %d%s', bounds[2 * d - 1], bounds[2 * d], size, d,
                            zero and ' (indices are 1-based)' or ''), 2)
      end
      r = r:narrow(d, s, e - s + 1)
    end
    return r
  end)
end

-- torch.linspace(a, b, 1) and logspace with a ~= b have no answer in Torch7
for _, name in ipairs({'linspace', 'logspace'}) do
  torch7_switches[#torch7_switches + 1] = function(tbl)
    if tbl ~= torch then return end
    local f = rawget(tbl, name)
    install(tbl, name, function(...)
      local n = select('#', ...)
      local a, b, c = ...
      if not from_library(1) and N(a) and N(b) and c == 1 and a ~= b and n == 3 then
        error(string.format('%s: one point cannot span %s to %s', name, tostring(a), tostring(b)), 2)
      end
      return pass1(name, f, ...)
    end)
  end
end

-- x:size() is a LongStorage
torch7_switches[#torch7_switches + 1] = function(tbl)
  local f = rawget(tbl, 'size')
  if not f then return end
  install(tbl, 'size', function(x, d)
    if d ~= nil or from_library(1) then return f(x, d) end
    return torch.LongStorage(f(x):totable())
  end)
end

-- elementwise ops take operands of one element count and other shapes
local same_numel = {'add', 'sub', 'mul', 'div', 'cmul', 'cdiv', 'pow', 'cpow', 'copy_', 'copy', 'fmod', 'cfmod',
                    'cremainder',
                    'remainder', 'cmax', 'cmin', 'lerp', 'addcmul', 'addcdiv', 'eq', 'ne', 'lt', 'le', 'gt',
                    'ge', 'atan2', 'csub'}
-- y read in x's shape when the two count alike and differ in shape: Torch7
-- went element by element and never broadcast (3x1 with 1x3 is 3 products,
-- not a 3x3 table); operands that count differently broadcast as in PyTorch
function fits(x, y)
  if not (T(x) and T(y)) or x:numel() ~= y:numel() or x:isSameSizeAs(y) then return y end
  return y:reshape(x:size())
end

-- Torch7's methods of the math functions write into self: x:add(y) adds y
-- to x, x:abs() takes x's absolute value, res:cmul(a, b) writes a * b
-- into res.
local inplace_unary = unary
local inplace_binary = {'add', 'csub', 'mul', 'div', 'cmul', 'cdiv', 'pow', 'cpow', 'fmod', 'remainder',
                        'cfmod', 'cremainder', 'cmax', 'cmin', 'atan2', 'clamp', 'lerp', 'addcmul', 'addcdiv',
                        'addmm', 'addmv', 'addr', 'addbmm', 'baddbmm', 'cinv', 'bitand', 'bitor', 'bitxor',
                        'cbitand', 'cbitor', 'cbitxor', 'lshift', 'rshift', 'clshift', 'crshift', 'renorm'}
local method_rf = {mm = true, mv = true, bmm = true, ger = true, outer = true, cross = true,
                   maskedSelect = true, masked_select = true}

local is_unary = {}
for _, u in ipairs(inplace_unary) do is_unary[u] = true end
local additive = {add = true, sub = true, csub = true}

local function count_tensors(...)
  local k = 0
  for i = 1, select('#', ...) do if T(select(i, ...)) then k = k + 1 end end
  return k
end

local function method_switch(name)
  return function(tbl)
    if tbl ~= methods then return end
    local f = rawget(tbl, name)
    local tf = rawget(torch, name) or f
    local inplace = methods[name .. '_']
    if not f then return end
    install(tbl, name, function(x, ...)
      if from_library(1) or not T(x) then return f(x, ...) end
      local n = select('#', ...)
      local a, b, c = ...
      if method_rf[name] then                                   -- res:mm(a, b)
        if T(a) and T(b) then return into(x, at_caller(tf, ...)) end
        return f(x, ...)
      end
      local rf_call
      if is_unary[name] then rf_call = T(a)                     -- x:abs(y): |y| into x
      elseif name == 'clamp' then rf_call = T(a)
      elseif name == 'lerp' then rf_call = T(a) and T(b) and c ~= nil
      elseif name == 'addcmul' or name == 'addcdiv' or name:match('^b?add[mbr]') then
        if count_tensors(...) == 3 then return into(x, at_caller(tf, ...)) end
        local r = at_caller(tf, x, ...)                             -- x takes M's place
        if T(r) and not x:isSameSizeAs(r) then                      -- and must be the result's size
          error(string.format("%s: size mismatch: x is %s and the result %s (Torch7's x:%s(...) adds into x; "
                              .. "torch.%s(x, ...) broadcasts x)", name, size_text(x), size_text(r), name, name), 2)
        end
        return into(x, r)
      else
        rf_call = n >= 2 and (T(a) or N(a)) and (T(b) or N(b)) and (T(a) or T(b))
                  and not (additive[name] and N(a) and T(b) and c == nil)
      end
      if rf_call then return into(x, at_caller(tf, ...)) end
      if not inplace then return pass1(name, f, x, ...) end
      if name == 'div' and N(a) and n == 1 and not torch.is_floating_point(x) then
        return at_caller(inplace, x, a, {rounding_mode = 'trunc'})     -- C's integer division
      end
      if additive[name] and N(a) and T(b) then return at_caller(inplace, x, fits(x, b), a) end  -- x:add(value, y)
      if T(a) then return at_caller(inplace, x, fits(x, a), select(2, ...)) end
      return at_caller(inplace, x, ...)
    end)
  end
end
for _, name in ipairs(inplace_unary) do torch7_switches[#torch7_switches + 1] = method_switch(name) end
for _, name in ipairs(inplace_binary) do torch7_switches[#torch7_switches + 1] = method_switch(name) end
for name in pairs(method_rf) do torch7_switches[#torch7_switches + 1] = method_switch(name) end

-- torch.add(a, b) ... with operands of one element count and other shapes
for _, name in ipairs(same_numel) do
  torch7_switches[#torch7_switches + 1] = function(tbl)
    if tbl ~= torch then return end
    local f = rawget(tbl, name)
    if not f then return end
    install(tbl, name, function(x, y, ...)
      if not from_library(1) and T(x) and T(y) then
        if T(select(1, ...)) then return f(x, y, fits(y, select(1, ...)), select(2, ...)) end
        return f(x, fits(x, y), ...)
      end
      return f(x, y, ...)
    end)
  end
end
-- x:copy(y) between shapes of one element count
torch7_switches[#torch7_switches + 1] = function(tbl)
  if tbl ~= methods then return end
  for _, name in ipairs({'copy', 'copy_'}) do
    local f = rawget(tbl, name)
    if f then
      install(tbl, name, function(x, y, ...)
        if not from_library(1) and T(x) and T(y) then return f(x, fits(x, y), ...) end
        return f(x, y, ...)
      end)
    end
  end
end

local function switch_to(name)
  if name == dialect then return end
  if name == 'torch7' then
    for _, sw in ipairs(torch7_switches) do sw(methods); sw(torch) end
    torch.set_default_dtype('float64')
    torch.cat = cat_gates.torch7
    torch._ag_set_lift(user_writes)
    -- the packages Torch7's th loaded for every script
    for _, pkg in ipairs({'paths', 'sys', 'xlua'}) do
      if rawget(_G, pkg) == nil and package.searchpath(pkg, package.path) then _G[pkg] = require(pkg) end
    end
  else
    for key, entry in pairs(saved) do
      rawset(entry[1], entry[2], entry[3])
      saved[key] = nil
    end
    torch.set_default_dtype('float32')
    torch.cat = cat_gates.pytorch
    torch._ag_set_lift(nil)
  end
  dialect = name
end

-- torch._torch7_user(level): the Torch7 dialect is on and the function
-- `level` up the stack (1: the caller of the function calling this) is the
-- user's code, not moontorch's libraries (nn's modules answer Torch7's
-- m:training() and m.train there).
function torch._torch7_user(level)
  return dialect == 'torch7' and not from_library((level or 1) + 1)
end

-- torch.dialect(): 'pytorch' or 'torch7'; torch.dialect(name) switches the
-- whole process (the default tensor type with it: float32 or float64).
function torch.dialect(name)
  if name == nil then return dialect end
  if name ~= 'torch7' and name ~= 'pytorch' then
    error("torch.dialect: expects 'pytorch' or 'torch7', got " .. tostring(name), 2)
  end
  switch_to(name)
  return dialect
end

for k, v in pairs(torch) do
  if before.torch[k] ~= nil then torch._help_alias(v, before.torch[k]) end
end
for k, v in pairs(methods) do
  if before.methods[k] ~= nil then torch._help_alias(v, before.methods[k]) end
end

local env = os.getenv('TH_DIALECT')
if env and env ~= '' then
  if env ~= 'torch7' and env ~= 'pytorch' then
    io.stderr:write("TH_DIALECT: expects 'pytorch' or 'torch7', got '" .. env .. "'; using pytorch\n")
  else
    switch_to(env)
  end
end

return torch
