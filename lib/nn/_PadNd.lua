-- The builder of the 2-D padding modules (ZeroPad2d, ReflectionPad2d, ReplicationPad2d,
-- CircularPad2d):
-- pads {left, right, top, bottom} (or one number for all four) through F.pad.
local torch = require 'torch'
local nn = require 'nn'
local F = require 'nn.functional'

-- pad_class(name, mode, torch7_name): defines nn.<name>(p or {left, right, top, bottom}), whose
-- output is F.pad(x, pads, {mode=mode}), and Torch7's nn.<torch7_name>(l, r, t, b) when it has one.
local function pad_class(name, mode, torch7_name)
  local cls, Module = torch.class('nn.' .. name, 'nn.Module')
  function cls:__init(p)
    Module.__init(self)
    self.pads = type(p) == 'number' and {p, p, p, p} or p
    if type(self.pads) ~= 'table' or #self.pads ~= 4 then
      error(string.format('nn.%s: padding must be a number or {left, right, top, bottom}', name), 3)
    end
  end
  function cls:updateOutput(x) return F.pad(x, self.pads, {mode = mode}) end
  function cls:extra_repr() return '{' .. table.concat(self.pads, ', ') .. '}' end
  -- Torch7's name, nn.SpatialZeroPadding(l, r, t, b) and the like: nn.<name>({l, r, t, b}), with
  -- r, t and b l when left out
  if torch7_name then nn[torch7_name] = function(l, r, t, b) return (nn[name]({l, r or l, t or l, b or l})) end end
  return cls
end

return pad_class
