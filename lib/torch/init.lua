-- torch: the Lua half of the tensor library. The C core (torch.core) gives
-- the tensor type and its ops; this file adds classes, typed constructors,
-- dtype names, printing and the small utilities Torch7 users expect.
local core = require 'torch.core'
local torch = core
package.loaded.torch = torch
_G.torch = torch

local methods = core._methods
local tensor_mt = core._tensor_mt

-- dtype names as values: x.dtype == torch.float32
local dtype_names = {'float32', 'float64', 'float16', 'bfloat16', 'int8', 'uint8',
                     'int16', 'int32', 'int64', 'bool'}
for _, name in ipairs(dtype_names) do torch[name] = name end
torch.float, torch.double, torch.half = 'float32', 'float64', 'float16'
torch.long, torch.int, torch.short = 'int64', 'int32', 'int16'

-- Torch7 stems of the typed constructors, per dtype
local stems = {float32 = 'Float', float64 = 'Double', float16 = 'Half', bfloat16 = 'BFloat16',
               int8 = 'Char', uint8 = 'Byte', int16 = 'Short', int32 = 'Int', int64 = 'Long',
               bool = 'Bool'}

-- torch.Tensor and torch.FloatTensor, ...: callable constructors whose fields
-- are the tensor methods (torch.Tensor.add(x, y) works as in Torch7).
-- A storage of the tensor's own type gives a view of it, as in Torch7:
-- torch.FloatTensor(storage [, offset [, sizes [, strides]]]).
local function constructor(dtype_of)
  return setmetatable({}, {
    __index = methods,
    __call = function(_, first, ...)
      local dtype = dtype_of()
      if core.isStorage(first) then
        if first:_dtype() == dtype then return methods.set(core._new(dtype), first, ...) end
        if first:_dtype() ~= 'int64' then                  -- a LongStorage gives sizes
          error(string.format('Tensor: a %s tensor cannot view a %s', dtype, torch.typename(first)), 2)
        end
      end
      if first == nil and select('#', ...) == 0 then return core._new(dtype) end
      return core._new(dtype, first, ...)
    end,
  })
end
torch.Tensor = constructor(function() return core.get_default_dtype() end)
for dtype, stem in pairs(stems) do
  torch[stem .. 'Tensor'] = constructor(function() return dtype end)
  rawset(torch[stem .. 'Tensor'], '__typename', 'torch.' .. stem .. 'Tensor')
end

function torch.setdefaulttensortype(name)
  core.set_default_dtype(name)
end
function torch.getdefaulttensortype()
  return 'torch.' .. stems[core.get_default_dtype()] .. 'Tensor'
end

