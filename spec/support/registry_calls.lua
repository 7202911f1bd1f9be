-- spec/support/registry_calls.lua: the calls that walk every op of the
-- registry (torch._ops()) -- inputs inside each op's domain on every
-- layout, and the argument lists each family's signatures take -- shared
-- by registry_spec.lua (gradcheck of every derivative) and cuda_spec.lua
-- (every op and derivative on the GPU against the CPU). Loaded with
-- dofile; not a spec itself.
local torch = require 'torch'

-- A tensor a call holds besides its inputs (an index, a mask, a shape to
-- take), on the device of the input t: the GPU spec runs the same calls on
-- GPU copies of the inputs.
local function on(v, t)
  return torch.is_tensor(v) and v:to(t.device) or v
end

-- Inputs inside each registry domain, away from the kinks of the piecewise
-- ops (zero, whole and half numbers): 'any' either sign in [0.17, 0.83],
-- 'pos' positive in the same range, 'big' magnitude in [1.25, 1.85] (a
-- divisor whose quotients stay inside (-1, 1)), 'cnd' a bool condition, 'unq'
-- distinct values (for an order statistic, whose ties are kinks), 'int'
-- integers (int64) for the bitwise ops.
-- The two operands of a binary op come from shifts of different parity, so
-- no pair of them is equal.
local BASE = {0.17, 0.23, 0.31, 0.38, 0.44, 0.57, 0.63, 0.71, 0.78, 0.83, 0.27, 0.69, 0.36}
local function sample(domain, shape, shift)
  local n = 1
  for _, s in ipairs(shape) do n = n * s end
  local v = {}
  for k = 1, n do
    local base = BASE[(k * 5 + shift) % #BASE + 1] + 0.013 * (shift % 2)   -- two operands never tie
    local sign = (domain ~= 'pos' and (k + shift) % 3 == 0) and -1 or 1
    v[k] = sign * (domain == 'big' and 1.1 + base * 0.9 or base)
  end
  if domain == 'cnd' then return torch.tensor(v):view(shape):gt(0) end   -- a condition: bool
  if domain == 'int' then return (torch.tensor(v):view(shape) * 10):round():long() end   -- -8..8: bitwise ops
  if domain == 'unq' then                        -- distinct: spread over [0.17, 0.83], in a scrambled order
    for k = 1, n do v[k] = (k % 2 == 0 and -1 or 1) * (0.17 + 0.66 * ((k * 7 + shift) % n) / n) end
  end
  return torch.tensor(v, {dtype = 'float64'}):view(shape)
end

-- the callable form of op: its Lua name, an alias, div's rounding mode,
-- (max and min of every element) the binding it shares with other forms, or
-- (an nn kernel) its binding
local function callable(op)
  if op.family == 'nn' then                           -- its binding, or none: only derivatives call it
    return function(...)
      assert(op.lua_name, op.name .. ' has no binding: reach it through its forward op\'s derivative')
      return torch[op.signature](...)
    end
  end
  local name = op.lua_name and op.name or op.aliases[1] or (op.family == 'reduce' and op.name)
  if op.family == 'put' and not op.lua_name then      -- scatter_fill is scatter with a value
    local f = torch[op.name:match('^(.*)_fill$')]
    return function(...) return f(...) end
  end
  if op.family == 'select' then                       -- values only; max_dim is reached as max
    local f = torch[op.lua_name and op.name or op.name:match('^(.*)_dim$')]
    return function(...) return (f(...)) end
  end
  if name then return function(...) return torch[name](...) end end
  local mode = op.name:match('^div_(%a+)$')
  assert(mode, op.name .. ': no Lua name, no alias and no rounding mode')
  return function(a, b) return torch.div(a, b, mode) end
end

-- one value per input, each its own leaf when a tensor
local function layouts(domain, arity)
  local da, db = domain[1], domain[arity] or domain[1]
  local t = sample(da, {4, 3}, 1):t()                  -- 3x4, transposed
  local n = sample(da, {3, 6}, 2):narrow(2, 2, 4)      -- 3x4 with gaps between rows
  if arity == 1 then return {{t}, {n}, {sample(da, {2, 3}, 3)}} end
  local row = sample(db, {1, 4}, 4)
  local col = sample(da, {1, 3}, 5):t()                -- 3x1, transposed
  local tb = sample(db, {4, 3}, 6):t()
  if arity == 2 then
    return {{t, row}, {col, tb}, {n, sample(db, {3, 4}, 7)}, {t, sample(db, {1}, 8)[1]},
            {sample(da, {1}, 9)[1], tb}}
  end
  -- a third operand, scaled off the first two's values so that none ties
  local function third(shape, shift) return sample(domain[3], shape, shift) * 1.031 end
  return {{t, row, third({3, 1}, 10)}, {col, tb, third({4}, 11)}, {n, sample(db, {3, 4}, 7), third({4, 3}, 12):t()},
          {t, sample(db, {1}, 8)[1], third({1}, 13)[1]}, {n, row, third({1}, 14)[1]}}
end

-- the ways a reduction or an op along a dim is called, by its signature:
-- every element, one dim, a dim kept, a list of dims
local REDUCE_CALLS = {
  dims = {{}, {1}, {2, true}, {{1, 2}}, {-1, {keepdim = true}}},
  var = {{}, {2}, {1, false, true}, {{1, 2}, {correction = 2}}},
  norm = {{}, {3, 2}, {1, 1, true}, {'inf', 2}, {2.5, {1, 2}}},
  none = {{}},
  dim = {{1}, {2}, {-1, {dtype = 'float64'}}},        -- along a dim
}
-- the selections' calls, by signature (max along a dim is max's DIM form)
local SELECT_CALLS = {
  dim = {{1}, {2, true}, {-1}, {{dim = 1, keepdim = true}}},
  kth = {{2}, {1, 1}, {3, 2, true}, {2, {dim = 1, keepdim = true}}},
  sort = {{}, {1}, {2, true}, {{dim = 1, descending = true}}},
  topk = {{2}, {1, 1}, {2, 2, false}, {3, {dim = 2, largest = false}}},
  arg = {{}, {1}, {2, true}, {-1}, {{dim = 1, keepdim = true}}},
}

