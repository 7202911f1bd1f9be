-- Derivatives written in Lua, as custom autograd Functions over the C ops:
-- sort, topk, kthvalue, median, mode (values), cumprod, scatter,
-- scatter_add, index_add, index_copy, index_fill, masked_scatter,
-- masked_select with a broadcast mask, and as_strided. Each backward is
-- made of differentiable ops (these included), so second derivatives work.
-- The C op runs unchanged when nothing requires grad; the in-place forms
-- (x:scatter_(...), ...) reach these through the out-of-place method.
local torch = require 'torch.core'
local methods = torch._methods
local Function = torch.autograd.Function

local function tracked(...)
  if not torch.is_grad_enabled() then return false end
  for i = 1, select('#', ...) do
    local v = select(i, ...)
    if torch.is_tensor(v) and v.requires_grad then return true end
  end
  return false
end

-- Installs method name (and torch.name) as fn when an argument requires
-- grad, the C op otherwise.
local function wrap(name, fn)
  local c_op = methods[name]
  local function op(...)
    if tracked(...) then return fn(c_op, ...) end
    return c_op(...)
  end
  methods[name] = op
  if torch[name] ~= nil then torch[name] = op end
  return c_op
end

local function norm_dim(d, n)
  if d == nil then return n end
  if d < 0 then return d + n + 1 end
  return d
end

-- the gradient of the selected values back at their positions: zeros of x's
-- shape with g scattered along dim at indices (1-based)
local function scatter_back(x, dim, indices, g, keepdim)
  if not keepdim then
    indices = indices:unsqueeze(dim)
    g = g:unsqueeze(dim)
  end
  return torch.zeros_like(x):scatter(dim, indices, g)
end

-- ---- values of sort, topk, kthvalue, median, mode ----
-- op(x, ...) returning values and indices along dim d (kept when keepdim):
-- the values' gradient goes back to the positions the indices name.
local function values_with_indices(name, c_op, d, keepdim, x, ...)
  local F = Function:extend(name)
  function F.forward(ctx, xx, ...)
    local v, i = c_op(xx, ...)
    ctx.x, ctx.idx = xx:detach(), i
    return v, i
  end
  function F.backward(ctx, g) return scatter_back(ctx.x, d, ctx.idx, g, keepdim) end
  return F.apply(x, ...)
end

-- the dim and keepdim of kthvalue(k, dim, keepdim), median(dim, keepdim), mode(dim, keepdim)
local function dim_keep(x, dim, keepdim)
  return norm_dim(type(dim) == 'number' and dim or nil, x:dim()), keepdim == true
end

-- x:sort(dim=-1, descending=false): values carry gradients to their positions.
wrap('sort', function(c_op, x, dim, ...)
  return values_with_indices('Sort', c_op, norm_dim(type(dim) == 'number' and dim or nil, x:dim()), true, x, dim, ...)
end)
-- x:topk(k, dim=-1, largest=true, sorted=true)
wrap('topk', function(c_op, x, k, dim, ...)
  return values_with_indices('Topk', c_op, norm_dim(type(dim) == 'number' and dim or nil, x:dim()), true, x, k, dim, ...)
end)
-- x:kthvalue(k, dim=-1, keepdim=false)
wrap('kthvalue', function(c_op, x, k, dim, keepdim, ...)
  local d, kd = dim_keep(x, dim, keepdim)
  return values_with_indices('Kthvalue', c_op, d, kd, x, k, dim, keepdim, ...)
end)
-- x:mode(dim=-1, keepdim=false)
wrap('mode', function(c_op, x, dim, keepdim, ...)
  local d, kd = dim_keep(x, dim, keepdim)
  return values_with_indices('Mode', c_op, d, kd, x, dim, keepdim, ...)
end)

