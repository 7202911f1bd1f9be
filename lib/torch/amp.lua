-- torch.autocast: regions of mixed precision.
--
-- Inside a region the dispatcher applies each op's autocast category from
-- the registry: matrix products and convolutions run in the region's lower
-- dtype (bfloat16 on the CPU, float16 on a GPU by default), the ops that
-- lose range or precision there (exp, log, pow, softmax, log_softmax, the
-- norms, cumprod, prod, ...) in float32, and ops on mixed float dtypes in
-- the widest of them; everything else runs in its inputs' dtypes. Only float
-- inputs are cast, float64 ones never to a lower dtype, and only out-of-place
-- ops (as in PyTorch). The casts are recorded, so gradients come back in the
-- parameters' own dtypes; a parameter's cast is made once per region, and
-- backward runs with autocast off, in the dtypes forward chose.
local torch = require 'torch.core'

local DEFAULT_DTYPE = {cpu = 'bfloat16', cuda = 'float16'}
local LOWER = {bfloat16 = true, float16 = true}

local Autocast = {__name = 'torch.autocast'}
Autocast.__index = Autocast

local function check_device(d, level)
  if type(d) ~= 'string' then
    error("autocast: device_type must be 'cpu' or 'cuda', got " .. type(d), level + 1)
  end
  local base = d:match('^(%a+)')
  if base ~= 'cpu' and base ~= 'cuda' then
    error("autocast: device_type must be 'cpu' or 'cuda', got '" .. d .. "'", level + 1)
  end
  return base
end

local function new(device_type, opts, level)
  opts = opts or {}
  if type(opts) ~= 'table' then error('autocast: options must be a table, got ' .. type(opts), level + 1) end
  local device = check_device(device_type, level + 1)
  local dtype = opts.dtype or DEFAULT_DTYPE[device]
  if type(dtype) == 'string' then dtype = dtype:gsub('^torch%.', '') end
  if not LOWER[dtype] then
    error("autocast: dtype must be 'bfloat16' or 'float16', got " .. tostring(dtype), level + 1)
  end
  local enabled = opts.enabled
  if enabled == nil then enabled = true end
  return setmetatable({device_type = device, dtype = dtype, enabled = enabled and true or false}, Autocast)
end

-- Enters the region: autocast on (or off, with enabled=false) for its
-- device type until exit.
function Autocast:enter()
  if getmetatable(self) ~= Autocast then error("autocast:enter: called with '.'; use ac:enter()", 2) end
  if self.saved then error('autocast:enter: this region is already entered', 2) end
  local on, dtype = torch._autocast_state(self.device_type)
  self.saved = {on, dtype}
  torch._autocast_set(self.device_type, self.enabled, self.dtype)
  torch._autocast_region(true)
  return self
end

-- Leaves it: the state before enter comes back; leaving the outermost
-- region drops the parameters' casts it kept.
function Autocast:exit()
  if getmetatable(self) ~= Autocast then error("autocast:exit: called with '.'; use ac:exit()", 2) end
  if not self.saved then error('autocast:exit: the region was not entered', 2) end
  torch._autocast_set(self.device_type, self.saved[1], self.saved[2])
  self.saved = nil
  torch._autocast_region(false)
end

-- ac(fn, ...): fn(...) inside the region, its results returned; the region
-- is left even when fn raises.
function Autocast:__call(fn, ...)
  if type(fn) ~= 'function' then error('autocast: expected a function to run, got ' .. type(fn), 2) end
  self:enter()
  local results = table.pack(pcall(fn, ...))
  self:exit()
  if not results[1] then error(results[2], 0) end
  return table.unpack(results, 2, results.n)
end

function Autocast:__tostring()
  return string.format('torch.autocast(%s, dtype=%s, enabled=%s)', self.device_type, self.dtype, tostring(self.enabled))
end

-- torch.autocast(device_type, {dtype=, enabled=}, fn, ...) runs fn(...) in a
-- region of mixed precision and returns its results: products and
-- convolutions in dtype (default bfloat16 on 'cpu', float16 on 'cuda'),
-- exp, log, softmax and the norms in float32. Without fn (or as
-- torch.autocast{device_type=, dtype=, enabled=}) it returns the region,
-- for :enter() and :exit() in scripts.
function torch.autocast(device_type, opts, fn, ...)
  if type(device_type) == 'table' and opts == nil then
    return new(device_type.device_type, device_type, 2)
  end
  if type(opts) == 'function' then return new(device_type, nil, 2)(opts, fn, ...) end
  local ac = new(device_type, opts, 2)
  if fn == nil then return ac end
  return ac(fn, ...)
end

-- torch.is_autocast_enabled(device_type): whether autocast is on for
-- device_type ('cpu' or 'cuda'; 'cuda' when none, as PyTorch).
function torch.is_autocast_enabled(device_type)
  local on = torch._autocast_state(check_device(device_type or 'cuda', 2))
  return on
