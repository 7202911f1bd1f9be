-- The grad-mode switches in their two forms, as PyTorch's context managers:
--   torch.no_grad(fn, ...)                     runs fn(...) with recording off
--   local g <close> = torch.no_grad()          recording off until g goes out of scope
--   local g <close> = torch.set_grad_enabled(false)
-- The block form uses Lua 5.4's to-be-closed variables: the guard returned
-- restores the previous mode when its variable goes out of scope, also when
-- an error leaves the block. torch.enable_grad, torch.inference_mode and
-- torch.autograd.detect_anomaly take the same two forms.
local core = require 'torch.core'
local torch = core

local c_no_grad, c_enable_grad = core.no_grad, core.enable_grad
local c_set_grad, c_is_grad = core.set_grad_enabled, core.is_grad_enabled
local c_detect, c_set_anomaly, c_is_anomaly = core._detect_anomaly, core._set_detect_anomaly, core._is_anomaly_enabled

-- A guard: g:close() (or its <close> variable's end) calls restore(prev)
-- once. tostring names what it guards.
local Guard = {}
Guard.__index = Guard
Guard.__name = 'torch.GradModeGuard'
function Guard.__close(g)
  if not g.closed then
    g.closed = true
    g.restore(g.prev)
  end
end
Guard.close = Guard.__close
function Guard.__tostring(g) return g.what .. ' guard' .. (g.closed and ' (closed)' or '') end

local function guard(what, prev, restore)
  return setmetatable({what = what, prev = prev, restore = restore}, Guard)
end

local function is_callable(f)
  if type(f) == 'function' then return true end
  local mt = getmetatable(f)
  return mt ~= nil and type(mt) == 'table' and mt.__call ~= nil
end

-- the error for a call of neither form, at the caller's line
local function misuse(name, got, extra)
  error(string.format('%s: expected a function to run (%s(fn, ...)) or no argument for a block guard ' ..
                      '(local g <close> = %s()%s), got %s', name, name, name, extra or '', got), 3)
end

-- fn, or a function calling the callable table fn (a module)
local function as_function(fn)
  if type(fn) == 'function' then return fn end
  return function(...) return fn(...) end
end

-- torch.no_grad(fn, ...) / local g <close> = torch.no_grad(): see the doc
-- table (lib/torch/doc/autograd.lua).
function torch.no_grad(fn, ...)
  if type(fn) == 'function' then return c_no_grad(fn, ...) end
  if fn == nil and select('#', ...) == 0 then
    local prev = c_is_grad()
    c_set_grad(false)
    return guard('torch.no_grad', prev, c_set_grad)
  end
  if is_callable(fn) then return c_no_grad(as_function(fn), ...) end
  misuse('torch.no_grad', torch.type(fn))
end

-- torch.enable_grad(fn, ...) / local g <close> = torch.enable_grad()
function torch.enable_grad(fn, ...)
  if type(fn) == 'function' then return c_enable_grad(fn, ...) end
  if fn == nil and select('#', ...) == 0 then
    local prev = c_is_grad()
    c_set_grad(true)
    return guard('torch.enable_grad', prev, c_set_grad)
  end
  if is_callable(fn) then return c_enable_grad(as_function(fn), ...) end
  misuse('torch.enable_grad', torch.type(fn))
end

-- torch.set_grad_enabled(flag): sets the mode now and returns a guard
-- that puts the previous mode back when closed.
function torch.set_grad_enabled(flag, ...)
  if type(flag) ~= 'boolean' or select('#', ...) > 0 then
    error(string.format('torch.set_grad_enabled: expected true or false (torch.set_grad_enabled(false), or as a block: ' ..
                        'local g <close> = torch.set_grad_enabled(false)), got %s',
                        select('#', ...) > 0 and 'more than one argument' or torch.type(flag)), 2)
  end
  local prev = c_is_grad()
  c_set_grad(flag)
  return guard('torch.set_grad_enabled(' .. tostring(flag) .. ')', prev, c_set_grad)
end

-- inference mode: grad mode off and torch.is_inference_mode_enabled() true
local inference = false
local function set_inference(state)
  inference = state[1]
  c_set_grad(state[2])
end
local function run_inference(enabled, fn, ...)
  local was = inference
  inference = enabled
  local res
  if enabled then res = table.pack(pcall(c_no_grad, fn, ...)) else res = table.pack(pcall(fn, ...)) end
  inference = was
  if not res[1] then error(res[2], 0) end
  return table.unpack(res, 2, res.n)
end

-- torch.inference_mode(fn, ...), torch.inference_mode(false, fn, ...),
-- local g <close> = torch.inference_mode() (or inference_mode(false))
function torch.inference_mode(fn, ...)
  local enabled = true
  if type(fn) == 'boolean' then
    enabled = fn
    fn = ...
    if fn == nil and select('#', ...) <= 1 then
      local prev = {inference, c_is_grad()}
      inference = enabled
      if enabled then c_set_grad(false) end
      return guard('torch.inference_mode', prev, set_inference)
    end
    if is_callable(fn) then return run_inference(enabled, as_function(fn), select(2, ...)) end
    misuse('torch.inference_mode', torch.type(fn), ' or torch.inference_mode(false, fn, ...)')
  end
  if fn == nil and select('#', ...) == 0 then
    local prev = {inference, c_is_grad()}
    inference = true
    c_set_grad(false)
    return guard('torch.inference_mode', prev, set_inference)
  end
  if is_callable(fn) then return run_inference(enabled, as_function(fn), ...) end
  misuse('torch.inference_mode', torch.type(fn), ' or torch.inference_mode(false, fn, ...)')
end

-- torch.is_inference_mode_enabled(): true inside torch.inference_mode
function torch.is_inference_mode_enabled() return inference end

torch.autograd = torch.autograd or {}

-- torch.autograd.detect_anomaly(fn, ...) / local g <close> =
-- torch.autograd.detect_anomaly()
function torch.autograd.detect_anomaly(fn, ...)
  if type(fn) == 'function' then return c_detect(fn, ...) end
  if fn == nil and select('#', ...) == 0 then
    local prev = c_is_anomaly()
    c_set_anomaly(true)
    return guard('torch.autograd.detect_anomaly', prev, c_set_anomaly)
  end
  if is_callable(fn) then return c_detect(as_function(fn), ...) end
  misuse('torch.autograd.detect_anomaly', torch.type(fn))
end

torch.autograd.no_grad = torch.no_grad
torch.autograd.enable_grad = torch.enable_grad
torch.autograd.set_grad_enabled = torch.set_grad_enabled
torch.autograd.inference_mode = torch.inference_mode
torch.autograd.set_detect_anomaly = c_set_anomaly
torch.autograd.is_anomaly_enabled = c_is_anomaly