-- ---- classes (Torch7's torch.class) ----
local classes = {}

-- A public method (a name not starting with '_') that one of moontorch's libraries
-- defines on a class checks its self, so that obj.method(...) for obj:method(...) says
-- so at the caller's line instead of failing inside; the check is one type test.
local checked_origin = setmetatable({}, {__mode = 'k'})   -- checking method -> the method
local function self_checked(class, name, f)
  local checked = function(self, ...)
    if type(self) ~= 'table' or getmetatable(self) == nil then
      error(string.format("%s:%s: called with '.' (the object is missing); use a colon: object:%s(...)",
                          rawget(class, '__typename'), name, name), 2)
    end
    return f(self, ...)
  end
  checked_origin[checked] = f
  return checked
end

-- torch._method_origin(f): the method a self-checking method calls (f itself otherwise):
-- where its source is, for help
function torch._method_origin(f) return checked_origin[f] or f end

local function method_defined(class, k, v)
  if type(v) == 'function' and type(k) == 'string' and k:sub(1, 1) ~= '_' and not class.__static_methods then
    local info = debug.getinfo(v, 'S')
    if info.what == 'Lua' and torch._in_library and torch._in_library(info.source) then
      v = self_checked(class, k, v)
    end
  end
  rawset(class, k, v)
end

-- the libraries whose classes a torch.class parent may name before they are loaded
local CLASS_LIBRARIES = {nn = true, optim = true, data = true, nngraph = true}

-- torch.class('nn.Linear', 'nn.Module') -> class table, parent class table.
-- Instances are tables whose metatable is the class; Class(...) builds one
-- and calls __init.
function torch.class(name, parent_name, target)
  assert(type(name) == 'string', 'torch.class: name must be a string')
  if classes[name] then error('torch.class: class ' .. name .. ' already exists', 2) end
  local parent
  if parent_name then
    parent = classes[parent_name]
    local lib = type(parent_name) == 'string' and parent_name:match('^(%a+)%.')
    if not parent and CLASS_LIBRARIES[lib] then          -- 'nn.Module' before require 'nn'
      require(lib)
      parent = classes[parent_name]
    end
    if not parent then error('torch.class: parent class ' .. tostring(parent_name) .. ' does not exist', 2) end
  end
  local class = {__typename = name}
  class.__index = class
  classes[name] = class
  setmetatable(class, {
    __index = parent,
    __newindex = method_defined,
    __call = function(cls, ...)
      local obj = setmetatable({}, cls)
      if cls.__init then cls.__init(obj, ...) end
      return obj
    end,
    __tostring = function() return name end,
  })
  -- metamethods are not inherited through __index: copy them when defined
  if parent then
    for k, v in pairs(parent) do
      if type(k) == 'string' and k:sub(1, 2) == '__' and k ~= '__index' and k ~= '__typename' then
        class[k] = v
      end
    end
  end
  if parent and parent.__subclass then parent.__subclass(class) end   -- e.g. autograd Functions
  local ns, short = name:match('^(.*)%.([^.]+)$')
  if target then target[short or name] = class
  elseif not ns then
    _G[name] = class                     -- torch.class('Foo') defines the global Foo, as Torch7
  elseif ns then
    local t = _G
    for part in ns:gmatch('[^.]+') do
      t[part] = t[part] or {}
      t = t[part]
    end
    t[short] = class
  end
  return class, parent
end

-- torch.getmetatable(name): the class table of a torch.class, or the typed
-- constructor of a tensor type name ('torch.DoubleTensor'), whose fields are
-- the tensor methods, as Torch7's metatables were.
function torch.getmetatable(name)
  if classes[name] then return classes[name] end
  local stem = type(name) == 'string' and name:match('^torch%.(%a+)Tensor$')
  if stem and rawget(torch, stem .. 'Tensor') then return torch[stem .. 'Tensor'] end
  return nil
end

function torch.typename(obj)
  if core.is_tensor(obj) then return obj:type() end
  if core.isStorage(obj) then return core._storage_type(obj) end
  local mt = getmetatable(obj)
  if type(mt) == 'table' and mt.__typename then return mt.__typename end
  if type(mt) == 'table' and mt == debug.getregistry()['torch.Size'] then return 'torch.Size' end
  return nil
end

function torch.type(obj)
  return torch.typename(obj) or type(obj)
end

-- torch.isTypeOf(obj, spec): obj's type or one of its parent classes is spec,
-- a class (or typed constructor) or a name: a Lua pattern that matches the
-- type name ('torch.*Tensor'), where a plain name must match all of it
-- ('torch.Long' does not match torch.LongTensor), as in Torch7.
function torch.isTypeOf(obj, spec)
  if type(spec) == 'table' then spec = rawget(spec, '__typename') end
  if type(spec) ~= 'string' then error('torch.isTypeOf: expects a type name or a class', 2) end
  local function matches(tname)
    if tname == spec then return true end
    local ok, m = pcall(string.match, tname, spec)
    return ok and m ~= nil and m ~= spec
  end
  if core.is_tensor(obj) or core.isStorage(obj) then return matches(torch.typename(obj)) end
  local mt = getmetatable(obj)
  while type(mt) == 'table' do
    if mt.__typename and matches(mt.__typename) then return true end
    local up = getmetatable(mt)
    mt = up and up.__index
  end
  return false
end

require 'torch.size'   -- torch.Size (x:size(), x.shape): prints and compares as PyTorch's
require 'torch.print'
require 'torch.storage'

-- torch.autograd: the engine's entry points (src/autograd through src/vm/lt_autograd.c)
torch.autograd = torch.autograd or {}
torch.autograd.grad = core._autograd_grad
torch.autograd.backward = core._autograd_backward
require 'torch.grad_mode'   -- no_grad, enable_grad, set_grad_enabled, inference_mode, detect_anomaly
core._ag_library()   -- anomaly mode names the first caller outside this directory (lib/torch)

-- Custom functions, as PyTorch's torch.autograd.Function:
--   local Exp = torch.autograd.Function:extend('Exp')   (or Function('Exp'),
--   or torch.class('Exp', 'torch.autograd.Function'))
--   function Exp.forward(ctx, x) local y = x:exp(); ctx:save_for_backward(y); return y end
--   function Exp.backward(ctx, g) local y = table.unpack(ctx.saved_tensors); return g * y end
--   local y = Exp.apply(x)
-- forward runs without recording and may return several values; backward
-- gets one gradient per forward output (nil for outputs that are not
-- floating tensors) and returns one per forward argument, as PyTorch: nil
-- where none, and nil for every argument that is not a tensor (return
-- g, nil for forward(ctx, x, scale)); fewer, or more that are not nil, raise.
-- The engine sees one node: several tracked inputs beyond three, or several
-- outputs, travel packed into one flat tensor (cat of the flattened values).
local Ctx = {}
-- ctx.saved_tensors: what save_for_backward kept, until a backward without
-- retain_graph frees the node (the engine sets ctx._freed). Each tensor must still be
-- at the version it had when apply returned (ctx._versions): one an in-place op changed
-- since raises the error a built-in node's saved tensor does, at the backward call.
-- The node's own result is kept without history (ctx._outputs, see apply); the node's
-- create_graph backward gets it back with the node as its history.
Ctx.__index = function(ctx, key)
  if key == 'saved_tensors' then
    if rawget(ctx, '_freed') then error(core._ag_freed_message(), 2) end
    local saved, versions = rawget(ctx, '_saved'), rawget(ctx, '_versions')
    for i = 1, versions and saved.n or 0 do
      local err = versions[i] and core._ag_saved_error(saved[i], versions[i], ctx._needed_by)
      if err then error(err, 0) end
    end
    local outputs = rawget(ctx, '_outputs')
    if not outputs then return saved end
    local unpacked = table.pack(table.unpack(saved, 1, saved.n))
    for i in pairs(outputs) do unpacked[i] = core._ag_saved_output(ctx, saved[i]) end
    return unpacked
  end
  return Ctx[key]
end
function Ctx:save_for_backward(...)
  local saved = table.pack(...)
  for i = 1, saved.n do
    if saved[i] ~= nil and not core.is_tensor(saved[i]) then
      error(string.format('save_for_backward can only save tensors, but argument %d is a %s', i, type(saved[i])), 2)
    end
  end
  self._saved = saved
end
-- The saved tensors' versions once apply is done, as PyTorch takes them (an input
-- forward changed in place, mark_dirty, counts as it is then), for ctx.saved_tensors.
local function record_versions(ctx, needed_by)
  local saved = rawget(ctx, '_saved')
  if not saved then return end
  local versions = {}
  for i = 1, saved.n do
    if saved[i] ~= nil then versions[i] = saved[i]._version end
  end
  ctx._versions, ctx._needed_by = versions, needed_by
