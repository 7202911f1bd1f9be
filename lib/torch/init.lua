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
local function constructor(dtype_of)
  return setmetatable({}, {
    __index = methods,
    __call = function(_, ...) return core._new(dtype_of(), ...) end,
  })
end
torch.Tensor = constructor(function() return core.get_default_dtype() end)
for dtype, stem in pairs(stems) do
  torch[stem .. 'Tensor'] = constructor(function() return dtype end)
end

function torch.setdefaulttensortype(name)
  core.set_default_dtype(name)
end
function torch.getdefaulttensortype()
  return 'torch.' .. stems[core.get_default_dtype()] .. 'Tensor'
end

-- ---- classes (Torch7's torch.class) ----
local classes = {}

-- torch.class('nn.Linear', 'nn.Module') -> class table, parent class table.
-- Instances are tables whose metatable is the class; Class(...) builds one
-- and calls __init.
function torch.class(name, parent_name, target)
  assert(type(name) == 'string', 'torch.class: name must be a string')
  if classes[name] then error('torch.class: class ' .. name .. ' already exists', 2) end
  local parent
  if parent_name then
    parent = classes[parent_name]
    if not parent then error('torch.class: parent class ' .. parent_name .. ' does not exist', 2) end
  end
  local class = {__typename = name}
  class.__index = class
  classes[name] = class
  setmetatable(class, {
    __index = parent,
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
  local ns, short = name:match('^(.*)%.([^.]+)$')
  if target then target[short or name] = class
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

function torch.getmetatable(name) return classes[name] end

function torch.typename(obj)
  if core.is_tensor(obj) then return obj:type() end
  local mt = getmetatable(obj)
  if type(mt) == 'table' and mt.__typename then return mt.__typename end
  if type(mt) == 'table' and mt == debug.getregistry()['torch.Size'] then return 'torch.Size' end
  return nil
end

function torch.type(obj)
  return torch.typename(obj) or type(obj)
end

function torch.isTypeOf(obj, name)
  if type(name) == 'table' then name = name.__typename end
  local mt = getmetatable(obj)
  while type(mt) == 'table' do
    if mt.__typename == name then return true end
    mt = getmetatable(mt) and getmetatable(mt).__index
  end
  return core.is_tensor(obj) and obj:type() == name
end

-- ---- torch.Size: x:size(), x.shape ----
local size_mt = debug.getregistry()['torch.Size']
size_mt.__tostring = function(s)
  local parts = {}
  for i = 1, #s do parts[i] = tostring(s[i]) end
  return #parts == 0 and '[]' or table.concat(parts, 'x')
end
size_mt.__eq = function(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
size_mt.__index = {
  size = function(s) return #s end,
  numel = function(s) local n = 1 for i = 1, #s do n = n * s[i] end return n end,
  totable = function(s) return {table.unpack(s)} end,
}

require 'torch.print'

-- torch.autograd: the engine's entry points (src/autograd through src/vm/lt_autograd.c)
torch.autograd = torch.autograd or {}
torch.autograd.grad = core._autograd_grad
torch.autograd.backward = core._autograd_backward
torch.autograd.no_grad = core.no_grad
torch.autograd.enable_grad = core.enable_grad
torch.autograd.set_grad_enabled = core.set_grad_enabled
torch.autograd.set_detect_anomaly = core._set_detect_anomaly
torch.autograd.is_anomaly_enabled = core._is_anomaly_enabled
torch.autograd.detect_anomaly = core._detect_anomaly

-- Custom functions, as PyTorch's torch.autograd.Function:
--   local Exp = torch.autograd.Function('Exp')
--   function Exp.forward(ctx, x) local y = x:exp(); ctx:save_for_backward(y); return y end
--   function Exp.backward(ctx, g) local y = table.unpack(ctx.saved_tensors); return g * y end
--   local y = Exp.apply(x)
-- forward runs without recording; backward returns one gradient per forward
-- argument (nil for arguments that need none). One tensor output.
local Ctx = {}
Ctx.__index = Ctx
function Ctx:save_for_backward(...)
  self.saved_tensors = table.pack(...)
end

function torch.autograd.Function(name)
  local cls = {__name = name or 'Function'}
  function cls.apply(...)
    local args = table.pack(...)
    local ctx = setmetatable({needs_input_grad = {}}, Ctx)
    local tensor_inputs, positions = {}, {}
    local any = false
    for i = 1, args.n do
      local a = args[i]
      local tracked = core.is_tensor(a) and a.requires_grad
      ctx.needs_input_grad[i] = tracked or false
      if core.is_tensor(a) then
        tensor_inputs[#tensor_inputs + 1] = a
        positions[#positions + 1] = i
        any = any or tracked
      end
    end
    assert(type(cls.forward) == 'function', cls.__name .. ': define forward(ctx, ...)')
    local out = core.no_grad(cls.forward, ctx, ...)
    if not (any and core.is_grad_enabled() and core.is_tensor(out)) then return out end
    assert(type(cls.backward) == 'function', cls.__name .. ': define backward(ctx, grad)')
    for _, a in ipairs(tensor_inputs) do
      if rawequal(a, out) then out = core.no_grad(function() return out:clone() end) break end
    end
    -- the engine gets one gradient per tensor input
    local function backward(c, grad)
      local grads = table.pack(cls.backward(c, grad))
      local picked = {}
      for k, pos in ipairs(positions) do picked[k] = grads[pos] end
      return table.unpack(picked, 1, #positions)
    end
    core._ag_custom_node(out, tensor_inputs, backward, ctx, cls.__name)
    return out
  end
  return cls
end

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

-- x[key] = v when x or v requires grad (grad mode): called by the tensor's
-- __newindex. For autograd it is x = x:index_copy(...) over the flat
-- positions that key selects, so the gradient of x's old value is zero there
-- and v gets the gradient of the positions it filled (summed where broadcast).
function torch._index_put_autograd(x, key, v)
  local ids = torch.arange(1, x:numel() + 1, {dtype = 'int64'}):view(x:size())
  local region = ids[key]
  if type(region) == 'number' then region = torch.tensor({region}, {dtype = 'int64'}) end
  local shape = region:size()
  local value
  if core.is_tensor(v) then
    local ok, e = pcall(v.expand, v:to(x.dtype), shape)
    if not ok then
      error(string.format('index assignment: value of shape %s cannot broadcast to the indexed shape %s',
                          tostring(v:size()), tostring(shape)), 3)
    end
    value = e:reshape(-1)
  else
    value = torch.full({region:numel()}, v, {dtype = x.dtype})
  end
  local src = core._inplace_source(x)
  local r = src:reshape(-1):index_copy(1, region:reshape(-1), value):view(x:size())
  core._inplace_commit(x, r)
end

require 'torch.gradcheck'

return torch
