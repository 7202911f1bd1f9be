-- Torch7's maths that are compositions of the engine's ops: conv2, xcorr2,
-- conv3 and xcorr3 (built on the conv2d kernel), histc and bhistc, cross,
-- renorm, dist, and lshift / rshift (a product by a power of 2 for floats,
-- the bitwise shift ops of the registry for integers). Compositions of
-- differentiable ops are differentiable.
local torch = require 'torch.core'

-- a value for an error message: numbers and strings as they are, else its type
local function shown(v)
  if type(v) == 'number' or type(v) == 'string' then return tostring(v) end
  return torch.type(v)
end
local methods = torch._methods
local is_tensor = torch.is_tensor

-- f(...), its error raised at `level` as error() counts it from the
-- function calling this, its own position taken off. The public functions
-- below call their helpers as return (helper(...)), not as tail calls, so
-- that a helper's level 3 is the user's line.
local function raise_at(level, f, ...)
  local res = table.pack(pcall(f, ...))
  if not res[1] then
    local msg = res[2]
    if type(msg) == 'string' then msg = msg:gsub('^[^:\n]+:%d+: ', '', 1) end
    error(msg, level + 1)
  end
  return table.unpack(res, 2, res.n)
end

-- "3x4x5" for t's shape
local function shape_str(t)
  local sizes = {}
  for d = 1, t:dim() do sizes[d] = t:size(d) end
  return #sizes == 0 and '0-dim' or table.concat(sizes, 'x')
end

local function check_tensor(name, v, what, level)
  if not is_tensor(v) then
    error(string.format('%s: %s must be a tensor, got %s', name, what, torch.type(v)), level + 1)
  end
end

-- ---- convolutions ----

-- The cross-correlation of x (p, D, H, W) with k: grouped, k (p, kd, kh, kw)
-- and one output volume per input one; else k (q, p, kd, kh, kw), summed
-- over the p volumes. 'F' pads every side with the kernel's size less 1.
-- The result is (p or q, Do, Ho, Wo). Each output plane is one conv2d over
-- kd * p channels: the kd input planes it reads, stacked (x's windows
-- along the depth, by unfold), as a batch of Do images.
local function correlate(x, k, full, grouped)
  local p, D, H, W = x:size(1), x:size(2), x:size(3), x:size(4)
  local kdim = k:dim()
  local kd, kh, kw = k:size(kdim - 2), k:size(kdim - 1), k:size(kdim)
  local ph, pw = 0, 0
  if full then
    if kd > 1 then
      local zeros = x:new_zeros(p, kd - 1, H, W)
      x = torch.cat({zeros, x, zeros}, 2)
      D = D + 2 * (kd - 1)
    end
    ph, pw = kh - 1, kw - 1
  end
  local depth = D - kd + 1
  local planes = x:unfold(2, kd, 1):permute(2, 1, 5, 3, 4):reshape(depth, p * kd, H, W)
  local weight, groups
  if grouped then
    weight, groups = k:contiguous(), p
  else
    weight, groups = k:reshape(k:size(1), p * kd, kh, kw), 1
  end
  local out = torch._conv2d(planes, weight, nil, 1, 1, ph, ph, pw, pw, 1, 1, groups)
  return out:transpose(1, 2):contiguous()
end

-- The forms Torch7 takes, by the dims of x and k (nd = 2 or 3): one image
-- and one kernel; p images and p kernels, one output each; p images and
-- (q, p) kernels, q outputs summing over the p images.
local function convolve(name, nd, x, k, mode, flip)
  check_tensor(name, x, 'the input', 3)
  check_tensor(name, k, 'the kernel', 3)
  if mode ~= nil and mode ~= 'V' and mode ~= 'F' then
    error(string.format("%s: mode must be 'V' (valid) or 'F' (full), got %s", name, shown(mode)), 3)
  end
  if not x:is_floating_point() or x.dtype ~= k.dtype then
    error(string.format('%s: expects input and kernel of one float dtype, got %s and %s', name, x.dtype,
                        k.dtype), 3)
  end
  local xd, kd = x:dim(), k:dim()
  local form = xd == nd and kd == nd and 'one' or xd == nd + 1 and kd == nd + 1 and 'each'
               or xd == nd + 1 and kd == nd + 2 and 'sum'
  local planes = form == 'each' and k:size(1) or form == 'sum' and k:size(2) or nil
  if not form or planes and x:size(1) ~= planes then
    error(string.format('%s: expects a %d-D input and kernel, %d-D ones of as many planes, or a %d-D input ' ..
                        'and a %d-D kernel (q x planes x ...), got input %s and kernel %s', name, nd, nd + 1,
                        nd + 1, nd + 2, shape_str(x), shape_str(k)), 3)
  end
  local full = mode == 'F'
  for d = 1, nd do
    local xs, ks = x:size(xd - nd + d), k:size(kd - nd + d)
    if ks < 1 or not full and ks > xs then
      error(string.format("%s: the kernel %s is larger than the input %s in 'V' mode", name, shape_str(k),
                          shape_str(x)), 3)
    end
  end
  if flip then
    local dims = {}
    for d = 1, nd do dims[d] = kd - nd + d end
    k = k:flip(dims)
  end
  -- as volumes: x (p, D, H, W), k (p, kd, kh, kw) or (q, p, kd, kh, kw); a 2-D plane is 1 deep
  local x4, k4 = x, k
  if nd == 2 then x4, k4 = x:unsqueeze(-3), k:unsqueeze(-3) end
  if form == 'one' then x4, k4 = x4:unsqueeze(1), k4:unsqueeze(1) end
  local out = raise_at(3, correlate, x4, k4, full, form == 'each')
  if nd == 2 then out = out:squeeze(2) end
  if form == 'one' then out = out:squeeze(1) end
  return out