end
-- ctx:mark_dirty(x, ...): forward modified these inputs in place (and returns them)
function Ctx:mark_dirty(...)
  self._dirty = self._dirty or {}
  for _, t in ipairs({...}) do self._dirty[t] = true end
end
-- ctx:mark_non_differentiable(y, ...): outputs that get no history
function Ctx:mark_non_differentiable(...)
  self._non_diff = self._non_diff or {}
  for _, t in ipairs({...}) do self._non_diff[t] = true end
end

local float_dtypes = {float32 = true, float64 = true, float16 = true, bfloat16 = true}
-- torch.is_floating_point(x) / x:is_floating_point()
function core.is_floating_point(t)
  if not core.is_tensor(t) then error('is_floating_point: expected a tensor, got ' .. type(t), 2) end
  return float_dtypes[t.dtype] == true
end
methods.is_floating_point = core.is_floating_point

local function flat_cat(list, dtype)
  local parts = {}
  for i, t in ipairs(list) do
    parts[i] = t.dtype == dtype and t:reshape(-1) or t:to(dtype):reshape(-1)
  end
  return #parts == 1 and parts[1] or core.cat(parts, 1)
end

-- what apply's backward needs to know of tensors, without holding them
local function geometries(list)
  local geometry = {}
  for i, t in ipairs(list) do geometry[i] = {size = t:size(), numel = t:numel(), dtype = t.dtype, device = t.device} end
  return geometry
end

-- flat cut back into tensors of the given geometries
local function unpack_flat(flat, geometry)
  local out, off = {}, 1
  for i, g in ipairs(geometry) do
    out[i] = flat:narrow(1, off, g.numel):view(g.size)
    if out[i].dtype ~= g.dtype then out[i] = out[i]:to(g.dtype) end
    off = off + g.numel
  end
  return out