end

-- torch.get_autocast_dtype(device_type): the lower dtype of device_type's
-- regions ('bfloat16' on the CPU, 'float16' on a GPU unless a region says).
function torch.get_autocast_dtype(device_type)
  local _, dtype = torch._autocast_state(check_device(device_type, 2))
  return dtype
end

torch.amp = torch.amp or {}
torch.amp.autocast = torch.autocast

-- ---- torch.amp.GradScaler ----
-- Scales the loss so that small gradients survive a 16-bit backward, unscales
-- them before the optimizer sees them, and skips the steps whose gradients
-- hold an inf or a NaN, lowering the scale; after growth_interval steps in a
-- row without one it raises the scale. PyTorch's loop, in Lua:
--   local scaler = torch.amp.GradScaler()
--   opt:zero_grad()
--   local loss = torch.autocast('cpu', function() return loss_fn(model(x), y) end)
--   scaler:scale(loss):backward()
--   scaler:unscale_(opt)                   -- (only to clip or read the true gradients)
--   nn.utils.clip_grad_norm_(model:parameters(), 1.0)
--   scaler:step(opt)                       -- skipped when a gradient is not finite
--   scaler:update()
local GradScaler = {__name = 'torch.amp.GradScaler'}
GradScaler.__index = GradScaler

local SCALER_OPTIONS = {init_scale = 'number', growth_factor = 'number', backoff_factor = 'number',
                        growth_interval = 'number', enabled = 'boolean'}

local function scaler_fail(level, fmt, ...)
  error('torch.amp.GradScaler: ' .. string.format(fmt, ...), level + 1)
end

-- torch.amp.GradScaler([device,] {init_scale=2^16, growth_factor=2, backoff_factor=0.5,
-- growth_interval=2000, enabled=true}): device 'cpu' (default) or 'cuda' names where the
-- gradients live; disabled, every method passes its argument through.
function torch.amp.GradScaler(device, opts)
  if type(device) == 'table' and opts == nil then device, opts = nil, device end
  device = device or 'cpu'
  check_device(device, 2)
  opts = torch._check_options('torch.amp.GradScaler', opts, SCALER_OPTIONS, 2)
  local self = setmetatable({
    device = device, enabled = opts.enabled ~= false, scale_value = opts.init_scale or 65536.0,
    growth_factor = opts.growth_factor or 2.0, backoff_factor = opts.backoff_factor or 0.5,
    growth_interval = opts.growth_interval or 2000, growth_tracker = 0,
    per_optimizer = setmetatable({}, {__mode = 'k'}),   -- optimizer -> {unscaled=, stepped=, found_inf=}
  }, GradScaler)
  if not (self.scale_value > 0) then scaler_fail(2, 'init_scale must be > 0, got %s', tostring(self.scale_value)) end
  if not (self.growth_factor > 1) then
    scaler_fail(2, 'growth_factor must be > 1, got %s', tostring(self.growth_factor))
  end
  if not (self.backoff_factor > 0 and self.backoff_factor < 1) then
    scaler_fail(2, 'backoff_factor must be between 0 and 1 (excluded), got %s', tostring(self.backoff_factor))
  end
  if math.type(self.growth_interval) ~= 'integer' and self.growth_interval ~= math.floor(self.growth_interval)
     or self.growth_interval < 1 then
    scaler_fail(2, 'growth_interval must be an integer >= 1, got %s', tostring(self.growth_interval))
  end
  self.growth_interval = math.tointeger(self.growth_interval)
  return self
end

function GradScaler:__tostring()
  return ('torch.amp.GradScaler(scale=%g, growth_factor=%g, backoff_factor=%g, growth_interval=%d%s)')
    :format(self.scale_value, self.growth_factor, self.backoff_factor, self.growth_interval,
            self.enabled and '' or ', disabled')
end

local function state_of(self, optimizer)
  local st = self.per_optimizer[optimizer]
  if not st then
    st = {unscaled = false, stepped = false, found_inf = false}
    self.per_optimizer[optimizer] = st
  end
  return st
end

-- scaler:scale(outputs): outputs times the scale (a tensor, or a table of them, nested);
-- outputs themselves when disabled
function GradScaler:scale(outputs)
  if not self.enabled then return outputs end
  local function scaled(v)
    if torch.is_tensor(v) then return v * self.scale_value end
    if type(v) == 'table' then
      local out = {}
      for k, x in pairs(v) do out[k] = scaled(x) end
      return out
    end
    scaler_fail(3, 'scale: expected a tensor or a table of tensors, got %s', type(v))
  end
  return scaled(outputs)
end

