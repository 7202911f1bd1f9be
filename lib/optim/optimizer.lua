-- optim.Optimizer: the base of every optimizer, as torch.optim.Optimizer.
-- It keeps param_groups (per-group options), per-parameter state (keyed by
-- the parameter tensor), and gives zero_grad, add_param_group, state_dict
-- and load_state_dict. A subclass defines step(closure); it runs without
-- recording (torch.no_grad) and its closure with grad mode on, as the
-- built-in optimizers of PyTorch do with @torch.no_grad().
local torch = require 'torch'
local optim = require 'optim'

-- optim._error(fmt, ...): raises the formatted message at the first caller
-- outside lib/optim (and torch.class's constructor), so the position shown
-- is the user's line.
function optim._error(fmt, ...)
  local msg = string.format(fmt, ...)
  local level = 2
  while true do
    local info = debug.getinfo(level, 'S')
    if not info then error(msg, 0) end
    local source = info.source
    if info.what ~= 'C' and not source:find('optim[/\\][%w_]+%.lua$') and not source:find('torch[/\\]init%.lua$') then
      error(msg, level)
    end
    level = level + 1
  end
end
local fail = optim._error

-- A value as the call forms of a usage line show it.
local function shown(v)
  if type(v) == 'number' then
    if math.type(v) == 'integer' then return tostring(v) end
    return string.format('%.6g', v)
  elseif type(v) == 'string' then return "'" .. v .. "'"
  elseif type(v) == 'table' and getmetatable(v) == nil then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = shown(x) end
    return '{' .. table.concat(parts, ', ') .. '}'
  elseif v == false then return 'false'
  end
  return tostring(v)
end

-- The accepted call forms of a constructor, for its errors.
local function usage(sig)
  local first, pos, table_keys = sig.first, {}, {}
  local listed = {}
  for i, key in ipairs(sig) do
    listed[key] = true
    pos[i] = key
    local d = sig.defaults[key]
    table_keys[#table_keys + 1] = key .. '=' .. (d == nil and '...' or shown(d))
  end
  local rest = {}
  for key in pairs(sig.defaults) do
    if not listed[key] then rest[#rest + 1] = key end
  end
  table.sort(rest)
  for _, key in ipairs(rest) do table_keys[#table_keys + 1] = key .. '=' .. shown(sig.defaults[key]) end
  local positional = sig.name .. '(' .. first .. (#pos > 0 and ', ' .. table.concat(pos, ', ') or '') ..
                     (#rest > 0 and ', {' .. table.concat(rest, '=..., ') .. '=...}' or '') .. ')'
  return positional .. ' or ' .. sig.name .. '(' .. first .. ', {' .. table.concat(table_keys, ', ') .. '})'
end

-- An options table: a plain table with no list part whose keys are all
-- strings (an array such as milestones or betas is a positional value).
local function is_options(v)
  if type(v) ~= 'table' or getmetatable(v) ~= nil or rawlen(v) > 0 then return false end
  for k in pairs(v) do
    if type(k) ~= 'string' then return false end
  end
  return true
end

-- optim._args(sig, ...): the options of a constructor called in either
-- form: positionally, in PyTorch's order, optionally followed by a table of
-- the rest (StepLR(opt, 5, 0.5), StepLR(opt, 5, {gamma = 0.5})), or with one
-- table of them all (StepLR(opt, {step_size = 5, gamma = 0.5})). sig lists
-- the positional names in order, with sig.name (the class), sig.first (the
-- first argument's name, which is not read here), sig.defaults (every
-- option and its default; those not listed are keyword-only, table form;
-- false stands for PyTorch's None) and sig.required (names that must be
-- given). Returns a fresh table of the options (defaults filled in) and
-- bad(fmt, ...), which raises fmt's message followed by the accepted call
-- forms, at the caller's line. An unknown name, an option given twice, too
-- many arguments or a missing required one raise the same way.
function optim._args(sig, ...)
  local call = sig.usage
  if not call then
    call = usage(sig)
    sig.usage = call
  end
  local function bad(fmt, ...)
    optim._error('%s: %s; call as %s', sig.name, string.format(fmt, ...), call)
  end
  local n = select('#', ...)
  while n > 0 and select(n, ...) == nil do n = n - 1 end
  local out, given = {}, {}
  for i = 1, n do
    local v = select(i, ...)
    if i == n and is_options(v) then
      for k, x in pairs(v) do
        if not sig.known[k] then
          bad("unknown option '%s'", k)
        end
        if given[k] then bad("option '%s' given twice (positional argument %d and in the table)", k, given[k]) end
        out[k] = x
      end
    elseif i > #sig then
      bad('too many arguments (%d after the %s; at most %d, then a table of options)', n, sig.first, #sig)
    elseif v ~= nil then
      out[sig[i]] = v
      given[sig[i]] = i + 1
    end
  end
  for k in pairs(sig.required) do
    if out[k] == nil then bad('%s is required', k) end
  end
  for k, v in pairs(sig.defaults) do
    if out[k] == nil then out[k] = type(v) == 'table' and {table.unpack(v)} or v end
  end
  return out, bad
end

-- optim._signature(name, first, positional, defaults, required): a sig for
-- optim._args (positional: the names in PyTorch's order).
function optim._signature(name, first, positional, defaults, required)
  local sig = {name = name, first = first, defaults = defaults, required = {}}
  for i, key in ipairs(positional) do sig[i] = key end
  for _, key in ipairs(required or {}) do sig.required[key] = true end
  sig.known = {}
  for key in pairs(defaults) do sig.known[key] = true end
  for _, key in ipairs(positional) do sig.known[key] = true end
  return sig
end

-- Hyperparameter checks shared by the optimizers' check_group functions.
function optim._check_nonneg(name, key, v)
  if type(v) ~= 'number' or not (v >= 0) then
    fail('%s: invalid %s value: %s (must be a number >= 0)', name, key, tostring(v))
  end
end
function optim._check_unit(name, key, v, closed)
  local ok = type(v) == 'number' and v >= 0 and (v < 1 or (closed and v == 1))
  if not ok then
    fail('%s: invalid %s value: %s (must be in [0, 1%s)', name, key, tostring(v), closed and ']' or ')')
  end
end
function optim._check_betas(name, betas)
  if type(betas) ~= 'table' or #betas ~= 2 then
    fail('%s: betas must be a table of two numbers, got %s', name, tostring(betas))
  end
  for i = 1, 2 do
    local b = betas[i]
    if type(b) ~= 'number' or not (b >= 0 and b < 1) then
      fail('%s: invalid beta parameter at index %d: %s (must be in [0, 1))', name, i, tostring(b))
    end
  end
end

local Optimizer = torch.class('optim.Optimizer')

-- The state table: reading the state of a parameter that has none gives a
-- fresh table kept there (PyTorch's defaultdict(dict)).
local state_mt = {
  __index = function(t, k)
    if torch.is_tensor(k) then
      local s = {}
      rawset(t, k, s)
      return s
    end
  end,
}
torch.register_metatable('optim.State', state_mt)   -- so torch.save keeps whole optimizers
local function new_state() return setmetatable({}, state_mt) end

local function deep_copy(v)
  if torch.is_tensor(v) then return v:detach():clone() end
  if type(v) == 'table' and getmetatable(v) == nil then
    local c = {}
    for k, x in pairs(v) do c[k] = deep_copy(x) end
    return c
  end
  return v
end
optim._deep_copy = deep_copy

-- Assigning step on a subclass stores the function as __step; the step
-- every instance calls (Optimizer.step) runs it under torch.no_grad.
local function hook_step(cls)
  local mt = getmetatable(cls)
  mt.__newindex = function(c, k, v)
    if k == 'step' then k = '__step' end
    rawset(c, k, v)
  end
end
Optimizer.__subclass = hook_step

-- Optimizer:extend(name): a new optimizer class, as subclassing
-- torch.optim.Optimizer in PyTorch (torch.class('optim.Name',
-- 'optim.Optimizer') works as well):
--   local MySGD = optim.Optimizer:extend('MySGD')
--   function MySGD:__init(params, opts) optim.Optimizer.__init(self, params, {lr = opts.lr}) end
--   function MySGD:step(closure) ... self.param_groups ... self.state[p] ... end
function Optimizer:extend(name)
  if type(name) ~= 'string' then fail('optim.Optimizer:extend: expects a class name, got %s', type(name)) end
  local cls = {__typename = name}
  cls.__index = cls
  for k, v in pairs(self) do
    if type(k) == 'string' and k:sub(1, 2) == '__' and k ~= '__index' and k ~= '__typename' then cls[k] = v end
  end
  setmetatable(cls, {
    __index = self,
    __call = function(c, ...)
      local obj = setmetatable({}, c)
      c.__init(obj, ...)
      return obj
    end,
    __tostring = function() return name end,
  })
  hook_step(cls)
  return cls
end

local function is_group(x) return type(x) == 'table' and not torch.is_tensor(x) and x.params ~= nil end

-- optim.Optimizer(params, defaults): params is a Lua array of tensors, of
-- {name, tensor} pairs (named_parameters()), or of parameter groups
-- {params = {...}, lr = ..., ...}; defaults fill what a group leaves out.
function Optimizer:__init(params, defaults)
  local name = self.__typename
  self.defaults = defaults or {}
  self.state = new_state()
  self.param_groups = {}
  if torch.is_tensor(params) then
    fail('%s: params must be a Lua array of tensors or of parameter groups, got a single tensor (wrap it: {p})', name)
  end
  if type(params) ~= 'table' then
    fail('%s: params must be a Lua array of tensors or of parameter groups, got %s', name, type(params))
  end
  if #params == 0 then fail('%s: got an empty parameter list', name) end
  if is_group(params[1]) then
    for i, group in ipairs(params) do
      if not is_group(group) then
        fail('%s: element %d of params is not a parameter group (a table with a params field)', name, i)
      end
      self:add_param_group(group)
    end
  else
    self:add_param_group({params = params})
  end
end

-- opt:add_param_group(group): adds {params = {...}, option = value, ...};
-- options it leaves out come from the optimizer's defaults.
function Optimizer:add_param_group(group)
  local name = self.__typename
  if not is_group(group) then
    fail('%s: a parameter group must be a table with a params field, got %s', name, torch.type(group))
  end
  local new = {}
  for k, v in pairs(group) do new[k] = v end
  local list = group.params
  if torch.is_tensor(list) then list = {list} end
  if type(list) ~= 'table' then fail('%s: params of a group must be a Lua array of tensors, got %s', name, type(list)) end
  local tensors, names = {}, {}
  for i, p in ipairs(list) do
    if type(p) == 'table' and not torch.is_tensor(p) then   -- {name, tensor}
      names[#names + 1] = p[1]
      p = p[2]
    end
    if not torch.is_tensor(p) then
      fail('%s: can only optimize tensors, but parameter %d is a %s', name, i, torch.type(p))
    end
    if not p.is_leaf then
      fail("%s: can't optimize a non-leaf tensor (parameter %d was computed by %s); optimize the leaf it comes from",
           name, i, tostring(p.grad_fn))
    end
    if not p:is_floating_point() then
      fail('%s: parameter %d is %s; only floating-point tensors can be optimized', name, i, p.dtype)
    end
    tensors[i] = p
  end
  if #names > 0 then
    if #names ~= #tensors then fail('%s: all parameters of a group must come with names, or none', name) end
    new.param_names = names
  end
  new.params = tensors
  for k, v in pairs(self.defaults) do
    if new[k] == nil then new[k] = deep_copy(v) end
  end
  local seen = {}
  for i, p in ipairs(tensors) do
    if seen[p] then fail('%s: parameter %d appears twice in one parameter group', name, i) end
    seen[p] = true
  end
  for gi, g in ipairs(self.param_groups) do
    for _, p in ipairs(g.params) do
      if seen[p] then fail('%s: some parameters appear in more than one parameter group (also in group %d)', name, gi) end
    end
    if (g.param_names ~= nil) ~= (new.param_names ~= nil) then
      fail('%s: all parameter groups must be with names or without', name)
    end
  end
  if self.check_group then self:check_group(new) end
  self.param_groups[#self.param_groups + 1] = new
end

-- opt:step(closure): one optimization step; closure (optional, needed by
-- LBFGS) re-evaluates the model and returns the loss, which step returns.
function Optimizer:step(closure)
  local impl = self.__step
  if not impl then fail('%s: the optimizer class must define step(closure)', self.__typename) end
  local with_grad = closure
  if closure ~= nil then
    with_grad = function() return torch.enable_grad(closure) end
  end
  if torch._profiling() then      -- a region of the profile, named as PyTorch's
    local name = 'Optimizer.step#' .. tostring(self.__typename):gsub('^.*%.', '') .. '.step'
    return torch.profiler._region(name, torch.no_grad, impl, self, with_grad)
  end
  return torch.no_grad(impl, self, with_grad)
end

-- p's gradient as a view of model:getParameters()'s flat gradient, when nn made one
local function flat_grad_of(p)
  local nn = package.loaded.nn
  return nn and nn.flat_grad_of(p)
end

-- opt:zero_grad({set_to_none = true}): clears the gradients of every
-- parameter; set_to_none (the default, as in PyTorch) removes them, false
-- fills them with zeros in place. zero_grad(false) works too. A gradient that
-- model:getParameters() flattened is zeroed in place either way, as nn's
-- Module:zero_grad does, so the flat gradient stays the gradient.
function Optimizer:zero_grad(opts)
  local set_to_none = true
  if type(opts) == 'boolean' then set_to_none = opts
  elseif type(opts) == 'table' and opts.set_to_none ~= nil then set_to_none = opts.set_to_none end
  for _, group in ipairs(self.param_groups) do
    for _, p in ipairs(group.params) do
      local g, flat = p.grad, flat_grad_of(p)
      if flat then
        flat:zero_()
        p.grad = flat
      elseif g ~= nil then
        if set_to_none then
          p.grad = nil
        else
          if g.requires_grad then           -- a gradient with history (create_graph)
            g = g:detach()
            p.grad = g
          end
          g:zero_()
        end
      end
    end
  end
end

-- opt:state_dict(): {state = {[i] = {...}}, param_groups = {{lr = ..., params
-- = {i, ...}}, ...}} with parameters as 1-based indices in group order, as
-- PyTorch. Tensors are copies: the dict is a snapshot that later steps do
-- not change.
function Optimizer:state_dict()
  local index, count = {}, 0
  local groups = {}
  for gi, group in ipairs(self.param_groups) do
    local packed = {}
    for k, v in pairs(group) do
      if k ~= 'params' then packed[k] = deep_copy(v) end
    end
    packed.params = {}
    for i, p in ipairs(group.params) do
      if not index[p] then count = count + 1; index[p] = count end
      packed.params[i] = index[p]
    end
    groups[gi] = packed
  end
  local state = {}
  for p, s in pairs(self.state) do
    if index[p] and next(s) ~= nil then state[index[p]] = deep_copy(s) end
  end
  return {state = state, param_groups = groups}
end

-- Floating state tensors follow the parameter's dtype, as PyTorch casts
-- them on load.
local function cast_like(value, p)
  if torch.is_tensor(value) then
    if value:is_floating_point() and value.dtype ~= p.dtype then return value:to(p.dtype) end
    return value
  end
  if type(value) == 'table' and getmetatable(value) == nil then
    for k, v in pairs(value) do value[k] = cast_like(v, p) end
  end
  return value
end

-- opt:load_state_dict(sd): takes the state and options of sd (from
-- state_dict, possibly of another optimizer over other parameters of the
-- same shapes); state is copied, so sd stays untouched.
function Optimizer:load_state_dict(sd)
  local name = self.__typename
  if type(sd) ~= 'table' or type(sd.param_groups) ~= 'table' or type(sd.state) ~= 'table' then
    fail('%s: load_state_dict expects a table from state_dict() with state and param_groups', name)
  end
  local groups, saved = self.param_groups, sd.param_groups
  if #groups ~= #saved then
    fail('%s: loaded state dict has %d parameter groups, the optimizer %d', name, #saved, #groups)
  end
  local id_map = {}
  for gi, group in ipairs(groups) do
    local ids = saved[gi].params
    if type(ids) ~= 'table' or #ids ~= #group.params then
      fail("%s: loaded state dict has a parameter group (%d) that doesn't match the size of optimizer's group (%d vs %d parameters)",
           name, gi, type(ids) == 'table' and #ids or 0, #group.params)
    end
    for i, id in ipairs(ids) do id_map[id] = group.params[i] end
  end
  local state = new_state()
  for id, s in pairs(sd.state) do
    local p = id_map[id]
    if p == nil then fail('%s: loaded state dict has state for parameter %s, which no group holds', name, tostring(id)) end
    state[p] = cast_like(deep_copy(s), p)
  end
  local new_groups = {}
  for gi, group in ipairs(groups) do
    local g = deep_copy(saved[gi])
    g.params = group.params
    if group.param_names ~= nil and g.param_names == nil then g.param_names = group.param_names end
    new_groups[gi] = g
  end
  self.state = state
  self.param_groups = new_groups
end

-- tostring(opt): the class and each group's options, as PyTorch prints.
function Optimizer:__tostring()
  local lines = {self.__typename .. ' ('}
  for gi, group in ipairs(self.param_groups) do
    lines[#lines + 1] = 'Parameter Group ' .. gi
    local keys = {}
    for k in pairs(group) do
      if k ~= 'params' and k ~= 'param_names' then keys[#keys + 1] = k end
    end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local v = group[k]
      if type(v) == 'table' then
        local parts = {}
        for i, x in ipairs(v) do parts[i] = tostring(x) end
        v = '{' .. table.concat(parts, ', ') .. '}'
      end
      lines[#lines + 1] = '    ' .. k .. ': ' .. tostring(v)
    end
  end
  lines[#lines + 1] = ')'
  return table.concat(lines, '\n')
end

-- The label a check names an option by, where it is not the option's name.
local check_labels = {lr = 'learning rate', eps = 'epsilon'}

-- optim._define(name, spec, parent): an optimizer class whose step updates
-- each parameter that has a gradient on its own (all but LBFGS). The class
-- is a thin shell: options, checks and the loop over groups and parameters
-- live here, the update rule in spec.update.
--   spec.defaults: the options and their defaults;
--   spec.positional: the options a call may give positionally, in
--     PyTorch's order (optim.SGD(params, 0.1, 0.9)), the rest by the table;
--   spec.checks: option names, in order, that must be numbers >= 0, or
--     'betas' (a pair in [0, 1));
--   spec.check(name, group): further checks, optional;
--   spec.fixed: options set by the class, not the user (AdamW's decay);
--   spec.buffers: when given, a parameter's first step sets state.step = 0
--     and these state tensors to zeros like it, then calls spec.start(p,
--     state, group) if given (other state);
--   spec.update(p, grad, state, group): one parameter's step, state its
--     table in opt.state.
function optim._define(name, spec, parent)
  local cls = torch.class('optim.' .. name, parent or 'optim.Optimizer')
  local defaults, checks, extra, fixed = spec.defaults, spec.checks, spec.check, spec.fixed
  local sig = optim._signature('optim.' .. name, 'params', spec.positional or {'lr'}, defaults)
  function cls:__init(params, ...)
    local o = optim._args(sig, ...)
    if fixed then
      for k, v in pairs(fixed) do o[k] = v end
    end
    Optimizer.__init(self, params, o)
  end
  function cls:check_group(g)
    local typename = self.__typename
    for _, key in ipairs(checks) do
      if key == 'betas' then
        optim._check_betas(typename, g.betas)
      else
        optim._check_nonneg(typename, check_labels[key] or key, g[key])
      end
    end
    if extra then extra(typename, g) end
  end
  local update, buffers, start = spec.update, spec.buffers, spec.start
  cls.rule = update     -- opt.rule(p, grad, state, group): the update rule (its file documents the class)
  local function first_step(p, s, group)
    s.step = 0
    for _, key in ipairs(buffers) do s[key] = torch.zeros_like(p) end
    if start then start(p, s, group) end
  end
  cls.step = function(self, closure)
    local loss
    if closure then loss = closure() end
    local state = self.state
    for _, group in ipairs(self.param_groups) do
      for _, p in ipairs(group.params) do
        local grad = p.grad
        if grad ~= nil then
          local s = state[p]
          if buffers and s.step == nil then first_step(p, s, group) end
          update(p, grad, s, group)
        end
      end
    end
    return loss
  end
  return cls
end

return Optimizer