end

-- The saved tensors that took the node's history (its result, an input marked dirty)
-- would keep the node alive from its own ctx: a cycle through the registry, where the
-- node keeps ctx, that the collector cannot break. ctx keeps them without history; a
-- single result is the node's output, which its create_graph backward gets back with
-- the node as history (ctx._outputs), as PyTorch unpacks a saved output.
local function save_without_history(ctx, results, diff_at, single)
  local saved = rawget(ctx, '_saved')
  for i = 1, saved and saved.n or 0 do
    for _, pos in ipairs(diff_at) do
      if rawequal(saved[i], results[pos]) then
        saved[i] = saved[i]:detach()
        if single then
          ctx._outputs = ctx._outputs or {}
          ctx._outputs[i] = true
        end
        break
      end
    end
  end
end

local function apply(cls, ...)
  local args = table.pack(...)
  local ctx = setmetatable({needs_input_grad = {}}, Ctx)
  local grad_on = core.is_grad_enabled()
  local tracked, positions, tensor_at = {}, {}, {}
  for i = 1, args.n do
    local a = args[i]
    tensor_at[i] = core.is_tensor(a)
    local t = grad_on and tensor_at[i] and a.requires_grad or false
    ctx.needs_input_grad[i] = t
    if t then tracked[#tracked + 1] = a; positions[#positions + 1] = i end
  end
  if type(cls.forward) ~= 'function' then error(cls.__name .. ': define forward(ctx, ...)', 3) end
  local outs = table.pack(core.no_grad(cls.forward, ctx, ...))
  if #tracked == 0 then return table.unpack(outs, 1, outs.n) end
  if type(cls.backward) ~= 'function' then error(cls.__name .. ': define backward(ctx, ...)', 3) end
  local dirty, non_diff = ctx._dirty or {}, ctx._non_diff or {}
  for t in pairs(dirty) do
    if t.requires_grad and t.is_leaf then
      error(cls.__name .. ': a leaf tensor that requires grad was modified in place (mark_dirty)', 3)
    end
  end
  -- the outputs that get history: floating tensors not marked non-differentiable
  local diff, diff_at = {}, {}
  for i = 1, outs.n do
    local o = outs[i]
    if core.is_tensor(o) and core.is_floating_point(o) and not non_diff[o] then
      local fresh = o
      -- an input handed back gets a tensor of its own (dirty ones are rebased below)
      for _, a in ipairs(tracked) do
        if rawequal(a, o) then fresh = core.no_grad(function() return o:clone() end) break end
      end
      if dirty[o] and fresh == o then fresh = core.no_grad(function() return o:clone() end) end
      diff[#diff + 1] = fresh
      diff_at[#diff] = i
    end
  end
  if #diff == 0 then return table.unpack(outs, 1, outs.n) end
  -- inputs: up to three edges as they are, more packed into one flat tensor
  local packed_in = #tracked > 3
  local edge_inputs = tracked
  if packed_in then
    local dt = tracked[1].dtype
    for _, t in ipairs(tracked) do
      if not core.is_floating_point(t) then error(cls.__name .. ': tracked inputs must be floating', 3) end
      if t.dtype == 'float64' then dt = 'float64' end
    end
    edge_inputs = {flat_cat(tracked, dt)}           -- recorded: gradients flow back to each input
  end
  -- outputs: one node output; several outputs share one flat tensor
  local node_out
  if #diff == 1 then node_out = diff[1]
  else
    local dt = diff[1].dtype
    for _, d in ipairs(diff) do
      if d.dtype ~= dt then error(cls.__name .. ': differentiable outputs must share one dtype', 3) end
    end
    node_out = core.no_grad(function() return flat_cat(diff, dt) end)
  end
  -- The node keeps backward in the registry, where the collector cannot look: holding
  -- the node's result there would keep result and node alive for good. So backward
  -- holds none of this call's tensors, only their geometry.
  local nargs, nouts = args.n, outs.n
  local diff_geometry = #diff > 1 and geometries(diff)
  local tracked_geometry = packed_in and geometries(tracked)
  local edge_dtype = edge_inputs[1].dtype
  local function backward(c, grad)
    local grads
    if not diff_geometry then grads = {grad} else grads = unpack_flat(grad, diff_geometry) end
    local per_output = {}
    for k, i in ipairs(diff_at) do per_output[i] = grads[k] end
    local res = table.pack(cls.backward(c, table.unpack(per_output, 1, nouts)))
    local got = res.n
    while got > nargs and res[got] == nil do got = got - 1 end    -- trailing nils are fine
    if got ~= nargs then
      error(string.format('function %sBackward returned an incorrect number of gradients (expected %d, got %d)',
                          cls.__name, nargs, res.n), 0)
    end
    for i = 1, nargs do
      if res[i] ~= nil and not tensor_at[i] then
        error(string.format('function %sBackward returned a gradient different than nil at position %d, '
                            .. 'but the corresponding forward input was not a tensor', cls.__name, i), 0)
      end
    end
    local picked = {}
    for k, pos in ipairs(positions) do
      local g = res[pos]
      if g ~= nil and not core.is_tensor(g) then
        error(string.format('%s: backward returned a %s for argument %d, expected a tensor or nil',
                            cls.__name, type(g), pos))
      end
      picked[k] = g
    end
    if not packed_in then return table.unpack(picked, 1, #positions) end
    for k, g in ipairs(tracked_geometry) do
      if picked[k] == nil then picked[k] = core.zeros(g.size, {dtype = g.dtype, device = g.device}) end
      if picked[k].dtype ~= edge_dtype then picked[k] = picked[k]:to(edge_dtype) end
    end
    return flat_cat(picked, edge_dtype)
  end
  core._ag_custom_node(node_out, edge_inputs, backward, ctx, cls.__name)
  local results = {}
  for i = 1, outs.n do results[i] = outs[i] end
  local views = #diff == 1 and {node_out} or unpack_flat(node_out, diff_geometry)
  for k, i in ipairs(diff_at) do
    local o = outs[i]
    if dirty[o] then core._inplace_commit(o, views[k]); results[i] = o
    else results[i] = views[k] end
  end
  save_without_history(ctx, results, diff_at, #diff == 1)
  ctx._dirty, ctx._non_diff = nil, nil            -- forward's marks: they hold its tensors
  record_versions(ctx, node_out.grad_fn:name())
  return table.unpack(results, 1, outs.n)
end

local Function = {__name = 'Function'}
Function.__index = Function
Function.__static_methods = true       -- apply, forward(ctx, ...), backward(ctx, ...): called with '.'
torch.autograd.Function = Function

-- Function:extend(name): a new custom function class (PyTorch's subclass)
function Function:extend(name)
  local cls = setmetatable({__name = name or 'Function'}, {__index = self, __call = function(c, ...) return c.apply(...) end})
  cls.__index = cls
  cls.apply = function(...) return apply(cls, ...) end
  return cls
end
-- torch.class('MyReLU', 'torch.autograd.Function') gives the class its apply
function Function.__subclass(cls)
  cls.__name = cls.__typename
  cls.apply = function(...) return apply(cls, ...) end
end
classes['torch.autograd.Function'] = Function
setmetatable(Function, {__call = function(self, name) return self:extend(name) end})

-- torch.utils.checkpoint(fn, ...): fn(...) runs as usual, but the nodes it
-- records keep none of the tensors their backward needs (no intermediate
-- values stay alive); the first backward that needs them runs fn again, with
-- the random state of the first run (so dropout matches), and takes what
-- that run saves. Gradients reach fn's tensor arguments and everything else
-- fn uses that requires grad (its parameters), through backward and
-- torch.autograd.grad alike: PyTorch's non-reentrant checkpoint
-- (use_reentrant=False), the only one moontorch has.
-- Options, PyTorch's keywords: a trailing plain table (no metatable, no list
-- part) whose keys are all among use_reentrant and preserve_rng_state, e.g.
-- checkpoint(block, x, {use_reentrant = false}); it is not passed to fn.
-- use_reentrant is accepted and ignored; preserve_rng_state = false skips
-- restoring the random state.
torch.utils = torch.utils or {}
local checkpoint_keys = {use_reentrant = true, preserve_rng_state = true}

local function checkpoint_options(args)
  local last = args[args.n]
  if type(last) ~= 'table' or getmetatable(last) ~= nil or #last > 0 or next(last) == nil then return nil end
  for k in pairs(last) do
    if not checkpoint_keys[k] then return nil end
  end
  return last
end

function torch.utils.checkpoint(fn, ...)
  if type(fn) ~= 'function' and not (getmetatable(fn) and getmetatable(fn).__call) then
    error('checkpoint: the first argument must be a function', 2)
  end
  local args = table.pack(...)
  local opts = args.n > 0 and checkpoint_options(args) or {}
  if opts == args[args.n] then args.n = args.n - 1 end
  local rng = opts.preserve_rng_state ~= false and core.get_rng_state()
  local call = fn                                 -- a callable table (a module) too
  if type(fn) ~= 'function' then call = function(...) return fn(...) end end
  local function recompute()
    local now = rng and core.get_rng_state()
    if rng then core.set_rng_state(rng) end
    local ok, err = pcall(core.enable_grad, call, table.unpack(args, 1, args.n))
    if rng then core.set_rng_state(now) end
    if not ok then error(err, 0) end
  end
  return core._ag_checkpoint(recompute, fn, table.unpack(args, 1, args.n))
end
torch.checkpoint = torch.utils.checkpoint

-- x:totable() (Torch7) / x:tolist() (PyTorch): nested Lua tables of the
-- values; a 0-dim tensor gives its value.
function methods.totable(x)
  local flat, size = x:_flat_values(), x:size()
  if #size == 0 then return flat[1] end
  local pos = 0
  local function build(d)
    local t = {}
    for i = 1, size[d] do
      if d == #size then pos = pos + 1; t[i] = flat[pos] else t[i] = build(d + 1) end
    end
    return t
  end
  return build(1)
end
methods.tolist = methods.totable

-- x:diag(k) / torch.diag(x, k), as in Torch7 and PyTorch: a vector becomes
-- the square matrix holding it on diagonal k (0 the main one, k > 0 above,
-- k < 0 below), a matrix gives a copy of its diagonal k. Made of recorded
-- ops (index_copy, view; diagonal, clone), so gradients flow through it.
function core.diag(x, k)
  if not core.is_tensor(x) then error('diag: expected a tensor, got ' .. type(x), 2) end
  k = k or 0
  if math.type(k) ~= 'integer' then error('diag: the diagonal must be an integer, got ' .. tostring(k), 2) end
  if x:dim() == 2 then return x:diagonal(k):clone() end
  if x:dim() ~= 1 then error('diag: expects a 1-D or 2-D tensor, got ' .. tostring(x:size()), 2) end
  local n = x:size(1)
  local m = n + math.abs(k)
  local first = k >= 0 and k + 1 or -k * m + 1      -- flat 1-based position of the diagonal's start
  local positions = core.arange(first, first + n * (m + 1), m + 1)
  return core.zeros(m * m, {dtype = x.dtype}):index_copy(1, positions, x):view(m, m)
end
methods.diag = core.diag

-- x:trace() / torch.trace(x): the sum of a matrix's main diagonal, a 0-dim
-- tensor as in PyTorch (integers sum to int64).
function core.trace(x)
  if not core.is_tensor(x) then error('trace: expected a tensor, got ' .. type(x), 2) end
  if x:dim() ~= 2 then error('trace: expects a 2-D tensor, got ' .. tostring(x:size()), 2) end
  if x.dtype == 'bool' then error('trace: not supported for bool tensors', 2) end
  return x:diagonal():sum()
end
methods.trace = core.trace

-- torch._check_options(who, opts, types, level): opts (nil or a table) holds only names
-- that types lists, each value of its type ('number', 'boolean', ...); otherwise raises
-- "who: unknown option k (it takes a, b, c)" or "who: k must be a number, got string" at
-- level (error's, counted from the caller). Returns opts, or {} for nil.
function torch._check_options(who, opts, types, level)
  level = (level or 1) + 1
  if opts == nil then return {} end
  if type(opts) ~= 'table' then error(('%s: options must be a table, got %s'):format(who, type(opts)), level) end
  for k, v in pairs(opts) do
    if not types[k] then
      local known = {}
      for name in pairs(types) do known[#known + 1] = name end
      table.sort(known)
      error(('%s: unknown option %s (it takes %s)'):format(who, tostring(k), table.concat(known, ', ')), level)
    end
    if type(v) ~= types[k] then error(('%s: %s must be a %s, got %s'):format(who, k, types[k], type(v)), level) end
  end
  return opts
end

require 'torch.gradcheck'
require 'torch.autograd_viz'
require 'torch.help'
require 'torch.serialize'
require 'torch.ordered_dict'
require 'torch.safetensors'
require 'torch.device'
require 'torch.amp'
require 'torch.ops7'
require 'torch.benchmark'   -- torch.utils.benchmark.Timer

-- ---- modules loaded on first use ----
-- Most scripts never touch Torch7's files, LAPACK, the tester or the
-- command-line parser, and loading them took a fifth of `th`'s start-up. Each
-- is loaded the first time one of the torch fields, tensor methods or class
-- names it defines is read (spec/startup_spec.lua checks that these lists
-- name everything the modules define); torch._load_all() loads every one
-- (the REPL's completion and anything that walks the torch table call it).
local lazy_modules = {
  ['torch.t7format'] = {fields = {'File', 'DiskFile', 'MemoryFile', 'PipeFile'},   -- and torch.File, whose
                        classes = {'torch.File', 'torch.DiskFile', 'torch.MemoryFile', 'torch.PipeFile'},
                        wraps = {'save', 'load', 'serialize', 'deserialize'}},         -- writeObject it adds
  ['torch.linalg'] = {fields = {'linalg', 'cholesky_inverse', 'cholesky_solve', 'det', 'eig', 'gels', 'geqrf',
                                'gesv', 'inverse', 'logdet', 'orgqr', 'ormqr', 'potrf', 'potri', 'potrs', 'pstrf',
                                'qr', 'slogdet', 'svd', 'symeig', 'trtrs'},
                      methods = {'det', 'slogdet', 'logdet', 'inverse', 'potrf', 'potri', 'pstrf', 'qr', 'svd',
                                 'symeig', 'eig', 'geqrf', 'cholesky_solve', 'cholesky_inverse'}},
  ['torch.timer'] = {fields = {'tic', 'toc'}},
  ['torch.profiler'] = {fields = {'profiler'}},
  ['torch.testing'] = {fields = {'testing'}},
  ['torch.tester'] = {fields = {'Tester', 'TestSuite'}, classes = {'torch.Tester'}},
  ['torch.cmdline'] = {fields = {'CmdLine'}, classes = {'torch.CmdLine'}},
  ['torch.memory'] = {fields = {'memory', 'memory_snapshot', 'memory_summary'}},
}
torch._lazy_modules = lazy_modules
local lazy_field, lazy_method, lazy_class = {}, {}, {}
for module, defines in pairs(lazy_modules) do
  for _, k in ipairs(defines.fields or {}) do lazy_field[k] = module end
  for _, k in ipairs(defines.methods or {}) do lazy_method[k] = module end
  for _, k in ipairs(defines.classes or {}) do lazy_class[k] = module end
end
-- the functions t7format wraps: moontorch's own stay in torch._own_format
-- (t7format calls them for moontorch's files); until then each is a stub that
-- loads the module (which puts its wrappers in their place) and makes the
-- call (a tail call, so an error's level still names the caller's line)
torch._own_format = {}
for _, name in ipairs(lazy_modules['torch.t7format'].wraps) do
  torch._own_format[name] = torch[name]
  torch[name] = function(...)
    require 'torch.t7format'
    return torch[name](...)
  end
end
torch._format_stubs = {}      -- the stubs, documented by t7format's functions once it loads
for name in pairs(torch._own_format) do torch._format_stubs[name] = torch[name] end

-- torch.nn, torch.optim, torch.data and torch.distributed: the libraries, loaded on first use (as PyTorch's
-- torch.nn and torch.optim come with torch); the globals nn, optim, data need a require
local libraries, loading = {nn = 'nn', optim = 'optim', data = 'data', distributed = 'distributed'}, {}
setmetatable(torch, {__index = function(_, k)
  if libraries[k] and not loading[k] then        -- (nil to the library itself while it loads)
    loading[k] = true
    local ok, lib = pcall(require, libraries[k])
    loading[k] = nil
    if not ok then error(lib, 0) end
    if rawget(torch, k) == nil then rawset(torch, k, lib) end
    return lib
  end
  local module = lazy_field[k]
  if module == nil then return nil end
  require(module)
  return rawget(torch, k)
end})
core._set_field_hook(function(_, k)
  local module = lazy_method[k]
  if module == nil then return nil end
  require(module)
  return rawget(methods, k)
end)
local class_of = torch.getmetatable
function torch.getmetatable(name)
  if lazy_class[name] then require(lazy_class[name]) end
  return class_of(name)
end

function torch._load_all()
  for module in pairs(lazy_modules) do require(module) end
end

require 'torch.torch7'   -- last: it wraps what the others define

return torch
