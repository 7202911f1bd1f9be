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

return torch