-- scaler:unscale_(optimizer): divides the gradients of optimizer's parameters by the
-- scale in place (one fused pass each on the CPU) and notes whether one holds an inf or a
-- NaN. Once per optimizer between updates; step() calls it when you did not.
function GradScaler:unscale_(optimizer)
  if not self.enabled then return end
  local st = state_of(self, optimizer)
  if st.unscaled then scaler_fail(2, 'unscale_() has already been called on this optimizer since the last update()') end
  if st.stepped then scaler_fail(2, 'unscale_() is being called after step()') end
  if type(optimizer) ~= 'table' or type(optimizer.param_groups) ~= 'table' then
    scaler_fail(2, 'unscale_: expected an optimizer (with param_groups), got %s', torch.typename(optimizer) or type(optimizer))
  end
  local grads = {}
  for _, group in ipairs(optimizer.param_groups) do
    for _, p in ipairs(group.params) do
      if p.grad ~= nil then grads[#grads + 1] = p.grad end
    end
  end
  st.found_inf = torch._amp_unscale_(grads, 1.0 / self.scale_value)   -- one pass per gradient, in C
  st.unscaled = true
end

-- scaler:step(optimizer, ...): optimizer:step(...) unless a gradient held an inf or a NaN
-- (then nothing, and update() lowers the scale); unscales first when unscale_ was not
-- called. Returns what optimizer:step returned, or nil when skipped.
function GradScaler:step(optimizer, ...)
  if not self.enabled then return optimizer:step(...) end
  local st = state_of(self, optimizer)
  if st.stepped then scaler_fail(2, 'step() has already been called since the last update()') end
  if not st.unscaled then self:unscale_(optimizer) end
  st.stepped = true
  if st.found_inf then return nil end
  return optimizer:step(...)
end

-- scaler:update([new_scale]): after the step(s) of an iteration: the scale times
-- backoff_factor when any optimizer's gradients held an inf or a NaN, times growth_factor
-- after growth_interval iterations in a row without; new_scale sets it instead.
function GradScaler:update(new_scale)
  if not self.enabled then return end
  if new_scale ~= nil then
    if torch.is_tensor(new_scale) then new_scale = new_scale:item() end
    if type(new_scale) ~= 'number' or not (new_scale > 0) then
      scaler_fail(2, 'update: new_scale must be a number > 0, got %s', tostring(new_scale))
    end
    self.scale_value = new_scale
  else
    local any, found = false, false
    for _, st in pairs(self.per_optimizer) do
      if st.unscaled then any = true end
      if st.found_inf then found = true end
    end
    if not any then scaler_fail(2, 'update: no inf checks were recorded prior to update() (call step() first)') end
    if found then
      self.scale_value = self.scale_value * self.backoff_factor
      self.growth_tracker = 0
    else
      self.growth_tracker = self.growth_tracker + 1
      if self.growth_tracker == self.growth_interval then
        self.scale_value = self.scale_value * self.growth_factor
        self.growth_tracker = 0
      end
    end
  end
  self.per_optimizer = setmetatable({}, {__mode = 'k'})
end

-- scaler:get_scale(): the scale (1 when disabled)
function GradScaler:get_scale() return self.enabled and self.scale_value or 1.0 end
function GradScaler:get_growth_factor() return self.growth_factor end
function GradScaler:set_growth_factor(v) self.growth_factor = v end
function GradScaler:get_backoff_factor() return self.backoff_factor end
function GradScaler:set_backoff_factor(v) self.backoff_factor = v end
function GradScaler:get_growth_interval() return self.growth_interval end
function GradScaler:set_growth_interval(v) self.growth_interval = v end
function GradScaler:is_enabled() return self.enabled end

-- scaler:state_dict(): PyTorch's keys (scale, growth_factor, backoff_factor,
-- growth_interval, _growth_tracker), for checkpoints; empty when disabled
function GradScaler:state_dict()
  if not self.enabled then return {} end
  return {scale = self.scale_value, growth_factor = self.growth_factor, backoff_factor = self.backoff_factor,
          growth_interval = self.growth_interval, _growth_tracker = self.growth_tracker}
end

-- scaler:load_state_dict(sd): from state_dict()
function GradScaler:load_state_dict(sd)
  if not self.enabled then return end
  if type(sd) ~= 'table' or sd.scale == nil then
    scaler_fail(2, 'load_state_dict: expected a GradScaler state dict (with scale), got %s', type(sd))
  end
  local scale = sd.scale
  if torch.is_tensor(scale) then scale = scale:item() end
  self.scale_value = scale
  self.growth_factor = sd.growth_factor or self.growth_factor
  self.backoff_factor = sd.backoff_factor or self.backoff_factor
  self.growth_interval = sd.growth_interval or self.growth_interval
  self.growth_tracker = sd._growth_tracker or 0
end

return torch
