-- nn.Module: the base of every layer and container, both ways at once.
--
-- PyTorch style: assigning an nn.Parameter or a module to a field registers
-- it (a plain Lua table of modules does not: use nn.ModuleList); `model(x)`
-- runs hooks and the computation and keeps no reference to the result;
-- parameters(), state_dict(), train()/eval().
-- Torch7 style on the same autograd graph: model:forward(x) (the result kept
-- in model.output, and in each module it calls), model:backward(x, gradOutput),
-- zeroGradParameters(), updateParameters(lr), getParameters().
--
-- Values live in a table behind the instance (_fields), never in the instance
-- itself: Lua calls __newindex only for absent keys, and every assignment must
-- be checked, as PyTorch's __setattr__ checks it. _kinds says which names are
-- registered parameters, buffers or children; _param_names, _buffer_names and
-- _module_names keep their order. A registered name stays registered (nil
-- when assigned nil), as PyTorch keeps None entries.
local torch = require 'torch'
local nn = require 'nn'

-- ---- parameters ----
local parameter_set = setmetatable({}, {__mode = 'k'})
-- parameter -> its view into getParameters' flat gradient (zero_grad keeps it)
local flat_grads = setmetatable({}, {__mode = 'k'})
-- module -> the input its last Torch7 call was given (given) and the leaf made of it
-- (input): kept beside the module, not in it, so that saving or copying a module
-- takes neither
local t7_inputs = setmetatable({}, {__mode = 'k'})
local function t7_input(m, k) local e = t7_inputs[m] return e and e[k] end
-- modules whose gradInput the user set to nil: Torch7's way to say that nobody reads it
-- (a network's first layer), so that its computation is skipped
local no_grad_input = setmetatable({}, {__mode = 'k'})
local function set_t7_input(m, input, given)
  if input == nil and given == nil then t7_inputs[m] = nil return end
  local e = t7_inputs[m]
  if e == nil then t7_inputs[m] = {input = input, given = given} else e.input, e.given = input, given end
end

-- nn.Parameter(t): t itself, now requiring grad and marked as a parameter, so
-- that assigning it to a module field registers it.
function nn.Parameter(t, requires_grad)
  if not torch.is_tensor(t) then error('nn.Parameter: expected a tensor, got ' .. type(t), 2) end
  if requires_grad ~= false then
    if t.grad_fn then t = t:detach() end
    t:requires_grad_(true)
    torch._ag_set_implicit(t, true)     -- nn's, not the user's (the Torch7 dialect's numbers)
  end
  parameter_set[t] = true
  return t
end

-- nn.is_parameter(t): was t made with nn.Parameter?
function nn.is_parameter(t) return parameter_set[t] == true end
local function is_parameter(v) return torch.is_tensor(v) and parameter_set[v] == true end

local Module = torch.class('nn.Module')
Module.__nn_module = true

-- nn.is_module(v): true when v is an nn.Module (an instance of any module class).
local function is_module(v) return type(v) == 'table' and v.__nn_module == true end
nn.is_module = is_module

local list_of_kind = {parameter = '_param_names', buffer = '_buffer_names', module = '_module_names'}

-- The generation of every module's structure: bumped by each change that can add, drop
-- or replace a parameter, a plain weight/bias (or their gradients) or a child, in any
-- module. The per-step walks (zeroGradParameters, updateParameters) keep what they
-- found while it stays the same. Code that writes a module's _fields directly calls
-- nn.Module._restructured().
local generation = 0
local function restructured() generation = generation + 1 end
Module._restructured = restructured
-- the names step_tensors reads besides the registered ones
local plain_names = {weight = true, bias = true, gradWeight = true, gradBias = true}

-- name becomes registered as kind (leaving the kind it had), in registration order
local function set_kind(self, name, kind)
  local kinds = rawget(self, '_kinds')
  local old = kinds[name]
  if old == kind then return end
  restructured()
  if old ~= nil then
    local names = rawget(self, list_of_kind[old])
    for i, n in ipairs(names) do if n == name then table.remove(names, i) break end end
    rawget(self, '_non_persistent')[name] = nil
  end
  kinds[name] = kind
  if kind ~= nil then
    local names = rawget(self, list_of_kind[kind])
    names[#names + 1] = name
  end
end

-- nn.Module(): subclasses call parent.__init(self) first.
function Module:__init()
  rawset(self, '_fields', {training = true})
  rawset(self, '_kinds', {})
  rawset(self, '_param_names', {})
  rawset(self, '_buffer_names', {})
  rawset(self, '_module_names', {})
  rawset(self, '_non_persistent', {})
  rawset(self, '_forward_hooks', {})
  rawset(self, '_forward_pre_hooks', {})
  rawset(self, '_backward_hooks', {})
  restructured()
end

-- Module:extend(name): a new module class, a subclass of this one, as subclassing
-- nn.Module in PyTorch (the same as torch.class(name, 'nn.Module'), without setting a
-- global; the name is the class's, as files and messages show it):
--   local Net = nn.Module:extend('Net')
--   function Net:__init() nn.Module.__init(self); self.fc = nn.Linear(4, 2) end
--   function Net:forward(x) return self.fc(x) end
function Module:extend(name)
  local parent = rawget(self, '__typename')
  if parent == nil then error("nn.Module.extend: call it on a class: nn.Module:extend('Name')", 2) end
  if type(name) ~= 'string' or name == '' then
    error(string.format('%s:extend(name): expects a class name, got %s', parent, type(name)), 2)
  end
  local ok, cls = pcall(torch.class, name, parent, {})
  if not ok then error(torch._error_text(cls), 2) end
  return cls
end

-- Torch7's m.gradWeight / m.gradBias ('grad' .. Name for a parameter 'name'): the
-- parameter's .grad, made zeros when it has none, since Torch7's always exist.
local function grad_alias(self, fields, k)
  if type(k) ~= 'string' or not k:find('^grad%u') then return nil end
  local name = k:sub(5, 5):lower() .. k:sub(6)
  local p = fields[name]
  if p == nil or rawget(self, '_kinds')[name] ~= 'parameter' then return nil end
  if p.grad == nil then p.grad = torch.zeros_like(p) end
  return p.grad
end

-- reads: a field, else the class (methods), else a Torch7 gradient alias. (self._fields
-- is a raw hit once Module.__init ran; before, it comes back here and finds nothing.)
local torch7_user = torch._torch7_user

-- Torch7's m:training(): training mode (m.train true) for m and its descendants
local function torch7_training(self) self:train(true) end

local function read(self, k)
  if k == '_fields' then return nil end
  local fields = self._fields
  if fields == nil then return getmetatable(self)[k] end
  if (k == 'training' or k == 'train') and torch7_user(1) then   -- Torch7's names, for the user's code
    if k == 'train' then return fields.training end
    return torch7_training
  end
  local v = fields[k]
  if v ~= nil then return v end
  local cls = getmetatable(self)
  v = cls[k]
  if v ~= nil then return v end
  if (k == 'output' or (k == 'gradInput' and not no_grad_input[self]))
     and cls.updateGradInput ~= Module.updateGradInput then
    v = torch.Tensor()                          -- Torch7's buffers, for the classes that fill them
    fields[k] = v
    return v
  end
  return grad_alias(self, fields, k)
end
Module.__index = read

-- subclasses read the same way as their parent (containers also index their children)
function Module.__subclass(cls)
  cls.__index = rawget(getmetatable(cls).__index, '__index')
end

local function refuse(v, k, what, expected)
  error(string.format("cannot assign '%s' as %s '%s' (%s or nil expected)", torch.type(v), what, tostring(k),
                      expected), 3)
end

-- Torch7's assignments, where Torch7 took them (returns the assignment to make,
-- or nil when made). In the Torch7 dialect, from the user's code: m.train = b is
-- the training flag; a plain tensor into a parameter's slot (m.weight =
-- torch.Tensor(...)) becomes that parameter, the same tensor object (so what
-- shares its memory still does). In both dialects: m.gradWeight = t sets the
-- gradient of the parameter weight when t has its dtype and element count (a
-- field of that name would hide the gradient that m.gradWeight reads).
local function torch7_assignment(self, fields, kinds, k, v, kind)
  if k == 'train' then return 'training', v, kinds.training end
  if kind == 'parameter' then
    if v.grad_fn then v = v:detach() end                  -- Torch7's tensors have no history
    return k, nn.Parameter(v), kind
  end
  local name = k:sub(5, 5):lower() .. k:sub(6)
  local p = fields[name]
  if kinds[name] == 'parameter' and p ~= nil and kinds[k] == nil and v:numel() == p:numel()
     and v.dtype == p.dtype then
    p.grad = v:dim() == p:dim() and v:size() == p:size() and v or v:view(p:size())   -- Torch7's 2-D views too
    fields[k] = nil
    return nil
  end
  return k, v, kind
end

-- every assignment, as PyTorch's __setattr__: an nn.Parameter registers a parameter, a
-- module a child; a registered parameter or child takes only its kind or nil; a buffer
-- takes a tensor or nil; anything else is a plain field.
function Module.__newindex(self, k, v)
  local fields = rawget(self, '_fields')
  if fields == nil then
    if is_module(v) then error('cannot assign module before Module.__init() call', 2) end
    if is_parameter(v) then error('cannot assign parameters before Module.__init() call', 2) end
    rawset(self, k, v)
    return
  end
  local kinds = rawget(self, '_kinds')
  local kind = kinds[k]
  if kind ~= nil or plain_names[k] then restructured() end
  if k == 'gradInput' and kind == nil then no_grad_input[self] = v == nil or nil end
  if type(k) == 'string' and ((torch.is_tensor(v) and k:find('^grad%u') and kind == nil)
                              or ((k == 'train' or (kind == 'parameter' and torch.is_tensor(v) and not is_parameter(v)))
                                  and torch7_user(1))) then
    k, v, kind = torch7_assignment(self, fields, kinds, k, v, kind)
    if k == nil then return end
  end
  if type(k) == 'string' then
    if is_parameter(v) then set_kind(self, k, 'parameter')
    elseif kind == 'parameter' then
      if v ~= nil then refuse(v, k, 'parameter', 'nn.Parameter') end
    elseif is_module(v) then set_kind(self, k, 'module')
    elseif kind == 'module' then
      if v ~= nil then refuse(v, k, 'child module', 'nn.Module') end
    elseif kind == 'buffer' and v ~= nil and not torch.is_tensor(v) then
      refuse(v, k, 'buffer', 'torch.Tensor')
    end
  end
  fields[k] = v
end

local function fields_of(self, who)
  local fields = rawget(self, '_fields')
  if fields == nil then error(who .. ': call Module.__init(self) first', 3) end
  return fields
end

-- module:register_parameter(name, p): p (an nn.Parameter, or nil to reserve the name).
function Module:register_parameter(name, p)
  local fields = fields_of(self, 'register_parameter')
  if p ~= nil and not is_parameter(p) then
    error('register_parameter: ' .. name .. ' must be an nn.Parameter or nil', 2)
  end
  set_kind(self, name, 'parameter')
  fields[name] = p
  restructured()
end

-- module:register_buffer(name, t, {persistent=true}): a tensor saved in state_dict
-- (when persistent) and moved by to(), but not a parameter.
function Module:register_buffer(name, t, opts)
  local fields = fields_of(self, 'register_buffer')
  if t ~= nil and not torch.is_tensor(t) then error('register_buffer: ' .. name .. ' must be a tensor or nil', 2) end
  set_kind(self, name, 'buffer')
  rawget(self, '_non_persistent')[name] = opts and opts.persistent == false or nil
  fields[name] = t
  restructured()
end

-- module:add_module(name, m): registers a child module under name.
function Module:add_module(name, m)
  local fields = fields_of(self, 'add_module')
  if m ~= nil and not is_module(m) then error('add_module: ' .. tostring(name) .. ' is not a module', 2) end
  name = tostring(name)
  set_kind(self, name, 'module')
  fields[name] = m
  restructured()
  return self
end

-- module:_set_children(list): list's modules become the children '1', '2', ... in place
-- of the current ones (the numbered containers).
function Module:_set_children(list)
  local fields, kinds = rawget(self, '_fields'), rawget(self, '_kinds')
  for _, n in ipairs(rawget(self, '_module_names')) do fields[n], kinds[n] = nil, nil end
  local names = {}
  for i, m in ipairs(list) do
    names[i] = tostring(i)
    fields[names[i]], kinds[names[i]] = m, 'module'
  end
  rawset(self, '_module_names', names)
  restructured()
end

-- ---- walking ----

-- {{name, value}, ...} of the non-nil entries of a name list, shared values included
local function each_named(self, list)
  local out = {}
  local fields = rawget(self, '_fields')
  for _, n in ipairs(rawget(self, list) or {}) do
    local v = fields[n]
    if v ~= nil then out[#out + 1] = {n, v} end
  end
  return out
end

-- module:named_children(): {{name, module}, ...} of the direct children, a child
-- registered under several names once (the first), as PyTorch.
function Module:named_children()
  local out, seen = {}, {}
  for _, c in ipairs(each_named(self, '_module_names')) do
    if not seen[c[2]] then
      seen[c[2]] = true
      out[#out + 1] = c
    end
  end
  return out
end

-- module:children(): the direct child modules.
function Module:children()
  local out = {}
  for _, p in ipairs(self:named_children()) do out[#out + 1] = p[2] end
  return out
end

-- module:named_modules(): {{name, module}, ...} of this module ('') and every
-- descendant (dotted names), each once.
function Module:named_modules(prefix, seen)
  prefix, seen = prefix or '', seen or {}
  local out = {}
  if seen[self] then return out end
  seen[self] = true
  out[1] = {prefix, self}
  for _, c in ipairs(self:named_children()) do
    for _, p in ipairs(c[2]:named_modules(prefix == '' and c[1] or prefix .. '.' .. c[1], seen)) do
      out[#out + 1] = p
    end
  end
  return out
end

-- module:modules(): this module and every descendant.
function Module:modules()
  local out = {}
  for _, p in ipairs(self:named_modules()) do out[#out + 1] = p[2] end
  return out
end

local function named_tensors(self, list, recurse)
  local out, seen = {}, {}
  local mods = recurse == false and {{'', self}} or self:named_modules()
  for _, mp in ipairs(mods) do
    local prefix, m = mp[1], mp[2]
    for _, p in ipairs(each_named(m, list)) do
      if not seen[p[2]] then
        seen[p[2]] = true
        out[#out + 1] = {prefix == '' and p[1] or prefix .. '.' .. p[1], p[2]}
      end
    end
  end
  return out
end

-- module:named_parameters({recurse=true}): {{name, parameter}, ...}, dotted names,
-- registration order, each shared parameter once.
function Module:named_parameters(opts)
  return named_tensors(self, '_param_names', not (type(opts) == 'table' and opts.recurse == false))
end

-- module:named_buffers(): {{name, buffer}, ...} like named_parameters.
function Module:named_buffers(opts)
  return named_tensors(self, '_buffer_names', not (type(opts) == 'table' and opts.recurse == false))
end

-- module:parameters(): the parameters (a Lua array), and as Torch7 a second table of
-- their gradients by position (nil where a parameter has none yet).
function Module:parameters()
  local ps, gs = {}, {}
  for i, p in ipairs(self:named_parameters()) do
    ps[i] = p[2]
    gs[i] = p[2].grad
  end
  for _, m in ipairs(self:modules()) do
    for _, name in ipairs(m:_plain_parameters()) do
      ps[#ps + 1] = m[name]
      gs[#ps] = m['grad' .. name:sub(1, 1):upper() .. name:sub(2)]
    end
  end
  return ps, gs
end

-- the names of a class written as Torch7's whose weight and bias are plain tensors
-- with gradWeight and gradBias beside them (Torch7's parameters, not registered)
function Module:_plain_parameters()
  local out = {}
  local fields = rawget(self, '_fields')
  if not fields then return out end
  for _, name in ipairs({'weight', 'bias'}) do
    local grad = 'grad' .. name:sub(1, 1):upper() .. name:sub(2)
    if torch.is_tensor(fields[name]) and self._kinds[name] == nil and torch.is_tensor(fields[grad]) then
      out[#out + 1] = name
    end
  end
  return out
end

-- module:buffers(): the buffers (a Lua array).
function Module:buffers()
  local out = {}
  for i, p in ipairs(self:named_buffers()) do out[i] = p[2] end
  return out
end

-- module:num_parameters(): how many numbers the parameters hold.
function Module:num_parameters()
  local n = 0
  for _, p in ipairs(self:named_parameters()) do n = n + p[2]:numel() end
  return n
end

-- ---- modes and bulk changes ----

-- module:train(mode=true): training mode for this module and its descendants; returns self.
function Module:train(mode)
  if mode == nil then mode = true end
  for _, m in ipairs(self:modules()) do m.training = mode and true or false end
  return self
end

-- module:eval(): evaluation mode (Dropout off, BatchNorm on running statistics); returns self.
function Module:eval() return self:train(false) end
Module.evaluate = Module.eval

-- nn.flat_grad_of(p): the view of getParameters' flat gradient that is p's gradient,
-- or nil when p was never flattened (optimizers' zero_grad keeps it, as Module:zero_grad).
function nn.flat_grad_of(p) return flat_grads[p] end

-- module:zero_grad({set_to_none=true}): forgets the parameters' gradients (or zeroes
-- them). A gradient that getParameters flattened is zeroed in place (and put back if
-- something set it aside), so the flat gradient tensor stays the gradient.
function Module:zero_grad(opts)
  local to_none = not (type(opts) == 'table' and opts.set_to_none == false)
  torch.no_grad(function()
    for _, p in ipairs(self:named_parameters()) do
      local t = p[2]
      local flat = flat_grads[t]
      if flat ~= nil then
        flat:zero_()
        t.grad = flat
      elseif to_none then t.grad = nil
      elseif t.grad ~= nil then t.grad:zero_() end
    end
  end)
end

-- module:requires_grad_(b=true): sets requires_grad of every parameter; returns self.
function Module:requires_grad_(b)
  if b == nil then b = true end
  for _, p in ipairs(self:named_parameters()) do p[2]:requires_grad_(b) end
  return self
end

-- module:apply(fn): fn(m) for every descendant, children first, then self; returns self.
function Module:apply(fn)
  for _, c in ipairs(self:children()) do c:apply(fn) end
  fn(self)
  return self
end

-- module:listModules(): Torch7's list: this module, then each child's listModules in
-- order (a module reached twice is listed twice).
function Module:listModules()
  local out = {self}
  for _, c in ipairs(each_named(self, '_module_names')) do
    for _, m in ipairs(c[2]:listModules()) do out[#out + 1] = m end
  end
  return out
end

-- module:findModules(typename): every module of that class (torch.typename) in this
-- module and its descendants, in Torch7's order, and beside it the container of each
-- (self for self); two Lua arrays.
function Module:findModules(typename, container)
  local nodes, containers = {}, {}
  if torch.typename(self) == typename then
    nodes[1], containers[1] = self, container or self
  end
  for _, c in ipairs(each_named(self, '_module_names')) do
    local n, cs = c[2]:findModules(typename, self)
    for i = 1, #n do
      nodes[#nodes + 1], containers[#containers + 1] = n[i], cs[i]
    end
  end
  return nodes, containers
end

-- module:replace(fn): Torch7's replace: each child (recursively) becomes what
-- child:replace(fn) returns; returns fn(self), which the caller puts in self's place.
function Module:replace(fn)
  local out = fn(self)
  for _, c in ipairs(each_named(self, '_module_names')) do
    local name, child = c[1], c[2]
    local new = child:replace(fn)
    if new ~= child then
      local i = math.tointeger(tonumber(name))
      if i and rawget(self, '_items') then self[i] = new else self[name] = new end
    end
  end
  return out
end

-- module:reset(stdv): new initial values for the parameters (Torch7's reset): a
-- module's own reset_parameters(), or uniform in +-stdv*sqrt(3) when stdv is given
-- (Torch7's layers' bound: stdv is the standard deviation); the children's
-- reset(stdv) for a container. Returns self.
function Module:reset(stdv)
  local own = getmetatable(self).reset_parameters
  if stdv ~= nil then
    torch.no_grad(function()
      local bound = stdv * math.sqrt(3)
      for _, p in ipairs(each_named(self, '_param_names')) do p[2]:uniform_(-bound, bound) end
    end)
  elseif own ~= nil then
    own(self)
  end
  for _, c in ipairs(self:children()) do c:reset(stdv) end
  return self
end

-- module:clearState(): drops what the last Torch7 call kept (output, gradInput and the
-- input), in this module and its descendants; returns self.
function Module:clearState()
  for _, m in ipairs(self:modules()) do
    local fields = rawget(m, '_fields')
    if fields then
      for _, name in ipairs({'output', 'gradInput'}) do
        if m._kinds[name] == nil then fields[name] = nil end
      end
      set_t7_input(m, nil, nil)
    end
  end
  return self
end

local dtype_of_typename = {['torch.FloatTensor'] = 'float32', ['torch.DoubleTensor'] = 'float64',
                           ['torch.HalfTensor'] = 'float16', ['torch.BFloat16Tensor'] = 'bfloat16'}
-- cutorch's type names: module:type('torch.CudaTensor') is to{dtype=, device='cuda'}
local cuda_typenames = {['torch.CudaTensor'] = 'float32', ['torch.CudaDoubleTensor'] = 'float64',
                        ['torch.CudaHalfTensor'] = 'float16', ['torch.CudaBFloat16Tensor'] = 'bfloat16'}

-- module:to(dtype), module:to('cuda'), module:to{dtype=, device=}, module:to(tensor) (its
-- dtype and device): converts floating parameters and buffers in place, and moves every
-- parameter and buffer to the device (the parameter objects stay the same, so optimizers
-- keep working); returns self.
function Module:to(target)
  local dtype, device
  if torch.is_tensor(target) then
    dtype, device = target.dtype, target.device
  elseif type(target) == 'table' then
    dtype, device = target.dtype, target.device
  elseif target == 'cpu' or (type(target) == 'string' and target:match('^cuda')) then
    device = target
  else
    dtype = target
  end
  if dtype ~= nil then
    dtype = dtype_of_typename[dtype] or dtype
    if dtype ~= 'float32' and dtype ~= 'float64' and dtype ~= 'float16' and dtype ~= 'bfloat16' then
      error("to: expected a floating dtype or a device, got " .. tostring(target), 2)
    end
  end
  if device ~= nil then
    device = torch.device(device)
    if device ~= 'cpu' then torch.cuda._check('to', device, 2) end   -- m:cuda() without a GPU: the caller's line
  end
  local function moved(t, floating)
    local want = {dtype = floating and dtype or nil, device = device}
    return t:to(want)
  end
  torch.no_grad(function()
    for _, m in ipairs(self:modules()) do
      for _, p in ipairs(each_named(m, '_param_names')) do
        local t = p[2]
        local r = moved(t, true)
        if r ~= t then
          local g = t.grad
          t.grad = nil
          flat_grads[t] = nil
          t:set_(r)
          if g ~= nil then t.grad = moved(g, true) end
        end
      end
      for _, b in ipairs(each_named(m, '_buffer_names')) do
        m[b[1]] = moved(b[2], b[2]:is_floating_point())
      end
    end
  end)
  return self
end

-- module:cuda() / module:cpu(): to('cuda') / to('cpu').
function Module:cuda(index) return self:to(index and 'cuda:' .. index or 'cuda') end
function Module:cpu() return self:to('cpu') end

-- Torch7's conversion of one floating tensor to dtype: its whole storage converted once
-- (cache[storage pointer .. dtype]), the tensor a view of the new one with its own
-- offset, sizes and strides, so tensors that shared memory still do; the same tensor
-- converted once (cache[t]). Other tensors are kept.
local function torch7_converted(t, dtype, cache)
  local done = cache[t]
  if done ~= nil then return done end
  if not t:is_floating_point() or t.dtype == dtype then return t end
  local new
  torch.no_grad(function()
    if t:numel() == 0 then
      new = torch.empty(t:size(), {dtype = dtype})
    else
      local st = t:storage()
      local key = tostring(torch.pointer(st)) .. ':' .. dtype
      local whole = cache[key]
      if whole == nil then
        whole = t:detach():as_strided({st:size()}, {1}, 1):to(dtype)
        cache[key] = whole
      end
      new = whole:as_strided(t:size(), t:stride(), t:storageOffset())
    end
  end)
  cache[t] = new
  return new
end

-- every floating tensor in v (a tensor, or a plain table of them, converted in place)
local function torch7_convert_value(v, dtype, cache, seen)
  if torch.is_tensor(v) then return torch7_converted(v, dtype, cache) end
  if type(v) == 'table' and getmetatable(v) == nil and not seen[v] then
    seen[v] = true
    for k, x in pairs(v) do v[k] = torch7_convert_value(x, dtype, cache, seen) end
  end
  return v
end

-- Torch7's type(): every floating tensor field of every module, parameters (which
-- keep their identity, as to() keeps them), buffers and plain fields alike
local function torch7_type(self, dtype, cache)
  for _, m in ipairs(self:modules()) do
    local fields, kinds = rawget(m, '_fields'), rawget(m, '_kinds')
    if fields then
      local seen = {}
      for k, v in pairs(fields) do
        if kinds[k] == 'parameter' and torch.is_tensor(v) then
          local new = torch7_converted(v, dtype, cache)
          if new ~= v then
            local g = v.grad
            torch.no_grad(function()
              v.grad = nil
              flat_grads[v] = nil
              v:set_(new)
              if g ~= nil then v.grad = torch7_converted(g, dtype, cache) end
            end)
            cache[v] = v
          end
        elseif kinds[k] ~= 'module' and not is_module(v) then
          fields[k] = torch7_convert_value(v, dtype, cache, seen)
          restructured()
        end
      end
      set_t7_input(m, nil, nil)
    end
  end
  return self
end

-- module:float() / module:double(): to('float32') / to('float64'); in the Torch7 dialect,
-- called from the user's code, Torch7's type() (every floating tensor field).
function Module:float()
  if torch7_user(1) then return self:type('torch.FloatTensor') end
  return self:to('float32')
end
function Module:double()
  if torch7_user(1) then return self:type('torch.DoubleTensor') end
  return self:to('float64')
end
-- module:half() / module:bfloat16(): to('float16') / to('bfloat16') (floating
-- parameters and buffers; in the Torch7 dialect, Torch7's type('torch.HalfTensor')).
function Module:half()
  if torch7_user(1) then return self:type('torch.HalfTensor') end
  return self:to('float16')
end
function Module:bfloat16()
  if torch7_user(1) then return self:type('torch.BFloat16Tensor') end
  return self:to('bfloat16')
end
-- module:type(name [, cache]): Torch7's conversion ('torch.FloatTensor', ...): every
-- floating tensor field of the module and its descendants, parameters included (they
-- keep their identity), tensors sharing memory still sharing it; cache (a table) makes
-- several calls share their conversions. With no name, the module's class name.
function Module:type(name, cache)
  if name == nil then return torch.typename(self) end
  local dtype = dtype_of_typename[name]
  if dtype == nil and cuda_typenames[name] then return self:to{dtype = cuda_typenames[name], device = 'cuda'} end
  if dtype == nil then return self:to(name) end
  return torch7_type(self, dtype, cache or {})
end

-- ---- state ----

-- {{key, tensor}, ...}: PyTorch's order (a module's parameters, its persistent buffers,
-- then its children's, recursively); a tensor or child registered under several names
-- appears under each, as PyTorch's state_dict keeps tied weights under both keys.
local function state_entries(self, prefix, out)
  out = out or {}
  local np = rawget(self, '_non_persistent') or {}
  for _, p in ipairs(each_named(self, '_param_names')) do out[#out + 1] = {prefix .. p[1], p[2]} end
  for _, b in ipairs(each_named(self, '_buffer_names')) do
    if not np[b[1]] then out[#out + 1] = {prefix .. b[1], b[2]} end
  end
  for _, c in ipairs(each_named(self, '_module_names')) do state_entries(c[2], prefix .. c[1] .. '.', out) end
  return out
end

-- module:state_dict(): name -> tensor for every parameter and persistent buffer (dotted
-- names; the tensors share storage with the module's, without history), a torch.OrderedDict:
-- pairs() walks it in the module's order (a module's parameters, its buffers, then its
-- children's), as PyTorch's.
function Module:state_dict()
  local sd = torch.OrderedDict()
  for _, e in ipairs(state_entries(self, '')) do sd[e[1]] = e[2]:detach() end
  return sd
end

-- module:state_dict_keys(): the state_dict's names in order.
function Module:state_dict_keys()
  local keys = {}
  for i, e in ipairs(state_entries(self, '')) do keys[i] = e[1] end
  return keys
end

-- module:load_state_dict(sd, {strict=true}): copies the values in; returns
-- {missing_keys=, unexpected_keys=}; strict raises when either is non-empty, and a
-- shape mismatch always raises, naming the key.
function Module:load_state_dict(sd, opts)
  if type(sd) ~= 'table' then error('load_state_dict: expected a table of tensors', 2) end
  local strict = not (type(opts) == 'table' and opts.strict == false)
  local own, keys = {}, {}
  for i, e in ipairs(state_entries(self, '')) do own[e[1]], keys[i] = e[2], e[1] end
  local missing, unexpected = {}, {}
  for _, k in ipairs(keys) do
    local v = sd[k]
    if v == nil then missing[#missing + 1] = k
    elseif not torch.is_tensor(v) then
      error(string.format('load_state_dict: %s is a %s, expected a tensor', k, type(v)), 2)
    elseif v:size() ~= own[k]:size() then
      error(string.format('load_state_dict: size mismatch for %s: copying a param with shape %s, '
                          .. 'the shape in the current model is %s', k, tostring(v:size()), tostring(own[k]:size())), 2)
    end
  end
  for k in pairs(sd) do if own[k] == nil then unexpected[#unexpected + 1] = k end end
  table.sort(unexpected)
  if strict and (#missing > 0 or #unexpected > 0) then
    local parts = {}
    if #missing > 0 then parts[#parts + 1] = 'missing keys: ' .. table.concat(missing, ', ') end
    if #unexpected > 0 then parts[#parts + 1] = 'unexpected keys: ' .. table.concat(unexpected, ', ') end
    error('load_state_dict: error(s) in loading state_dict for ' .. torch.typename(self) .. ': '
          .. table.concat(parts, '; '), 2)
  end
  torch.no_grad(function()
    for k, t in pairs(own) do
      if sd[k] ~= nil then t:copy_(sd[k]) end
    end
  end)
  return {missing_keys = missing, unexpected_keys = unexpected}
end

-- ---- hooks ----
local function add_hook(list, fn)
  if type(fn) ~= 'function' then error('register hook: expected a function', 3) end
  local entry = {fn = fn}
  list[#list + 1] = entry
  return {remove = function()
    for i, e in ipairs(list) do if e == entry then table.remove(list, i) return end end
  end}
end

-- module:register_forward_pre_hook(fn): fn(module, args) before each call; a non-nil
-- return (a table of arguments) replaces them. Returns a handle with :remove().
function Module:register_forward_pre_hook(fn) return add_hook(rawget(self, '_forward_pre_hooks'), fn) end

-- module:register_forward_hook(fn): fn(module, args, output) after each call; a
-- non-nil return replaces the output. Returns a handle with :remove().
function Module:register_forward_hook(fn) return add_hook(rawget(self, '_forward_hooks'), fn) end

-- module:register_full_backward_hook(fn): fn(module, grad_input, grad_output) once per
-- backward through the module, as PyTorch's. grad_output holds the gradients of the
-- tensors the call returned (in tables too, depth first), grad_input those of the
-- tensor arguments; each has one entry per tensor, the count in .n (as table.pack). A
-- grad_input entry is nil where no gradient flows (PyTorch's None); an output the loss
-- does not use has zeros. A returned table (by position; nil entries pass nothing on)
-- replaces grad_input. When no argument requires grad, grad_input is all nil
-- ({n = count}) and the hook must return nil. Returns a handle with :remove().
function Module:register_full_backward_hook(fn) return add_hook(rawget(self, '_backward_hooks'), fn) end

-- ---- calling ----
-- A class written as Torch7's are (its own updateGradInput, no autograd inside): one
-- node of the graph whose forward is updateOutput and whose backward calls
-- updateGradInput and accGradParameters, so that it trains inside any container.
local Torch7Step = torch.autograd.Function:extend('nn.Torch7Module')
function Torch7Step.forward(ctx, self, input)
  ctx.module = self
  ctx:save_for_backward(input)
  return self:updateOutput(input):clone()     -- the graph's own: the next call rewrites the buffer
end
function Torch7Step.backward(ctx, gradOutput)
  local self, input = ctx.module, ctx.saved_tensors[1]
  local gradInput = self:updateGradInput(input, gradOutput)
  self:accGradParameters(input, gradOutput, 1)
  return nil, gradInput and gradInput:clone()
end

local function is_torch7_class(cls) return cls.updateGradInput ~= Module.updateGradInput end

local function compute(self, ...)
  local fields, cls = self._fields, getmetatable(self)
  -- the class's methods unless the instance has its own
  local forward = fields and fields.forward or cls.forward
  if forward ~= Module.forward then return forward(self, ...) end
  if is_torch7_class(cls) then
    local input = ...
    if torch.is_tensor(input) and input.requires_grad and torch.is_grad_enabled() then
      return Torch7Step.apply(self, input)
    end
  end
  return (fields and fields.updateOutput or cls.updateOutput)(self, ...)
end

local function tensors_of(v, out)
  out = out or {}
  if torch.is_tensor(v) then out[#out + 1] = v
  elseif type(v) == 'table' and not is_module(v) then
    for _, x in ipairs(v) do tensors_of(x, out) end
  end
  return out
end

-- Torch7's output and gradInput fields, unless the module registered that name
local function keep(self, name, v)
  local fields = self._fields
  if fields == nil then rawset(self, name, v)
  elseif self._kinds[name] == nil then fields[name] = v end
end

-- Torch7 calls (module:forward) under way. Inside one, every module called keeps its
-- result in self.output, as Torch7's modules do (backward starts from it; a
-- container's children keep theirs too). Outside, model(x) keeps nothing, as
-- PyTorch's: a kept result would hold its activations and their whole graph alive
-- until the next call, and checkpointing a block would save nothing. Counted per
-- coroutine (a coroutine that dies inside a forward never closes its count; its entry
-- goes with it), and in all (0: the common case, no lookup at all).
local torch7_depth = setmetatable({}, {__mode = 'k'})    -- coroutine -> calls under way
local torch7_open = 0
-- a Torch7 call's scope, closed on return or error alike (a to-be-closed value)
local torch7_scope = {__close = function(scope)
  local depth = torch7_depth[scope.thread] - 1
  torch7_depth[scope.thread] = depth > 0 and depth or nil
  torch7_open = torch7_open - 1
end}
local running = coroutine.running
-- the scope object of a thread's Torch7 calls (one per coroutine, closed once per call)
local scopes = setmetatable({}, {__mode = 'k'})
local function scope_of(thread)
  local scope = scopes[thread]
  if scope == nil then
    scope = setmetatable({thread = thread}, torch7_scope)
    scopes[thread] = scope
  end
  return scope
end
local function in_torch7_call() return torch7_open > 0 and torch7_depth[running()] ~= nil end

-- a module called inside a Torch7 call keeps its input (the one the caller's own
-- Torch7 call leaf-made stays as forward set it): backward with it needs no new forward
local function keep_given(self, input)
  if not rawequal(t7_input(self, 'input'), input) then set_t7_input(self, nil, input) end
end

local function run_backward_hooks(state, grad_input)
  local self = state.module
  for _, h in ipairs(rawget(self, '_backward_hooks')) do
    local r = h.fn(self, grad_input, state.grad_out)
    if r ~= nil then
      local name = torch.typename(self)
      if type(r) ~= 'table' or torch.is_tensor(r) or (r.n or #r) > grad_input.n then
        error(string.format('%s: a full backward hook must return nil or a table of at most %d gradients '
                            .. '(one per tensor argument)', name, grad_input.n), 0)
      end
      for i = 1, grad_input.n do
        if r[i] ~= nil and not (torch.is_tensor(r[i]) and state.inputs_tracked) then
          error(state.inputs_tracked and string.format('%s: a full backward hook returned a %s for argument %d',
                                                       name, type(r[i]), i)
                or name .. ': a full backward hook of a module whose inputs do not require grad must return nil', 0)
        end
      end
      grad_input = table.pack(table.unpack(r, 1, grad_input.n))
    end
  end
  return grad_input
end

-- v with its tensors (in tensors_of's order) replaced by the next ones of list
local function with_tensors(v, list, pos)
  if torch.is_tensor(v) then
    pos[1] = pos[1] + 1
    return list[pos[1]]
  elseif type(v) == 'table' and not is_module(v) then
    local out = {}
    for k, x in pairs(v) do out[k] = x end
    for i, x in ipairs(v) do out[i] = with_tensors(x, list, pos) end
    return setmetatable(out, getmetatable(v))
  end
  return v
end

-- identities, each over all the tensors of one side in one node (PyTorch's
-- BackwardHookFunction): the outputs' backward sees every grad_output at once, the
-- arguments' every grad_input, and runs the hooks
local HookOutputs = torch.autograd.Function:extend('nn.BackwardHookOutputs')
function HookOutputs.forward(ctx, state, ...)
  ctx.state = state
  return ...
end
function HookOutputs.backward(ctx, ...)
  local state = ctx.state
  state.grad_out = table.pack(...)
  if not state.inputs_tracked then run_backward_hooks(state, {n = state.n_inputs}) end
  return nil, ...
end
local HookInputs = torch.autograd.Function:extend('nn.BackwardHookInputs')
HookInputs.forward = HookOutputs.forward
function HookInputs.backward(ctx, ...)
  local gi = run_backward_hooks(ctx.state, table.pack(...))
  return nil, table.unpack(gi, 1, gi.n)
end

-- The tensor arguments pass through HookInputs when one requires grad; returns the
-- function that passes the results' tensors through HookOutputs.
local function with_backward_hooks(self, args)
  local state = {module = self, grad_out = {n = 0}}
  local slots, tensors = {}, {}
  for i = 1, args.n do
    local a = args[i]
    if torch.is_tensor(a) then
      slots[#slots + 1] = i
      tensors[#tensors + 1] = a
      state.inputs_tracked = state.inputs_tracked or (a.requires_grad and torch.is_grad_enabled())
    end
  end
  state.n_inputs = #slots
  if state.inputs_tracked then
    local passed = table.pack(HookInputs.apply(state, table.unpack(tensors)))
    for k, i in ipairs(slots) do args[i] = passed[k] end
  end
  return function(res)
    local outs = {}
    for i = 1, res.n do tensors_of(res[i], outs) end
    if #outs == 0 then return end
    local passed, pos = table.pack(HookOutputs.apply(state, table.unpack(outs))), {0}
    for i = 1, res.n do res[i] = with_tensors(res[i], passed, pos) end
  end
end

-- nngraph's syntax: a module called on a node or a table of nodes, or a module without
-- a forward of its own called on nothing (nn.Identity()()), makes a graph node.
local function is_graph_call(self, ...)
  local n, first = select('#', ...), ...
  if type(first) == 'table' then
    local node = package.loaded.nngraph and package.loaded.nngraph.is_node
    if node == nil then return false end
    -- an empty table too (a misspelt node: {x} with x nil), which nngraph refuses
    return node(first) or node(rawget(first, 1)) or (next(first) == nil and getmetatable(first) == nil)
  end
  return first == nil and n <= 1 and getmetatable(self).forward == Module.forward
end

-- ---- errors at the user's line ----
-- The modules under way, outermost first (calls[1..ncalls]): each call pushes its module
-- and pops it on return; an error skips the pops, so when it reaches the outermost call
-- the list still names the path to the module that failed. The outermost call (depth 0,
-- in the PyTorch dialect) runs the rest under pcall and raises the error again at the
-- user's line, saying which child failed.
local calls, ncalls = {}, 0

local function leave(n, ...)
  calls[n + 1] = nil                  -- (no module is kept alive by the list)
  ncalls = n
  return ...
end

-- a module in one line: nn.Linear(in_features=10, out_features=5, bias=true); a
-- container by its class name
local function one_line(m)
  local ok, text = pcall(tostring, m)
  local first = ok and text:match('^[^\n]*') or ''
  if first == '' or first:sub(-1) == '(' then return torch.typename(m) or 'module' end
  if first:sub(1, 3) ~= 'nn.' and (torch.typename(m) or ''):sub(1, 3) == 'nn.' then first = 'nn.' .. first end
  return first
end

-- the name a parent registered its child under ('1' in a Sequential)
local function child_name(parent, child)
  local fields = rawget(parent, '_fields')
  for _, n in ipairs(rawget(parent, '_module_names') or {}) do
    if fields[n] == child then return n end
  end
  return '?'
end

-- "nn.Sequential child 1 (nn.Linear(...)): " for the path calls[1..n] (nothing when
-- the outermost module failed itself)
local function path_text(n)
  if n < 2 then return '' end
  local parts = {torch.typename(calls[1]) or 'module'}
  for i = 2, n do
    parts[#parts + 1] = string.format('%schild %s (%s)', i > 2 and '> ' or '', child_name(calls[i - 1], calls[i]),
                                      one_line(calls[i]))
  end
  return table.concat(parts, ' ') .. ': '
end

-- msg without the positions in the libraries' files that start its lines
local function without_library_positions(msg)
  return (('\n' .. msg):gsub('\n([^\n]-):%d+: ', function(path)
    if torch._in_library('@' .. path) then return '\n' end
  end):sub(2))
end

-- In the Torch7 dialect the containers put Torch7's "In 2 module of nn.Sequential:"
-- lines in front of a child's error themselves: no path is added then.
local function raise_at_caller(err, failed)
  local torch7 = torch.dialect() == 'torch7'
  local context = (type(err) == 'string' and not torch7) and path_text(failed) or ''
  for i = 1, #calls do calls[i] = nil end
  ncalls = 0
  if type(err) ~= 'string' then error(err, 0) end
  local where, text = err:match('^([^\n]-:%d+): (.*)$')
  local level = torch._caller_level()
  if where ~= nil and not torch._in_library('@' .. where) and where:sub(1, 1) ~= '[' then
    -- raised in the user's own code (a module of theirs): its position stays
    error(where .. ': ' .. context .. text, 0)
  end
  error(context .. without_library_positions(text or err), level)
end

local function outermost_done(ok, ...)
  if ok then
    calls[1] = nil
    ncalls = 0
    return ...
  end
  return raise_at_caller(..., ncalls)
end

-- fn(self, ...) as a call of the module self: errors from inside at the caller's line
-- (see above); the criteria's __call uses it too
local function guarded(self, fn, ...)
  if ncalls > 0 then
    local n = ncalls
    ncalls = n + 1
    calls[n + 1] = self
    return leave(n, fn(self, ...))
  end
  ncalls = 1
  calls[1] = self
  return outermost_done(pcall(fn, self, ...))
end
Module._guarded_call = guarded

local call_module

-- model(...): forward-pre-hooks, the computation (forward if the class defines it,
-- else updateOutput), forward hooks; returns the output(s), and keeps the first in
-- self.output only inside a Torch7 call (module:forward); on nngraph nodes, a node.
-- An error from inside the call is raised at the caller's line, naming the child that
-- failed (nn.Sequential child 1 (nn.Linear(...)): ...).
function Module.__call(self, ...)
  return guarded(self, call_module, ...)
end

call_module = function(self, ...)
  local first = ...
  if (first == nil or type(first) == 'table') and is_graph_call(self, ...) then
    return require('nngraph').node(self, ...)
  end
  local pre, post, back = rawget(self, '_forward_pre_hooks'), rawget(self, '_forward_hooks'),
                          rawget(self, '_backward_hooks')
  if (not pre or #pre == 0) and (not post or #post == 0) and (not back or #back == 0) then
    local out, extra = compute(self, ...)
    if in_torch7_call() and not is_torch7_class(getmetatable(self)) then
      keep(self, 'output', out)
      keep_given(self, ...)
    end
    if extra ~= nil then return out, extra end
    return out
  end
  local args = table.pack(...)
  for _, h in ipairs(pre) do
    local r = h.fn(self, args)
    if r ~= nil then
      if type(r) ~= 'table' or torch.is_tensor(r) then r = {r} end
      args = table.pack(table.unpack(r))
    end
  end
  local finish
  if #back > 0 then finish = with_backward_hooks(self, args) end
  local res = table.pack(compute(self, table.unpack(args, 1, args.n)))
  for _, h in ipairs(post) do
    local r = h.fn(self, args, res[1])
    if r ~= nil then res[1] = r end
  end
  if finish then finish(res) end
  if in_torch7_call() and not is_torch7_class(getmetatable(self)) then
    keep(self, 'output', res[1])
    keep_given(self, table.unpack(args, 1, args.n))
  end
  return table.unpack(res, 1, res.n)
end

-- ---- Torch7's API on the autograd graph ----

-- an input as a leaf that requires grad (so gradInput exists), keeping non-float tensors
local function as_leaf(v)
  if torch.is_tensor(v) then
    if v:is_floating_point() and not v.requires_grad then
      local leaf = v:detach():requires_grad_()
      torch._ag_set_implicit(leaf, true)              -- nn's, not the user's
      return leaf
    end
    if v.requires_grad and not v.is_leaf then v:retain_grad() end
    return v
  elseif type(v) == 'table' and not is_module(v) and getmetatable(v) == nil then
    local out = {}
    for k, x in pairs(v) do out[k] = as_leaf(x) end
    return out
  end
  return v
end

-- whether m's gradInput is not wanted: the user set it to nil (Torch7's
-- `model.modules[1].gradInput = nil`), on m or, for a chain whose gradInput is its first
-- child's (nn.Sequential), on that first child
local function skips_grad_input(m)
  while is_module(m) do
    if no_grad_input[m] then return true end
    if not m._gradInput_from_first then return false end
    m = m.modules[1]
  end
  return false
end

-- module:forward(input, ...): Torch7's entry: as model(input, ...), the input first made a
-- leaf that requires grad (when it does not) so that backward can give gradInput; the
-- module, and every module it calls, keeps its result in self.output. When gradInput
-- is not wanted (m.gradInput = nil, on m or on a Sequential's first module), the input
-- stays as it is and backward computes no gradient for it (gradInput stays nil).
function Module:forward(input, ...)
  if is_torch7_class(getmetatable(self)) then return self:updateOutput(input, ...) end   -- Torch7's own
  local x = input
  if torch.is_grad_enabled() and not skips_grad_input(self) then x = as_leaf(input) end
  set_t7_input(self, x, input)
  local thread = running()
  torch7_depth[thread] = (torch7_depth[thread] or 0) + 1
  torch7_open = torch7_open + 1
  local scope <close> = scope_of(thread)
  return Module.__call(self, x, ...)
end

-- the gradient of an input, in its structure; zeros for a floating input that got
-- none (an entry of a table the module did not use), as Torch7's gradInput
local function grad_of(x)
  if torch.is_tensor(x) then
    if x.grad == nil and x.requires_grad and x:is_floating_point() then return torch.zeros_like(x:detach()) end
    return x.grad
  end
  if type(x) == 'table' then
    local out = {}
    for k, v in pairs(x) do out[k] = grad_of(v) end
    return out
  end
  return nil
end

local function clear_grads(x)
  if torch.is_tensor(x) then if x.requires_grad and (x.is_leaf or x.retains_grad) then x.grad = nil end
  elseif type(x) == 'table' then for _, v in pairs(x) do clear_grads(v) end end
end

local same_shape = torch._same_shape
local function roots_and_seeds(self, gradOutput)
  local roots, seeds = tensors_of(self.output), tensors_of(gradOutput)
  if #roots == 0 or #roots ~= #seeds then
    error(string.format('%s:backward: call forward first, and give one gradOutput per output (%d outputs, %d gradients)',
                        torch.typename(self), #roots, #seeds), 3)
  end
  local r, s = {}, {}
  for i, o in ipairs(roots) do
    if o.requires_grad then
      local g = seeds[i]
      -- a gradOutput of the output's element count in another shape is read in the
      -- output's (Torch7 went element by element)
      if not same_shape(g, o) and g:numel() == o:numel() then g = g:reshape(o:size()) end
      r[#r + 1] = o; s[#s + 1] = g
    end
  end
  return r, s
end

-- the input the last Torch7 call saw, kept as it is called; a backward with another
-- input (or with none before) runs forward on it first, as Torch7's modules compute
-- their gradients from the input given
local function check_torch7(self, input)
  if self.forward ~= Module.forward then
    error(torch.typename(self) .. ': this module defines forward (PyTorch style); call loss:backward() '
          .. 'instead of module:backward()', 3)
  end
  if input ~= nil and not rawequal(t7_input(self, 'given'), input) then self:forward(input) end
  return t7_input(self, 'input')
end

-- module:backward(input, gradOutput, scale=1): gradients of the last forward: accumulates
-- scale * d/dparams into the parameters' .grad and returns gradInput.
function Module:backward(input, gradOutput, scale)
  if is_torch7_class(getmetatable(self)) then                 -- Torch7's own
    local gradInput = self:updateGradInput(input, gradOutput)
    self:accGradParameters(input, gradOutput, scale or 1)
    return gradInput
  end
  local x = check_torch7(self, input) or input
  scale = scale or 1
  local roots, seeds = roots_and_seeds(self, gradOutput)
  clear_grads(x)
  if #roots > 0 then
    if scale ~= 1 then
      for i, s in ipairs(seeds) do seeds[i] = s * scale end
    end
    torch.autograd.backward(roots, seeds, {retain_graph = true})
  end
  local gi = grad_of(x)
  if scale ~= 1 and gi ~= nil then
    if torch.is_tensor(gi) then gi = gi / scale
    else for k, g in pairs(gi) do gi[k] = g / scale end end
  end
  clear_grads(x)
  keep(self, 'gradInput', gi)
  return gi
end

-- module:updateGradInput(input, gradOutput): gradInput only (parameters untouched).
function Module:updateGradInput(input, gradOutput)
  local x = check_torch7(self, input) or input
  local roots, seeds = roots_and_seeds(self, gradOutput)
  local xs = tensors_of(x)
  local gi
  if #roots > 0 and #xs > 0 then
    local gs = torch.autograd.grad(roots, xs, {grad_outputs = seeds, retain_graph = true, allow_unused = true})
    for i, g in ipairs(xs) do
      if gs[i] == nil and g.requires_grad and g:is_floating_point() then gs[i] = torch.zeros_like(g:detach()) end
    end
    gi = with_tensors(x, gs, {0})
  end
  keep(self, 'gradInput', gi)
  return gi
end

-- module:accGradParameters(input, gradOutput, scale=1): accumulates scale * d/dparams.
function Module:accGradParameters(input, gradOutput, scale)
  if is_torch7_class(getmetatable(self)) then return end      -- Torch7's default: no parameters
  check_torch7(self, input)
  scale = scale or 1
  local roots, seeds = roots_and_seeds(self, gradOutput)
  local ps = {}
  for _, p in ipairs(self:named_parameters()) do if p[2].requires_grad then ps[#ps + 1] = p[2] end end
  if #roots == 0 or #ps == 0 then return end
  local gs = torch.autograd.grad(roots, ps, {grad_outputs = seeds, retain_graph = true, allow_unused = true})
  torch.no_grad(function()
    for i, p in ipairs(ps) do
      local g = gs[i]
      if g ~= nil then
        if scale ~= 1 then g = g * scale end
        if p.grad == nil then p.grad = g:clone() else p.grad:add_(g) end
      end
    end
  end)
end

-- each plain (Torch7) parameter of self and its descendants with its gradient
local function plain_pairs(self)
  local out = {}
  for _, m in ipairs(self:modules()) do
    for _, name in ipairs(m:_plain_parameters()) do
      out[#out + 1] = {m[name], m['grad' .. name:sub(1, 1):upper() .. name:sub(2)]}
    end
  end
  return out
end

-- the parameters of self and its descendants (each once), then their plain (Torch7)
-- weight/gradWeight and bias/gradBias pairs as {tensor, gradient}: what the per-step
-- loops below walk, without the dotted names named_parameters builds
local PLAIN = {{'weight', 'gradWeight'}, {'bias', 'gradBias'}}
local walked = setmetatable({}, {__mode = 'k'})     -- module -> {generation, params, plain}
local function step_tensors(self)
  local w = walked[self]
  if w ~= nil and w[1] == generation then return w[2], w[3] end
  local params, plain, seen = {}, {}, {}
  local function visit(m)
    local fields = rawget(m, '_fields')
    if seen[m] or fields == nil then return end
    seen[m] = true
    local kinds = rawget(m, '_kinds')
    for _, n in ipairs(rawget(m, '_param_names')) do
      local p = fields[n]
      if p ~= nil and not seen[p] then seen[p] = true; params[#params + 1] = p end
    end
    for _, pg in ipairs(PLAIN) do
      local t, g = fields[pg[1]], fields[pg[2]]
      if kinds[pg[1]] == nil and torch.is_tensor(t) and torch.is_tensor(g) then plain[#plain + 1] = {t, g} end
    end
    for _, n in ipairs(rawget(m, '_module_names')) do
      local c = fields[n]
      if c ~= nil then visit(c) end
    end
  end
  visit(self)
  walked[self] = {generation, params, plain}
  return params, plain
end

local zero_grad, add_grad = torch._zero_grad, torch._add_grad   -- (in C: no tensor object made)
local function zero_step_grads(params, plain)
  for _, t in ipairs(params) do
    local flat = flat_grads[t]
    if flat ~= nil then
      flat:zero_()
      t.grad = flat
    elseif not zero_grad(t) then
      local g = t.grad
      if g ~= nil then g:zero_() end
    end
  end
  for _, pg in ipairs(plain) do pg[2]:zero_() end
end

-- module:zeroGradParameters(): zeroes the parameters' gradients in place.
function Module:zeroGradParameters()
  local params, plain = step_tensors(self)
  torch.no_grad(zero_step_grads, params, plain)
end

local function update_step(params, plain, lr)
  local opts
  for _, t in ipairs(params) do
    if not add_grad(t, -lr) then
      local g = t.grad
      opts = opts or {alpha = -lr}
      if g ~= nil then t:add_(g, opts) end
    end
  end
  for _, pg in ipairs(plain) do
    opts = opts or {alpha = -lr}
    pg[1]:add_(pg[2], opts)
  end
end

-- module:updateParameters(lr): p = p - lr * p.grad for every parameter.
function Module:updateParameters(lr)
  local params, plain = step_tensors(self)
  torch.no_grad(update_step, params, plain, lr)
end

-- module:accUpdateGradParameters(input, gradOutput, lr): Torch7's update without
-- keeping gradients: each parameter moves by -lr times its gradient for this
-- gradOutput; the gradients the parameters hold are left as they were.
function Module:accUpdateGradParameters(input, gradOutput, lr)
  local ps, kept = {}, {}
  for i, p in ipairs(self:named_parameters()) do
    ps[i], kept[i] = p[2], p[2].grad
    p[2].grad = nil
  end
  local plain = plain_pairs(self)
  local plain_kept = {}
  for i, pg in ipairs(plain) do plain_kept[i] = pg[2]:clone(); pg[2]:zero_() end
  self:accGradParameters(input, gradOutput, -lr)
  torch.no_grad(function()
    for i, p in ipairs(ps) do
      if p.grad ~= nil then p:add_(p.grad) end
      p.grad = kept[i]
    end
    for i, pg in ipairs(plain) do
      pg[1]:add_(pg[2])
      pg[2]:copy_(plain_kept[i])
    end
  end)
end

-- does t cover a stretch of its storage with no holes (in some order of its dims)?
local function compact(t)
  local dims = {}
  for d = 1, t:dim() do
    if t:stride(d) > 0 and t:size(d) > 1 then dims[#dims + 1] = {t:stride(d), t:size(d)} end
  end
  table.sort(dims, function(a, b) return a[1] > b[1] end)
  local expect = 1
  for i = #dims, 1, -1 do
    if dims[i][1] ~= expect then return false end
    expect = expect * dims[i][2]
  end
  return true
end

-- Torch7's flattening: the storages the tensors use (each once) laid end to end in one
-- new tensor, with the values they hold; where the tensors leave some of that memory
-- unused, it is taken out (which needs each tensor compact). Returns the flat tensor
-- and, for each tensor, {offset (1-based), size, stride} of its place in it.
local function flatten(tensors, who)
  local places, by_storage, storages, total = {}, {}, {}, 0
  local dtype = tensors[1].dtype
  for i, t in ipairs(tensors) do
    if t.dtype ~= dtype then
      error(string.format('%s: parameters of different dtypes (%s, %s)', who, dtype, t.dtype), 3)
    end
    if t:numel() > 0 then
      local st = t:storage()
      local key = torch.pointer(st)
      local base = by_storage[key]
      if base == nil then
        base = total
        by_storage[key] = base
        storages[#storages + 1] = {t, st:size(), base}
        total = total + st:size()
      end
      places[i] = {t:storageOffset() + base, t:size(), t:stride()}
    end
  end
  local flat = torch.zeros(total, {dtype = dtype})
  local marks = torch.zeros(total, {dtype = 'int64'})      -- 1 where a tensor lies (exact counts)
  local all_compact = true
  for i, t in ipairs(tensors) do
    local at = places[i]
    if at then
      marks:as_strided(at[2], at[3], at[1]):fill_(1)
      all_compact = all_compact and compact(t)
    end
  end
  local used = marks:ne(0)
  local offsets = marks:cumsum(1)
  local function count(k)                       -- how many used places up to k
    local v = offsets[k]
    return math.tointeger(torch.is_tensor(v) and v:item() or v)
  end
  local n_used = total > 0 and count(total) or 0
  for _, e in ipairs(storages) do                -- the values, storage by storage
    flat:narrow(1, e[3] + 1, e[2]):copy_(e[1]:as_strided({e[2]}, {1}, 1))
  end
  if n_used ~= total then
    if not all_compact then
      error(who .. ': cannot gather parameters that are not compact (they leave holes in their memory '
            .. 'in every order of their dims)', 3)
    end
    flat = flat:masked_select(used)
    for _, at in pairs(places) do at[1] = count(at[1]) end
  end
  return flat, places
end

-- module:getParameters(): Torch7's flattening: one tensor holding all the parameters and
-- one holding all their gradients, laid out alike; each parameter (and its .grad)
-- becomes a view into them, so an optimizer updating the flat tensor updates the model
-- (and zero_grad zeroes the flat gradient in place rather than dropping it). As
-- Torch7's: parameters sharing memory (clone('weight', 'bias'), a parameter already
-- flattened) keep sharing it, in the layout they had; memory no parameter uses is left
-- out (an error when a parameter is not compact, a tensor with holes).
function Module:getParameters()
  local ps, grads, plain = {}, {}, plain_pairs(self)
  for _, p in ipairs(self:named_parameters()) do ps[#ps + 1] = p[2] end
  local n_registered = #ps
  for _, pg in ipairs(plain) do ps[#ps + 1] = pg[1] end
  if #ps == 0 then return torch.empty(0), torch.empty(0) end
  local flat, places
  torch.no_grad(function()
    flat, places = flatten(ps, 'getParameters')
  end)
  local gflat = torch.zeros(flat:numel(), {dtype = flat.dtype})
  torch.no_grad(function()
    for i, p in ipairs(ps) do
      local at = places[i]
      local view = at and flat:as_strided(at[2], at[3], at[1]) or torch.empty(p:size(), {dtype = flat.dtype})
      local gview = at and gflat:as_strided(at[2], at[3], at[1]) or torch.zeros(p:size(), {dtype = flat.dtype})
      if i > n_registered then                  -- a plain parameter and its gradient field
        local g = plain[i - n_registered][2]
        if g:numel() == p:numel() then gview:copy_(g:reshape(p:size())) end
        p:set_(view)
        g:set_(gview)
      else
        local g = p.grad
        if g ~= nil then gview:copy_(g) end
        p.grad = nil
        p:set_(view)
        p.grad = gview
        flat_grads[p] = p.grad
      end
    end
  end)
  return flat, gflat
end

-- ---- copies ----
local function deep_copy(v, memo)
  if memo[v] ~= nil then return memo[v] end
  if torch.is_tensor(v) then
    local c = torch.no_grad(function() return v:detach():clone() end)
    if v.requires_grad and v.is_leaf then c:requires_grad_() end
    if parameter_set[v] then
      parameter_set[c] = true
      torch._ag_set_implicit(c, true)
    end
    memo[v] = c
    return c
  end
  if type(v) ~= 'table' then return v end
  local mt = getmetatable(v)
  if mt == debug.getregistry()['torch.Size'] then return v end
  local c = {}
  memo[v] = c
  for k, x in pairs(v) do rawset(c, deep_copy(k, memo), deep_copy(x, memo)) end
  return setmetatable(c, mt)
end

-- module:clone(...): a deep copy (new parameters); with names ('weight', 'bias', ...)
-- those fields are shared with the original instead, as Torch7's clone(...).
function Module:clone(...)
  -- the last call's values are not copied
  local saved = {}
  for _, m in ipairs(self:modules()) do
    saved[m] = {m.output, m.gradInput}
    keep(m, 'output', nil)
    keep(m, 'gradInput', nil)
  end
  local c = deep_copy(self, {})
  for m, vals in pairs(saved) do
    keep(m, 'output', vals[1])
    keep(m, 'gradInput', vals[2])
  end
  if select('#', ...) > 0 then c:share(self, ...) end
  return c
end

-- module:share(other, 'weight', 'bias', ...): these fields of self (and of its
-- descendants, matched by position) become the same tensors as other's. Sharing a
-- parameter shares its gradient, so Torch7's 'gradWeight', 'gradBias' need nothing more.
function Module:share(other, ...)
  local names = {...}
  local mine, theirs = self:modules(), other:modules()
  for i, m in ipairs(mine) do
    local o = theirs[i]
    if o then
      local fields, from = rawget(m, '_fields'), rawget(o, '_fields')
      for _, n in ipairs(names) do
        if from[n] ~= nil then fields[n] = from[n] end
      end
    end
  end
  restructured()
  return self
end

-- ---- printing ----

-- module:extra_repr(): the text inside the parentheses when printed (subclasses).
function Module:extra_repr() return '' end

local function short_name(m)
  local name = torch.typename(m) or 'Module'
  return (name:gsub('^nn%.', ''))
end

-- module:__tostring__(): Torch7's text: nn.Name, with the module's settings in
-- parentheses when it has some; a container lists its children, Sequential
-- with Torch7's [input -> (1) -> (2) -> output] line.
function Module:__tostring__()
  local name = torch.typename(self) or 'nn.Module'
  local children = each_named(self, '_module_names')
  if #children == 0 then
    local extra = self:extra_repr()
    return extra ~= '' and name .. '(' .. extra .. ')' or name
  end
  local lines = {name .. ' {'}
  if name == 'nn.Sequential' then
    local flow = {'input'}
    for _, c in ipairs(children) do flow[#flow + 1] = '(' .. c[1] .. ')' end
    flow[#flow + 1] = 'output'
    lines[2] = '  [' .. table.concat(flow, ' -> ') .. ']'
  end
  for _, c in ipairs(children) do
    local text = c[2]:__tostring__():gsub('\n', '\n  ')
    lines[#lines + 1] = '  (' .. c[1] .. '): ' .. text
  end
  lines[#lines + 1] = '}'
  return table.concat(lines, '\n')
end

-- a module prints as PyTorch's repr (in the Torch7 dialect, as Torch7's
-- __tostring__): Name(extra) or a tree of its children (a child
-- registered under several names printed under each)
function Module.__tostring(self)
  if torch.dialect() == 'torch7' then return self:__tostring__() end
  local extra = self:extra_repr()
  local children = each_named(self, '_module_names')
  if #children == 0 then return short_name(self) .. '(' .. extra .. ')' end
  local lines = {short_name(self) .. '(' .. (extra ~= '' and extra or '')}
  for _, c in ipairs(children) do
    local text = tostring(c[2]):gsub('\n', '\n  ')
    lines[#lines + 1] = '  (' .. c[1] .. '): ' .. text
  end
  lines[#lines + 1] = ')'
  return table.concat(lines, '\n')
end

return Module