-- a product's factors (and input) from its signature, a word per input and
-- a letter per dim: "MK KN" is a (3, 4) times a (4, 5); in "...MK ...KN"
-- (matmul) the batch dims are none, one, or two that broadcast, and a
-- factor without batch dims may be a vector (its M or N dropped)
local SIZE = {B = 2, M = 3, K = 4, N = 5}
local function word_shapes(word)
  local batched, letters = word:match('^(%.*)(%a+)$')
  local base = {}
  for c in letters:gmatch('%a') do base[#base + 1] = SIZE[c] end
  if batched == '' then return {base} end
  local out = {base, {base[2]}, {2, base[1], base[2]}, {2, 1, base[1], base[2]}}
  if letters == 'KN' then out[2] = {base[1]} end
  return out
end
local function product_shapes(signature)
  local words = {}
  for w in signature:gmatch('%S+') do words[#words + 1] = word_shapes(w) end
  local out = {{}}
  for _, options in ipairs(words) do
    local next_out = {}
    for _, partial in ipairs(out) do
      for _, shape in ipairs(options) do
        local c = {table.unpack(partial)}
        c[#c + 1] = shape
        next_out[#next_out + 1] = c
      end
    end
    out = next_out
  end
  return out
end
-- an input of shape: contiguous, or (t) a transpose of its last two dims
local function sample_shape(shape, shift, t)
  if not t or #shape < 2 then return sample('any', shape, shift) end
  local s = {table.unpack(shape)}
  s[#s], s[#s - 1] = s[#s - 1], s[#s]
  return sample('any', s, shift):transpose(-1, -2)
end
local function product_calls(op, f)
  local out = {}
  for _, shapes in ipairs(product_shapes(op.signature)) do
    for _, t in ipairs({false, true}) do
      local inputs = {}
      for i, shape in ipairs(shapes) do inputs[i] = sample_shape(shape, i, t) end
      out[#out + 1] = {inputs, f}
    end
  end
  if op.arity == 3 then                                -- input broadcast, scalars, Torch7's form, in place
    local i, a, b = table.unpack(out[1][1])
    out[#out + 1] = {{i:select(1, 1), a, b}, f}
    out[#out + 1] = {{i, a, b}, function(x, y, z) return f(x, y, z, {beta = 0.5, alpha = -2.5}) end}
    out[#out + 1] = {{i, a, b}, function(x, y, z) return f(0.5, x, -2.5, y, z) end}
    local inplace = op.name .. '_'
    out[#out + 1] = {{i, a, b}, function(x, y, z) local c = x:clone(); return c[inplace](c, y, z) end}
    out[#out + 1] = {{i, a, b}, function(x, y, z) local c = x * 1; return c[inplace](c, 0.5, -2.5, y, z) end}
  end
  return out
end

-- an op with parameters, from its signature (a word per argument after the
-- tensor: a plain word a tensor, word# a tensor or a number, name=default a
-- number): every layout whose numbers the signature allows, each parameter
-- given away from its default, and the in-place form
-- an op that exists in place only (fill, zero, copy: op.inplace_only), on a
-- copy of x on every layout: a value (a number, a 0-dim tensor, a tensor of
-- one element), a source (of x's shape, transposed, broadcast, and Torch7's
-- other shape of as many elements)
local function write_calls(op)
  local out = {}
  local function call(x, ...) local c = x * 1; return c[op.name .. '_'](c, ...) end
  for _, inputs in ipairs(layouts(op.domain, 1)) do
    local x = inputs[1]
    if op.arity == 1 then
      out[#out + 1] = {{x}, call}
    elseif op.signature:sub(-1) == '#' then      -- a value
      out[#out + 1] = {{x, sample(op.domain[2], {}, 3)}, call}
      out[#out + 1] = {{x, sample(op.domain[2], {1, 1}, 4)}, call}
      out[#out + 1] = {{x}, function(t) return call(t, 0.625) end}
    else                                         -- a source
      local s1, s2 = x:size(1), x:size(2)
      out[#out + 1] = {{x, sample(op.domain[2], {s1, s2}, 5)}, call}
      out[#out + 1] = {{x, sample(op.domain[2], {s2, s1}, 6):t()}, call}
      out[#out + 1] = {{x, sample(op.domain[2], {1, s2}, 7)}, call}
      out[#out + 1] = {{x, sample(op.domain[2], {s1 * s2}, 8)}, call}
    end
  end
  return out
end

local function param_calls(op, f)
  if op.inplace_only then return write_calls(op) end
  local number_ok, params = {false}, {}
  for w in op.signature:gmatch('%S+') do
    local key, default = w:match('^(.-)=(.*)$')
    if key then params[#params + 1] = {key, tonumber(default)} else number_ok[#number_ok + 1] = w:sub(-1) == '#' end
  end
  assert(#number_ok == op.arity, op.name .. ': one operand word per input after the first')
  local out = {}
  for _, inputs in ipairs(layouts(op.domain, op.arity)) do
    local ok, float = true, false          -- every operand allowed, one at least differentiable
    for i, v in ipairs(inputs) do
      ok = ok and (torch.is_tensor(v) or number_ok[i])
      float = float or (torch.is_tensor(v) and v:is_floating_point())
    end
    if ok and float then out[#out + 1] = {inputs, f} end
  end
  local first = out[1][1]
  for _, p in ipairs(params) do
    local opts = {[p[1]] = p[2] * 1.5 + 0.25}
    out[#out + 1] = {first, function(...) local a = {...}; a[#a + 1] = opts; return f(table.unpack(a)) end}
  end
  if op.inplace then
    out[#out + 1] = {first, function(x, ...) local c = x * 1; return c[op.name .. '_'](c, ...) end}
  end
  return out
end

-- an index op, by its signature: x on every layout, along each dim, at
-- indices that repeat (their gradients add up); 'select' one index per
-- slice (a vector; a Lua table too), 'gather' one per element of the result
local function index_calls(op, f)
  local out = {}
  for _, inputs in ipairs(layouts(op.domain, 1)) do
    local x = inputs[1]
    for dim = 1, 2 do
      local n = x:size(dim)
      local index
      if op.signature == 'select' then
        index = {n, 1, n, 2}
      else
        local shape = {x:size(1), x:size(2)}
        shape[3 - dim] = shape[3 - dim] - 1                 -- smaller than x across the dim
        shape[dim] = n + 1                                  -- and longer along it, with repeats
        local v = {}
        for k = 1, shape[1] * shape[2] do v[k] = (k * 7) % n + 1 end
        index = torch.tensor(v):view(shape)
      end
      out[#out + 1] = {inputs, function(t) return f(t, dim, on(index, t)) end}
      if type(index) == 'table' then
        out[#out + 1] = {inputs, function(t) return f(t, -1, on(torch.tensor(index), t):narrow(1, 1, 3)) end}
      end
    end
  end
  return out
end

-- a put, by its signature: x on every layout, along each dim, at distinct
-- indices (a place written twice keeps one write, which finite differences
-- see and a gradient cannot), from a source of the index's shape ('select':
-- the index along the dim, x's sizes elsewhere; 'gather': the index's
-- shape) or a value (a 0-dim tensor, or a Lua number); also in place
local function put_calls(op, f)
  local shape_kind, source_kind = op.signature:match('^(%a+) (%a+)$')
  local out = {}
  for li, inputs in ipairs(layouts(op.domain, 1)) do
    local x = inputs[1]
    for dim = 1, 2 do
      local n = x:size(dim)
      local index, src_shape
      if shape_kind == 'select' then
        index = torch.tensor({n, 1})
        src_shape = {x:size(1), x:size(2)}
        src_shape[dim] = 2
      else
        local shape = {x:size(1), x:size(2)}
        shape[dim] = 2
        local v = {}
        for i = 0, shape[1] - 1 do
          for j = 0, shape[2] - 1 do
            local along, across = dim == 1 and i or j, dim == 1 and j or i
            v[#v + 1] = (along + across) % n + 1           -- distinct along the dim
          end
        end
        index = torch.tensor(v):view(shape)
        src_shape = shape
      end
      local src = source_kind == 'value' and sample(op.domain[2], {1}, li + dim)[1]
        or sample(op.domain[2], src_shape, li + dim + 3)
      if source_kind == 'value' and li == 1 and op.lua_name then src = torch.tensor(src, {dtype = 'float64'}) end
      out[#out + 1] = {{x, src}, function(t, s) return f(t, dim, on(index, t), s) end}
    end
  end
  -- in place, with the first call's arguments (scatter_fill's in-place form is scatter_'s)
  local first, first_index = out[1][1], nil
  local inplace = (op.lua_name and op.name or op.name:match('^(.*)_fill$')) .. '_'
  first_index = shape_kind == 'select' and torch.tensor({first[1]:size(1), 1}) or nil
  if not first_index then
    local x = first[1]
    local v = {}
    for i = 0, 1 do for j = 0, x:size(2) - 1 do v[#v + 1] = (i + j) % x:size(1) + 1 end end
    first_index = torch.tensor(v):view(2, x:size(2))
  end
  out[#out + 1] = {first, function(t, src) local c = t * 1; return c[inplace](c, 1, on(first_index, t), src) end}
  if op.name == 'index_add' then
    out[#out + 1] = {first, function(t, src) return f(t, 1, on(first_index, t), src, {alpha = -2.5}) end}
  end
  return out
end

-- a mask op, by its signature: x on every layout with a mask of its shape
-- and one that broadcasts (a row), then a value (a 0-dim tensor, or a Lua
-- number), a source (a vector with two elements more than the mask sets) or
-- nothing; also in place
local function mask_calls(op, f)
  local function pattern(shape)
    local v, set = {}, 0
    for k = 1, shape[1] * shape[2] do v[k] = k % 3 ~= 0; set = set + (v[k] and 1 or 0) end
    return torch.tensor(v):view(shape), set
  end
  local out = {}
  for li, inputs in ipairs(layouts(op.domain, 1)) do
    local x = inputs[1]
    local rows, cols = x:size(1), x:size(2)
    for _, m in ipairs({{pattern({rows, cols})}, {pattern({1, cols})}}) do
      local mask, set = m[1], m[2] * (m[1]:size(1) == 1 and rows or 1)
      if op.signature == 'none' then
        out[#out + 1] = {{x}, function(t) return f(t, on(mask, t)) end}
      else
        local src = op.signature == 'value' and sample(op.domain[2], {1}, li + 5)[1] or sample(op.domain[2], {set + 2}, li + 5)
        if op.signature == 'value' and li == 1 then src = torch.tensor(src, {dtype = 'float64'}) end
        out[#out + 1] = {{x, src}, function(t, v) return f(t, on(mask, t), v) end}
      end
    end
  end
  if op.inplace then
    local first, mask = out[1][1], pattern({out[1][1][1]:size(1), out[1][1][1]:size(2)})
    out[#out + 1] = {first, function(t, v) local c = t * 1; return c[op.name .. '_'](c, on(mask, t), v) end}
  end
  return out
end

-- a view's calls, by its signature: each entry gives, for an x of two dims
-- (s1 x s2), the argument lists to call it with; an op with a signature
-- missing here fails. as_strided's gradient needs a contiguous x, which
-- the call makes first.
local VIEW_CALLS = {
  ['shape:like'] = function(s1, s2)             -- size-1 dims inserted: a view on every layout
    return {{s1, 1, s2}, {{1, s1, s2}}, {torch.zeros(s1, s2, 1)}}
  end,
  ['start_dim:dim=1 end_dim:dim=-1'] = function() return {{}, {1, 2}, {-2}} end,
  ['dim:dim sizes:shape'] = function(s1, s2) return {{2, {s2, 1}}, {1, 1, s1}} end,
  ['dim:dim?'] = function() return {{}, {1}} end,
  ['dim:newdim'] = function() return {{1}, {3}, {-1}} end,
  ['size:like'] = function(s1, s2) return {{2, s1, s2}, {2, -1, -1}, {torch.zeros(3, s1, s2)}} end,
  [''] = function() return {{}} end,
  ['dim0:dim dim1:dim'] = function() return {{1, 2}, {2, -2}, {1, 1}} end,
  ['dims:dims'] = function() return {{2, 1}, {{2, 1}}} end,
  ['source:dimlist destination:dimlist'] = function() return {{1, 2}, {{1, 2}, {2, 1}}, {-1, 1}} end,
  ['dim:dim start:pos length:int'] = function(s1) return {{1, 2, s1 - 1}, {2, -2, 2}} end,
  ['dim:dim index:pos'] = function() return {{1, 2}, {2, -1}} end,
  ['offset:int=0 dim1:dim=1 dim2:dim=2'] = function() return {{}, {1}, {-1, 2, 1}, {{offset = 1}}} end,
  ['dimension:dim size:int step:int'] = function() return {{2, 2, 1}, {1, 2, 2}, {2, 3, 1}} end,
  ['size:ints stride:ints storage_offset:offset?'] = function()   -- the last reads elements twice
    return {{{2, 2}, {1, 2}, 2}, {{3}, {2}}, {{2, 3}, {1, 1}}}
  end,
  ['shifts:ints dims:dimlist?'] = function() return {{1}, {2, 1}, {{1, -1}, {1, 2}}} end,
  ['diagonal:int=0'] = function() return {{}, {1}, {-1}, {{diagonal = 1}}} end,
  ['repeats:shape'] = function() return {{2, 1}, {1, 2, 2}} end,
}
local function view_calls(op, f)
  local make = VIEW_CALLS[op.signature]
  assert(make, op.name .. ': no calls for the view signature "' .. op.signature .. '"')
  local contiguous = op.signature:find('stride:ints', 1, true) ~= nil
  local out = {}
  for _, inputs in ipairs(layouts(op.domain, 1)) do
    local x = inputs[1]
    for _, args in ipairs(make(x:size(1), x:size(2))) do
      out[#out + 1] = {inputs, function(t)
        local a = {}
        for i, v in ipairs(args) do a[i] = on(v, t) end
        return f(contiguous and t:contiguous() or t, table.unpack(a))
      end}
    end
  end
  if op.inplace then
    out[#out + 1] = {out[1][1], function(t) local c = t * 1; return c[op.name .. '_'](c, 1) end}
  end
  return out
end

-- a join's calls: x on every layout with tensors beside it that differ along
-- the dim joined (cat) or match it (stack), as a list or Torch7's
-- arguments, the dim positional or {dim=}, negative too
local function join_calls(op, f)
  local out = {}
  local stack = op.name == 'stack'
  for li, inputs in ipairs(layouts(op.domain, 1)) do
    local x = inputs[1]
    local s1, s2 = x:size(1), x:size(2)
    for dim = 1, stack and 3 or 2 do
      local shape = {s1, s2}
      if not stack then shape[dim] = shape[dim] + 1 end
      local y, z = sample('any', shape, li + dim), sample('any', {s1, s2}, li + dim + 2):mul(1.5)
      out[#out + 1] = {{x, y, z}, function(a, b, c) return f(stack and {a, c, a} or {a, b, c}, dim) end}
    end
    out[#out + 1] = {{x, x * 2}, function(a, b) return f(a, b, -1) end}
    out[#out + 1] = {{x}, function(a) return f({a}, {dim = 1}) end}
  end
  return out
end

-- an nn kernel's calls, by op: its binding (torch._conv2d, ...) with its
-- positional arguments, on a contiguous and a transposed input (an image
-- whose last two dims are swapped in memory); the ops only derivatives call
-- (conv2d_weight, resample_adjoint) are reached as the vector-Jacobian
-- product of their forward op under create_graph, which is linear in the
-- incoming gradient. An nn op without calls here fails the walk.
local function images(shape, shift)
  local contiguous = sample('any', shape, shift)
  local swapped = {shape[1], shape[2], shape[4], shape[3]}
  return {contiguous, sample('any', swapped, shift + 1):transpose(3, 4)}
end

-- the same for volumes (n, c, t, h, w): contiguous, and with h and w swapped in memory
local function volumes(shape, shift)
  local contiguous = sample('any', shape, shift)
  local swapped = {shape[1], shape[2], shape[3], shape[5], shape[4]}
  return {contiguous, sample('any', swapped, shift + 1):transpose(4, 5)}
end

local function vjp(forward, wrt, g)     -- forward's gradient in wrt for the incoming g, recorded
  return torch.autograd.grad(forward(wrt), wrt, {grad_outputs = g, create_graph = true})[1]
end

-- the calls each(x) gives for x on each of images(shape, shift), gathered
local function on_images(shape, shift, each)
  local out = {}
  for _, x in ipairs(images(shape, shift)) do
    for _, c in ipairs(each(x)) do out[#out + 1] = c end
  end
  return out
end

-- x alone as the input, the binding f called on it with the rest of the arguments
local function alone(x, f, ...)
  local args = table.pack(...)
  return {{x}, function(a) return f(a, table.unpack(args, 1, args.n)) end}
end

local NN_CALLS = {
  conv2d = function(f)
    return on_images({2, 4, 5, 5}, 1, function(x)
      local w, b = sample('any', {6, 2, 3, 2}, 3), sample('any', {6}, 4)
      return {{{x, w, b}, function(a, c, d) return f(a, c, d, 1, 2, 1, 0, 1, 1, 1, 1, 2) end},
              {{x, w:narrow(1, 1, 4)}, function(a, c) return f(a, c, nil, 2, 1, 0, 1, 0, 0, 2, 1, 2) end}}
    end)
  end,
  conv_transpose2d = function(f)
    return on_images({2, 4, 3, 4}, 5, function(x)
      local w, b = sample('any', {4, 3, 2, 3}, 6), sample('any', {6}, 7)
      return {{{x, w, b}, function(a, c, d) return f(a, c, d, 2, 1, 1, 0, 1, 0, 1, 1, 2) end}}
    end)
  end,
  conv2d_weight = function()
    return on_images({2, 3, 5, 4}, 8, function(x)
      return {{{x, sample('any', {2, 4, 3, 3}, 9)}, function(a, gy)
        local w = torch.zeros(4, 3, 3, 2, {dtype = 'float64', device = a.device}):requires_grad_()
        return vjp(function(t) return torch._conv2d(a, t, nil, 1, 1, 0, 0, 0, 0, 1, 1, 1) end, w, gy)
      end}}
    end)
  end,
  conv3d = function(f)
    local out = {}
    for _, x in ipairs(volumes({2, 4, 3, 4, 4}, 96)) do
      local w, b = sample('any', {4, 2, 2, 2, 2}, 98), sample('any', {4}, 99)
      out[#out + 1] = {{x, w, b}, function(a, c, d) return f(a, c, d, 1, 2, 1, 1, 0, 0, 1, 1, 1, 1, 1, 2, 2) end}
      out[#out + 1] = {{x, sample('any', {3, 4, 1, 2, 2}, 100)},
                       function(a, c) return f(a, c, nil, 2, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 1, 1) end}
    end
    return out
  end,
  conv_transpose3d = function(f)
    local out = {}
    for _, x in ipairs(volumes({2, 4, 2, 3, 3}, 101)) do
      local w, b = sample('any', {4, 3, 2, 2, 2}, 103), sample('any', {6}, 104)
      out[#out + 1] = {{x, w, b}, function(a, c, d) return f(a, c, d, 2, 1, 1, 0, 1, 0, 1, 0, 0, 1, 1, 2, 2) end}
    end
    return out
  end,
  conv3d_weight = function()
    local out = {}
    for _, x in ipairs(volumes({2, 4, 3, 4, 3}, 105)) do
      out[#out + 1] = {{x, sample('any', {2, 4, 2, 3, 2}, 107)}, function(a, gy)
        local w = torch.zeros(4, 2, 2, 2, 2, {dtype = 'float64', device = a.device}):requires_grad_()
        return vjp(function(t) return torch._conv3d(a, t, nil, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 2) end, w, gy)
      end}
    end
    return out
  end,
  max_pool2d_indices = function(f) return {alone(images({1, 2, 5, 5}, 10)[2], f, 2, 2, 2, 2, 1, 1, 1, 1, true)} end,
  adaptive_max_pool2d_indices = function(f) return {alone(images({1, 2, 5, 5}, 11)[1], f, 3, 2)} end,
  avg_pool3d = function(f)
    return {alone(sample('any', {1, 2, 4, 5, 5}, 92), f, 2, 3, 2, 2, 2, 1, 1, 1, 1, true, false, false),
            alone(sample('any', {2, 1, 3, 4, 5}, 93):transpose(3, 5), f, 3, 2, 2, 1, 2, 2, 1, 0, 1, false, true, true)}
  end,
  avg_pool3d_adjoint = function()
    return {{{sample('any', {1, 2, 3, 3, 4}, 94), sample('any', {1, 2, 2, 2, 4}, 95)}, function(a, gy)
      local x = torch.zeros(1, 2, 3, 3, 4, {dtype = 'float64', device = a.device}):requires_grad_()
      return vjp(function(t) return torch._avg_pool3d(t * a, 2, 2, 1, 2, 2, 1, 1, 1, 0, true, false, false) end, x, gy)
    end}}
  end,
  max_pool3d_indices = function(f)
    return {alone(sample('any', {1, 2, 4, 5, 5}, 90), f, 2, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1, 2, true),
            alone(sample('any', {2, 2, 3, 4, 5}, 91):transpose(3, 5), f, 3, 2, 2, 1, 2, 2, 1, 0, 1, 1, 1, 1, false)}
  end,
  avg_pool2d = function(f)
    return on_images({1, 2, 5, 6}, 12, function(x)
      return {alone(x, f, 3, 2, 2, 2, 1, 1, true, false, false), alone(x, f, 2, 2, 1, 2, 0, 1, false, true, true)}
    end)
  end,
  adaptive_avg_pool2d = function(f)
    return on_images({1, 2, 5, 6}, 13, function(x) return {alone(x, f, 3, 4)} end)
  end,
  upsample_nearest2d = function(f)
    return on_images({1, 2, 3, 4}, 14, function(x) return {alone(x, f, 5, 7), alone(x, f, 6, 6, 2, 1.5)} end)
  end,
  upsample_bilinear2d = function(f)
    return on_images({1, 2, 3, 4}, 15, function(x)
      return {alone(x, f, 5, 7, true), alone(x, f, 6, 6, false, 2, 1.5)}
    end)
  end,
  resample_adjoint = function()
    return on_images({1, 2, 5, 7}, 16, function(g)
      return {{{g}, function(gy)
        local x = torch.zeros(1, 2, 3, 4, {dtype = 'float64', device = gy.device}):requires_grad_()
        return vjp(function(t) return torch._upsample_bilinear2d(t, 5, 7, false) end, x, gy)
      end}}
    end)
  end,
  im2col = function(f)
    return on_images({2, 2, 5, 4}, 17, function(x) return {alone(x, f, 2, 3, 1, 1, 1, 0, 2, 1)} end)
  end,
  col2im = function(f)
    -- 2 channels of 2x3 windows (12 rows), on (5, 4) with padding (1, 0), stride (2, 1): 3x2 = 6 blocks
    return {alone(sample('any', {2, 6, 12}, 18):transpose(2, 3), f, 5, 4, 2, 3, 1, 1, 1, 0, 2, 1)}
  end,
  batch_norm = function(f)
    return on_images({3, 2, 2, 3}, 19, function(x)
      local w, b = sample('any', {2}, 20), sample('any', {2}, 21)
      return {{{x, w, b}, function(a, c, d)
                local rm, rv = torch.zeros(2, {dtype = 'float64'}), torch.ones(2, {dtype = 'float64'})
                return f(a, c, d, on(rm, a), on(rv, a), true, 0.1, 1e-5)
              end},
              {{x, w}, function(a, c)    -- eval mode: the running statistics are constants
                local rm, rv = sample('any', {2}, 22), sample('pos', {2}, 23)
                return f(a, c, nil, on(rm, a), on(rv, a), false, 0.1, 1e-5)
              end}}
    end)
  end,
  group_norm = function(f)
    return on_images({2, 4, 2, 3}, 24, function(x)
      local w, b = sample('any', {4}, 25), sample('any', {4}, 26)
      return {{{x, w, b}, function(a, c, d) return f(a, 2, c, d, 1e-5) end}}
    end)
  end,
  layer_norm = function(f)
    return on_images({2, 2, 3, 4}, 27, function(x)
      local w, b = sample('any', {3, 4}, 28), sample('any', {3, 4}, 29)
      return {{{x, w, b}, function(a, c, d) return f(a, 2, c, d, 1e-5) end}, alone(x, f, 1, nil, nil, 1e-5)}
    end)
  end,
}
-- the pads: left, right, top, bottom (negative crops)
for _, pad in ipairs({'reflection_pad2d', 'replication_pad2d', 'circular_pad2d'}) do
  NN_CALLS[pad] = function(f)
    return on_images({1, 2, 4, 5}, 30, function(x) return {alone(x, f, 2, 1, 0, 3), alone(x, f, -1, 2, 1, -1)} end)
  end
end

local function nn_calls(op)
  local make = NN_CALLS[op.name]
  assert(make, op.name .. ': an nn kernel without calls in spec/support/registry_calls.lua')
  return make(callable(op))
end

-- a conversion's calls: to float64 on the input's own device, a copy forced
-- (x itself otherwise), by name and by options
local function cast_calls(op)
  local out = {}
  for _, inputs in ipairs(layouts(op.domain, 1)) do
    out[#out + 1] = {inputs, function(t) return t:to('float64', {copy = true}) end}
    out[#out + 1] = {inputs, function(t) return t:to({dtype = 'float64', device = t.device, copy = true}) end}
  end
  return out
end

-- a random op's calls, by op: each draws from a generator of its own seeded
-- in the call (the same numbers each time), a sampler on a copy of its input;
-- a random op without calls here fails the walk
local function seeded() return torch.Generator():manual_seed(5) end
local RANDOM_CALLS = {
  uniform_ = function(t) return (t * 1):uniform_(-2, 3, {generator = seeded()}) end,
  normal_ = function(t) return (t * 1):normal_(1, 0.5, {generator = seeded()}) end,
  exponential_ = function(t) return (t * 1):exponential_(2, {generator = seeded()}) end,
  geometric_ = function(t) return (t * 1):geometric_(0.3, {generator = seeded()}) end,
  cauchy_ = function(t) return (t * 1):cauchy_(0, 2, {generator = seeded()}) end,
  log_normal_ = function(t) return (t * 1):log_normal_(0, 0.5, {generator = seeded()}) end,
  random_ = function(t) return (t * 1):random_(-3, 7, {generator = seeded()}) end,
  bernoulli_ = function(t) return (t * 1):bernoulli_(t:abs(), {generator = seeded()}) end,
  bernoulli = function(t) return torch.bernoulli(t:abs(), {generator = seeded()}) end,
  normal = function(t) return torch.normal(t, t:abs(), {generator = seeded()}) end,
  multinomial = function(t) return torch.multinomial(t:abs(), 2, true, {generator = seeded()}) end,
  randperm = function(t) return torch.randperm(t:numel(), {generator = seeded()}) end,
}
local function random_calls(op)
  local f = RANDOM_CALLS[op.name]
  assert(f, op.name .. ': a random op without calls in spec/support/registry_calls.lua')
  local out = {}
  for i, inputs in ipairs(layouts(op.domain, 1)) do out[i] = {inputs, f} end
  return out
end

-- a factory's calls, by op: no tensor input; a factory without calls here
-- fails the walk
local F64 = {dtype = 'float64'}
local FACTORY_CALLS = {
  empty = function() return torch.empty(2, 3, F64):fill_(0.5) end,
  zeros = function() return torch.zeros(2, 3, F64) end,
  ones = function() return torch.ones({3}, F64) end,
  full = function() return torch.full({2, 2}, 0.75, F64) end,
  eye = function() return torch.eye(3, 2, F64) end,
  arange = function() return torch.arange(1, 2, 0.25, F64) end,
  range = function() return torch.range(1, 2, 0.25, F64) end,
  linspace = function() return torch.linspace(-1, 1, 5, F64) end,
  logspace = function() return torch.logspace(0, 2, 3, F64) end,
}
local function factory_calls(op)
  local f = FACTORY_CALLS[op.name]
  assert(f, op.name .. ': a factory without calls in spec/support/registry_calls.lua')
  return {{{}, f}}
end

-- an optimizer step's calls, by op: one step on a parameter with its
-- gradient and state, under no_grad; each returns the updated parameter
local function buffers(n)
  local t = {}
  for i = 1, n do t[i] = torch.full({2, 3}, 0.25 * i, F64) end
  return table.unpack(t)
end
local function stepped(f)
  return function()
    local p, g = sample('any', {2, 3}, 1), sample('any', {2, 3}, 2)
    torch.no_grad(function() f(p, g) end)
    return p
  end
end
local OPTIM_CALLS = {    -- the state buffers, then the hyperparameters
  optim_sgd = function(p, g)
    torch._optim_sgd(p, g, buffers(1), 0.1, 0.01, 0.9, 0, true, false, false)
  end,
  optim_adam = function(p, g)
    local m, v, vmax = buffers(3)
    torch._optim_adam(p, g, m, v, vmax, 0.1, 0.9, 0.999, 1e-8, 0, 0.1, 0.001, true, false, true)
  end,
  optim_rmsprop = function(p, g)
    local sq, avg, buf = buffers(3)
    torch._optim_rmsprop(p, g, sq, avg, buf, 0.01, 0.99, 1e-8, 0, 0.9, true, false)
  end,
  optim_adagrad = function(p, g) torch._optim_adagrad(p, g, buffers(1), 0.1, 1e-10, 0, false) end,
  optim_adadelta = function(p, g)
    local sq, acc = buffers(2)
    torch._optim_adadelta(p, g, sq, acc, 1, 0.9, 1e-6, 0, false)
  end,
  optim_adamax = function(p, g)
    local m, u = buffers(2)
    torch._optim_adamax(p, g, m, u, 0.002, 0.9, 0.999, 1e-8, 0, false)
  end,
  optim_nadam = function(p, g)
    local m, v = buffers(2)
    torch._optim_nadam(p, g, m, v, 0.002, 0.9, 0.999, 1e-8, 0, 0.001, 0.1, 0.9, false, false)
  end,
  optim_radam = function(p, g)
    local m, v = buffers(2)
    torch._optim_radam(p, g, m, v, 0.001, 0.9, 0.999, 1e-8, 0, 0.1, 0.001, 0, false, false)
  end,
}
local function optim_calls(op)
  local f = OPTIM_CALLS[op.name]
  assert(f, op.name .. ': an optimizer step without calls in spec/support/registry_calls.lua')
  return {{{}, stepped(f)}}
end

-- every op's calls on float64 inputs: {inputs, the function} pairs
local function calls(op)
  if op.family == 'nn' then return nn_calls(op) end
  if op.family == 'factory' then return factory_calls(op) end
  if op.family == 'optim' then return optim_calls(op) end
  if op.family == 'random' then return random_calls(op) end
  if op.family == 'cast' then return cast_calls(op) end
  local f = callable(op)
  if op.family == 'product' or op.family == 'add_product' then return product_calls(op, f) end
  if op.family == 'param' then return param_calls(op, f) end
  if op.family == 'index' then return index_calls(op, f) end
  if op.family == 'put' then return put_calls(op, f) end
  if op.family == 'mask' then return mask_calls(op, f) end
  if op.family == 'view' then return view_calls(op, f) end
  if op.family == 'join' then return join_calls(op, f) end
  if not op.signature then
    local out = {}
    for i, inputs in ipairs(layouts(op.domain, op.arity)) do out[i] = {inputs, f} end
    return out
  end
  local out = {}
  for _, inputs in ipairs(layouts(op.domain, 1)) do
    for _, args in ipairs((op.family == 'select' and SELECT_CALLS or REDUCE_CALLS)[op.signature]) do
      out[#out + 1] = {inputs, function(x) return f(x, table.unpack(args)) end}
    end
  end
  return out
end

return {sample = sample, callable = callable, layouts = layouts, calls = calls}
