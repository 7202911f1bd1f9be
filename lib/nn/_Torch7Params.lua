-- What the volumetric and temporal modules with parameters share for Torch7's code
-- (lib/nn/Conv3d.lua, ConvTranspose3d.lua, TemporalConvolution.lua, ...): Torch7's
-- noBias() and reset(stdv), errors at the user's line, argument checks. (Torch7's
-- assignments, m.bias = t and m.gradBias = t, are nn.Module's.)
local torch = require 'torch'
local nn = require 'nn'

local t7 = {}

-- t7.fail(fmt, ...): raises the message at the first caller outside moontorch's libraries
-- (a module's error points at the user's forward, not at the module machinery)
function t7.fail(fmt, ...)
  error(string.format(fmt, ...), torch._caller_level())
end

-- a value for an error message: a table of numbers as {a, b, ...}
function t7.show(v)
  if type(v) == 'table' then
    local parts = {}
    for i = 1, math.min(#v, 8) do parts[i] = tostring(v[i]) end
    return '{' .. table.concat(parts, ', ') .. '}'
  end
  return tostring(v)
end

-- m:noBias(): Torch7's: drops the bias (the module computes without one); returns m.
function t7.noBias(self)
  self.bias = nil
  return self
end

-- t7.reset(fan_in_of): Torch7's m:reset(stdv): weight and bias uniform in +-stdv * sqrt(3),
-- or without stdv in +-1 / sqrt(fan_in) (fan_in_of(m) the Torch7 layer's fan-in); returns m.
function t7.reset(fan_in_of)
  return function(self, stdv)
    local bound
    if stdv ~= nil then
      if type(stdv) ~= 'number' then
        error(torch.typename(self) .. ':reset: stdv must be a number, got ' .. torch.type(stdv), 2)
      end
      bound = stdv * math.sqrt(3)
    else
      bound = 1 / math.sqrt(fan_in_of(self))
    end
    torch.no_grad(function()
      self.weight:uniform_(-bound, bound)
      if self.bias ~= nil then self.bias:uniform_(-bound, bound) end
    end)
    return self
  end
end

-- t7.integers(fname, ...): checks each argument is an integer (nil allowed where the name
-- list marks it optional by a trailing '?'); raises naming fname and the argument.
function t7.integers(fname, names, ...)
  local args = table.pack(...)
  for i, name in ipairs(names) do
    local v, optional = args[i], name:sub(-1) == '?'
    if not (v == nil and optional) and math.type(v) ~= 'integer' then
      error(string.format('%s: %s must be an integer, got %s', fname, optional and name:sub(1, -2) or name,
                          tostring(v)), 3)
    end
  end
end

-- the windows of x (..., nFrames, frameSize) as rows (..., nOut, kW * frameSize), frame-major;
-- fname names the caller in errors
function t7.temporal_windows(x, frameSize, kW, dW, fname)
  if not torch.is_tensor(x) or (x:dim() ~= 2 and x:dim() ~= 3) or x:size(-1) ~= frameSize then
    t7.fail('%s: expected a 2-D (nFrames x %d) or 3-D (batch x nFrames x %d) input, got %s', fname, frameSize,
            frameSize, torch.is_tensor(x) and 'size ' .. tostring(x:size()) or torch.type(x))
  end
  local tdim = x:dim() - 1
  if x:size(tdim) < kW then
    t7.fail('%s: input of size %s has %d frames, fewer than the kernel width %d', fname, tostring(x:size()),
            x:size(tdim), kW)
  end
  return x:unfold(tdim, kW, dW)          -- (..., nOut, frameSize, kW)
end

return t7