end

-- torch.conv2(x, k, [mode]), x:conv2(k, [mode]): Torch7's 2-D convolution
-- (the kernel flipped). mode 'V' (valid, the default: (H - kh + 1) x (W - kw + 1))
-- or 'F' (full: (H + kh - 1) x (W + kw - 1)). x and k 2-D: one image, one
-- kernel. x (p, H, W) and k (p, kh, kw): each plane with its kernel, a
-- (p, ., .) result. x (p, H, W) and k (q, p, kh, kw): q planes, each the sum
-- over the p planes. Float tensors of one dtype; differentiable.
function torch.conv2(x, k, mode) return (convolve('conv2', 2, x, k, mode, true)) end

-- torch.xcorr2(x, k, [mode]), x:xcorr2(k, [mode]): Torch7's 2-D
-- cross-correlation: conv2 with the kernel not flipped (same forms and modes).
function torch.xcorr2(x, k, mode) return (convolve('xcorr2', 2, x, k, mode, false)) end

-- torch.conv3(x, k, [mode]), x:conv3(k, [mode]): Torch7's 3-D convolution
-- (the kernel flipped in its three dims), mode 'V' (valid, the default) or
-- 'F' (full). x and k 3-D: one volume, one kernel. x (p, D, H, W) and k
-- (p, kd, kh, kw): each volume with its kernel. x (p, D, H, W) and k
-- (q, p, kd, kh, kw): q volumes, each the sum over the p. Differentiable.
function torch.conv3(x, k, mode) return (convolve('conv3', 3, x, k, mode, true)) end

-- torch.xcorr3(x, k, [mode]), x:xcorr3(k, [mode]): Torch7's 3-D
-- cross-correlation: conv3 with the kernel not flipped (same forms and modes).
function torch.xcorr3(x, k, mode) return (convolve('xcorr3', 3, x, k, mode, false)) end

-- ---- histograms ----

-- The range of the bins: [lo, hi] as given, or the data's when both are
-- equal (PyTorch's and Torch7's histc), widened by 1 either way when that
-- is one value.
local function hist_range(name, x, lo, hi)
  if lo > hi then
    error(string.format('%s: max must not be below min, got min %g and max %g', name, lo, hi), 3)
  end
  if lo == hi and x:numel() > 0 then lo, hi = x:min():item(), x:max():item() end
  if lo ~= lo or hi ~= hi or lo == -math.huge or hi == math.huge then
    error(string.format('%s: range of [%g, %g] is not finite', name, lo, hi), 3)
  end
  if lo == hi then lo, hi = lo - 1, hi + 1 end
  return lo, hi
end

-- rows (r, n) counted into (r, bins) bins of [lo, hi], in dtype: an element
-- v of the range falls in bin floor((v - lo) * bins / (hi - lo)) (hi in the
-- last); the others, NaN included, are not counted
local function count_bins(rows, bins, lo, hi, dtype)
  local v = rows:is_floating_point() and rows or rows:double()
  local inside = v:ge(lo):logical_and(v:le(hi))
  local pos = ((v - lo) * (bins / (hi - lo))):floor():clamp(0, bins - 1)
  pos = torch.where(inside, pos, 0):long() + 1
  local counts = torch.zeros(rows:size(1), bins, {dtype = dtype, device = rows.device})
  return counts:scatter_add_(2, pos, inside:to(dtype))
end

local function hist_args(name, x, bins, lo, hi)
  check_tensor(name, x, 'the input', 3)
  bins, lo, hi = bins or 100, lo or 0, hi or 0
  local count = type(bins) == 'number' and math.tointeger(bins)
  if not count or count < 1 then
    error(string.format('%s: bins must be a positive integer, got %s', name, shown(bins)), 3)
  end
  if type(lo) ~= 'number' or type(hi) ~= 'number' then
    error(string.format('%s: min and max must be numbers, got %s and %s', name, type(lo), type(hi)), 3)
  end
  if x.dtype == 'bool' then error(name .. ': not supported for bool tensors', 3) end
  return count, lo, hi