wrap('median', function(c_op, x, dim, keepdim, ...)
  local F = Function:extend('Median')
  if dim == nil or type(dim) == 'table' then
    -- the median of all values: the gradient goes to one element holding it
    F.forward = function(ctx, xx)
      local flat = xx:reshape(-1)
      local _, order = flat:sort()
      local pos = order[(flat:numel() - 1) // 2 + 1]
      ctx.x, ctx.pos = xx:detach(), pos
      return c_op(xx)
    end
    F.backward = function(ctx, g)
      local n = ctx.x:numel()
      local idx = torch.tensor({ctx.pos}, {dtype = 'int64'})
      return torch.zeros(n, {dtype = g.dtype}):index_add(1, idx, g:reshape(1)):view(ctx.x:size())
    end
    return F.apply(x)
  end
  local d, kd = dim_keep(x, dim, keepdim)
  return values_with_indices('Median', c_op, d, kd, x, dim, keepdim, ...)
end)

-- ---- cumprod ----
-- d/dx_i of sum_j g_j prod_{k<=j} x_k = (prod_{k<i} x_k) * R_i with
-- R_i = g_i + x_{i+1} R_{i+1}: exact with zeros. Without zeros the closed
-- form (reverse cumsum of g * out) / x is used.
local function cumprod_grad(x, dim, g, out)
  local has_zero = x:eq(0):any():item()
  if not has_zero then
    local s = (g * out):flip(dim):cumsum(dim):flip(dim)
    return s / x
  end
  local n = x:size(dim)
  local ones = torch.ones_like(x:narrow(dim, 1, 1))
  local exclusive = n > 1 and torch.cat({ones, x:narrow(dim, 1, n - 1):cumprod(dim)}, dim) or ones
  local r = {}
  r[n] = g:narrow(dim, n, 1)
  for i = n - 1, 1, -1 do
    r[i] = g:narrow(dim, i, 1) + x:narrow(dim, i + 1, 1) * r[i + 1]
  end
  return exclusive * torch.cat(r, dim)
end

wrap('cumprod', function(c_op, x, dim, ...)
  local d = norm_dim(dim, x:dim())
  local F = Function:extend('Cumprod')
  function F.forward(ctx, xx, ...)
    local out = c_op(xx, ...)
    ctx:save_for_backward(xx, out)
    return out
  end
  function F.backward(ctx, g)
    local xx = ctx.saved_tensors[1]
    -- recompute out with history when differentiating twice
    local out = torch.is_grad_enabled() and xx:cumprod(d) or ctx.saved_tensors[2]
    return cumprod_grad(xx, d, g, out)
  end
  return F.apply(x, dim, ...)
end)

-- ---- prod ----
-- d prod / d x_i = product of the others = (exclusive left cumprod) * (exclusive right
-- cumprod): exact with zeros, and differentiable again (cumprod's derivative above).
local function exclusive_cumprod(x, d)
  local n = x:size(d)
  local ones = torch.ones_like(x:narrow(d, 1, 1))
  if n == 1 then return ones end
  return torch.cat({ones, x:narrow(d, 1, n - 1):cumprod(d)}, d)
end

local function prod_dim(c_op, x, d, keepdim)
  local F = Function:extend('Prod')
  function F.forward(ctx, xx)
    ctx.x = xx
    return c_op(xx, d, keepdim)
  end
  function F.backward(ctx, g)
    local xx = ctx.x
    if not keepdim then g = g:unsqueeze(d) end
    local others = exclusive_cumprod(xx, d) * exclusive_cumprod(xx:flip(d), d):flip(d)
    return g * others
  end
  return F.apply(x)
end

-- x:prod(), x:prod(dim, keepdim), x:prod({dims}, keepdim), {dtype=} options
wrap('prod', function(c_op, x, dim, keepdim, opts)
  if type(keepdim) == 'table' then opts, keepdim = keepdim, nil end
  if type(dim) == 'table' and not torch.is_tensor(dim) and (dim.dtype or next(dim) == nil) then opts, dim = dim, nil end
  if opts and opts.dtype and opts.dtype ~= x.dtype then x = x:to(opts.dtype) end
  if dim == nil then return prod_dim(c_op, x:reshape(-1), 1, false) end
  local dims = type(dim) == 'table' and {table.unpack(dim)} or {dim}
  for i, d in ipairs(dims) do dims[i] = norm_dim(d, x:dim()) end
  table.sort(dims, function(a, b) return a > b end)     -- innermost first keeps the others valid
  local y = x
  for _, d in ipairs(dims) do y = prod_dim(c_op, y, d, keepdim == true) end
  return y
end)

-- ---- scatter family ----
-- x:scatter(dim, index, src or value): out = x with src (or value) written at index.
wrap('scatter', function(c_op, x, dim, index, src, opts)
  local add = type(opts) == 'table' and opts.reduce == 'add'
  local d = norm_dim(dim, x:dim())
  local F = Function:extend(add and 'ScatterAdd' or 'Scatter')
  function F.forward(ctx, xx, s) return c_op(xx, dim, index, s, opts) end
  function F.backward(ctx, g)
    local gx = add and g or g:scatter(d, index, 0)
    local gs = torch.is_tensor(src) and g:gather(d, index) or nil
    return gx, gs
  end
  return F.apply(x, src)
end)

-- x:scatter_add(dim, index, src): out = x with src added at index.
wrap('scatter_add', function(c_op, x, dim, index, src)
  local d = norm_dim(dim, x:dim())
  local F = Function:extend('ScatterAdd')
  function F.forward(ctx, xx, s) return c_op(xx, dim, index, s) end
  function F.backward(ctx, g) return g, g:gather(d, index) end
  return F.apply(x, src)
end)

-- x:index_add(dim, index, src, {alpha=}): rows of src added at index along dim.
wrap('index_add', function(c_op, x, dim, index, src, opts)
  local d = norm_dim(dim, x:dim())
  local alpha = type(opts) == 'table' and opts.alpha or 1
  local F = Function:extend('IndexAdd')
  function F.forward(ctx, xx, s) return c_op(xx, dim, index, s, opts) end
  function F.backward(ctx, g)
    local gs = g:index_select(d, index)
    if alpha ~= 1 then gs = gs * alpha end
    return g, gs
  end
  return F.apply(x, src)
end)

-- x:index_copy(dim, index, src): rows of src written at index along dim.
wrap('index_copy', function(c_op, x, dim, index, src)
  local d = norm_dim(dim, x:dim())
  local F = Function:extend('IndexCopy')
  function F.forward(ctx, xx, s) return c_op(xx, dim, index, s) end
  function F.backward(ctx, g) return g:index_fill(d, index, 0), g:index_select(d, index) end
  return F.apply(x, src)
end)

-- x:index_fill(dim, index, value): rows at index set to value.
wrap('index_fill', function(c_op, x, dim, index, value)
  local d = norm_dim(dim, x:dim())
  local F = Function:extend('IndexFill')
  function F.forward(ctx, xx) return c_op(xx, dim, index, value) end
  function F.backward(ctx, g) return g:index_fill(d, index, 0) end
  return F.apply(x)
end)

-- x:masked_scatter(mask, src): the first count(mask) elements of src written where mask holds.
wrap('masked_scatter', function(c_op, x, mask, src)
  local F = Function:extend('MaskedScatter')
  function F.forward(ctx, xx, s) return c_op(xx, mask, s) end
  function F.backward(ctx, g)
    local m = mask:expand_as(g)
    local taken = g:masked_select(m)
    local gs
    if torch.is_tensor(src) and src.requires_grad then
      local rest = src:numel() - taken:numel()
      local flat = rest > 0 and torch.cat({taken, torch.zeros(rest, {dtype = g.dtype})}, 1) or taken
      gs = flat:view(src:size())
    end
    return g:masked_fill(m, 0), gs
  end
  return F.apply(x, src)
end)

-- x:masked_select(mask) with mask broadcast against x: through expand, recorded.
local c_masked_select = methods.masked_select
local function masked_select(x, mask)
  if tracked(x) and torch.is_tensor(mask) and x:size() ~= mask:size() then
    local shape = torch.broadcast_shapes and torch.broadcast_shapes(x:size(), mask:size())
    if not shape then
      local a, b = x:size(), mask:size()
      local n = math.max(#a, #b)
      shape = {}
      for i = 1, n do
        local da, db = a[#a - n + i] or 1, b[#b - n + i] or 1
        if da ~= db and da ~= 1 and db ~= 1 then
          error(string.format('masked_select: mask of size %s cannot broadcast to input of size %s',
                              tostring(b), tostring(a)), 2)
        end
        shape[i] = math.max(da, db)
      end
    end
    return c_masked_select(x:expand(shape), mask:expand(shape))
  end
  return c_masked_select(x, mask)
end
methods.masked_select = masked_select
methods.maskedSelect = masked_select
torch.masked_select = masked_select

-- x:as_strided(size, stride, offset): for a contiguous x, the gradient adds g back at the
-- flat positions each element read (overlaps summed).
wrap('as_strided', function(c_op, x, size, stride, offset)
  if not x:is_contiguous() then
    error('as_strided: the gradient needs a contiguous input (call contiguous() first)', 3)
  end
  local base = x:storageOffset()
  local ids = torch.arange(0, x:numel(), {dtype = 'int64'})
  local rel = offset and (offset - base + 1) or 1
  local ok, pos = pcall(c_op, ids, size, stride, rel)
  if not ok then error(pos, 3) end
  local lo, hi = pos:min():item(), pos:max():item()
  if pos:numel() > 0 and (lo < 0 or hi >= x:numel()) then
    error('as_strided: the view reaches outside the input, its gradient is not defined', 3)
  end
  local flat = pos:reshape(-1) + 1
  local F = Function:extend('AsStrided')
  function F.forward(ctx, xx) return c_op(xx, size, stride, offset) end
  function F.backward(ctx, g)
    return torch.zeros(x:numel(), {dtype = g.dtype}):index_add(1, flat, g:reshape(-1)):view(x:size())
  end
  return F.apply(x)
end)

return torch