end

-- torch.histc(x, [bins=100], [min=0], [max=0]), x:histc(...): the histogram
-- of x's elements, a 1-D tensor of bins counts in x's dtype. The bins split
-- [min, max] evenly; min = max means the data's smallest and largest values.
-- Elements outside [min, max] are not counted; max falls in the last bin.
function torch.histc(x, bins, min, max)
  bins, min, max = hist_args('histc', x, bins, min, max)
  min, max = hist_range('histc', x, min, max)
  return count_bins(x:reshape(1, -1), bins, min, max, x.dtype):view(bins)
end

-- torch.bhistc(x, [bins=100], [min=0], [max=0]), x:bhistc(...): Torch7's
-- batched histc: a histogram of each row of x (along its last dim), so a
-- (r, n) x gives (r, bins) counts. min = max means the smallest and largest
-- of all of x's values, one range for every row.
function torch.bhistc(x, bins, min, max)
  bins, min, max = hist_args('bhistc', x, bins, min, max)
  if x:dim() < 1 then error('bhistc: expects a tensor of at least 1 dim, got a 0-dim one', 2) end
  min, max = hist_range('bhistc', x, min, max)
  local n = x:size(x:dim())
  local counts = count_bins(x:reshape(-1, n), bins, min, max, x.dtype)
  local shape = {}
  for d = 1, x:dim() - 1 do shape[d] = x:size(d) end
  shape[#shape + 1] = bins
  return counts:view(shape)
end

-- ---- cross products, renorm, dist ----

-- a and b expanded to their broadcast shape
local function broadcast(name, a, b, level)
  local na, nb = a:dim(), b:dim()
  local n = math.max(na, nb)
  local shape = {}
  for d = 1, n do
    local sa = d > n - na and a:size(d - n + na) or 1
    local sb = d > n - nb and b:size(d - n + nb) or 1
    if sa ~= sb and sa ~= 1 and sb ~= 1 then
      error(string.format('%s: shapes %s and %s do not broadcast', name, shape_str(a), shape_str(b)), level + 1)
    end
    shape[d] = sa == 1 and sb or sa
  end
  return a:expand(shape), b:expand(shape)
end

local function cross(name, a, b, dim)
  check_tensor(name, a, 'a', 3)
  check_tensor(name, b, 'b', 3)
  a, b = broadcast(name, a, b, 3)
  local n = a:dim()
  if dim == nil then                              -- Torch7's default: the first dim of size 3
    for d = 1, n do
      if a:size(d) == 3 then dim = d; break end
    end
    if not dim then error(string.format('%s: no dimension of size 3 in %s', name, shape_str(a)), 3) end
  end
  if math.type(dim) ~= 'integer' or dim < -n or dim > n or dim == 0 then
    error(string.format('%s: dim %s out of range for %s', name, shown(dim), shape_str(a)), 3)
  end
  if dim < 0 then dim = dim + n + 1 end
  if a:size(dim) ~= 3 then
    error(string.format('%s: dim %d of %s has size %d, not 3', name, dim, shape_str(a), a:size(dim)), 3)
  end
  local a1, a2, a3 = a:narrow(dim, 1, 1), a:narrow(dim, 2, 1), a:narrow(dim, 3, 1)
  local b1, b2, b3 = b:narrow(dim, 1, 1), b:narrow(dim, 2, 1), b:narrow(dim, 3, 1)
  return torch.cat({a2 * b3 - a3 * b2, a3 * b1 - a1 * b3, a1 * b2 - a2 * b1}, dim)
end

-- torch.cross(a, b, [dim]), a:cross(b, [dim]): the cross product of the
-- 3-vectors along dim of a and b (shapes that broadcast); with no dim, the
-- first dim of size 3 (Torch7's and PyTorch's torch.cross default).
-- Differentiable.
function torch.cross(a, b, dim) return (cross('cross', a, b, dim)) end

-- (torch.linalg is loaded on first use: lib/torch/linalg.lua takes this one from here)

-- torch.linalg.cross(a, b, {dim=-1}): PyTorch's cross product along dim, the
-- last by default; shapes broadcast. Differentiable.
function torch._linalg_cross(a, b, opts)
  local dim = -1
  if type(opts) == 'number' then dim = opts
  elseif type(opts) == 'table' and opts.dim ~= nil then dim = opts.dim end
  return (cross('linalg.cross', a, b, dim))
end

local function renormed(name, x, p, dim, maxnorm)
  check_tensor(name, x, 'the input', 3)
  if not x:is_floating_point() then error(string.format('%s: expects a float tensor, got %s', name, x.dtype), 3) end
  local n = x:dim()
  if n < 2 then error(string.format('%s: expects at least 2 dims, got %s', name, shape_str(x)), 3) end
  if type(p) ~= 'number' or p <= 0 then error(string.format('%s: p must be a positive number, got %s', name, shown(p)), 3) end
  if type(maxnorm) ~= 'number' or maxnorm < 0 then
    error(string.format('%s: maxnorm must be a number, not negative, got %s', name, shown(maxnorm)), 3)
  end
  if math.type(dim) ~= 'integer' or dim < -n or dim > n or dim == 0 then
    error(string.format('%s: dim %s out of range for %s', name, shown(dim), shape_str(x)), 3)
  end
  if dim < 0 then dim = dim + n + 1 end
  local others = {}
  for d = 1, n do if d ~= dim then others[#others + 1] = d end end
  local norms = x:norm(p, others, true)
  return x * torch.where(norms:gt(maxnorm), maxnorm / (norms + 1e-7), 1)
end

-- torch.renorm(x, p, dim, maxnorm), x:renorm(p, dim, maxnorm): x with each
-- sub-tensor along dim (x:select(dim, i)) whose p-norm is above maxnorm
-- scaled to the norm maxnorm (by maxnorm / (norm + 1e-7), as PyTorch); the
-- others unchanged. x float, of 2 dims or more. Differentiable.
function torch.renorm(x, p, dim, maxnorm) return (renormed('renorm', x, p, dim, maxnorm)) end

-- x:renorm_(p, dim, maxnorm): renorm in place; returns x.
function methods.renorm_(x, p, dim, maxnorm)
  local r = renormed('renorm_', x, p, dim, maxnorm)
  return x:copy_(r)
end

-- torch.dist(a, b, [p=2]), a:dist(b, [p]): the p-norm of a - b (shapes that
-- broadcast), a 0-dim tensor; p a number or 'inf'. Differentiable.
function torch.dist(a, b, p)
  check_tensor('dist', a, 'a', 2)
  if not is_tensor(b) and type(b) ~= 'number' then
    error('dist: b must be a tensor or a number, got ' .. torch.type(b), 2)
  end
  return (raise_at(2, function() return (a - b):norm(p or 2) end))
end

-- ---- Torch7's shifts ----

-- x shifted by n (a number or a tensor): integer tensors through the
-- registry's bitwise shifts; float tensors, as Torch7, multiplied (left) or
-- divided (right) by 2^n
local function shifted(name, x, n, left, inplace)
  check_tensor(name, x, 'the input', 3)
  if not is_tensor(n) and type(n) ~= 'number' then
    error(string.format('%s: the shift must be a tensor or a number, got %s', name, torch.type(n)), 3)
  end
  if x:is_floating_point() then
    local factor = is_tensor(n) and torch.pow(2.0, n) or 2.0 ^ n
    if inplace then return (raise_at(3, left and x.mul_ or x.div_, x, factor)) end
    return (raise_at(3, left and torch.mul or torch.div, x, factor))
  end
  local op = left and 'bitwise_left_shift' or 'bitwise_right_shift'
  return (raise_at(3, inplace and methods[op .. '_'] or torch[op], x, n))
end

-- torch.lshift(x, n), x:lshift(n), torch.clshift(x, y), x:clshift(y): x << n
-- (Torch7's names; n a number or a tensor, broadcast): integer tensors
-- shifted as torch.bitwise_left_shift; float tensors multiplied by 2^n.
function torch.lshift(x, n) return (shifted('lshift', x, n, true, false)) end

-- torch.rshift(x, n), x:rshift(n), torch.crshift(x, y), x:crshift(y): x >> n
-- (Torch7's names): integer tensors shifted as torch.bitwise_right_shift
-- (the sign kept); float tensors divided by 2^n.
function torch.rshift(x, n) return (shifted('rshift', x, n, false, false)) end

-- x:lshift_(n), x:clshift_(y): lshift in place; returns x.
function methods.lshift_(x, n) return (shifted('lshift_', x, n, true, true)) end

-- x:rshift_(n), x:crshift_(y): rshift in place; returns x.
function methods.rshift_(x, n) return (shifted('rshift_', x, n, false, true)) end

torch.clshift, torch.crshift = torch.lshift, torch.rshift
methods.clshift_, methods.crshift_ = methods.lshift_, methods.rshift_
for _, name in ipairs({'conv2', 'xcorr2', 'conv3', 'xcorr3', 'histc', 'bhistc', 'cross', 'renorm', 'dist', 'lshift',
                       'rshift', 'clshift', 'crshift'}) do
  methods[name] = torch[name]
end

return torch
