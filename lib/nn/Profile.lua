local torch = require 'torch'
local Decorator = require 'nn._Decorator7'

-- nn.Profile(module, print_interval=100, name=torch.type(module)): module, timed: the
-- wall-clock seconds of its forward and backward passes are summed, and every
-- print_interval passes of each kind a line 'name took S seconds for N forward passes'
-- (or backward) is printed and the sums start again.
-- each module's stopwatch (beside it, as a timer cannot be saved)
local timers = setmetatable({}, {__mode = 'k'})
local function timer_of(self)
  local t = timers[self]
  if t == nil then
    t = torch.Timer()
    timers[self] = t
  end
  return t
end

local Profile = Decorator.class('Profile', {
  around = function(self, what, fn)
    local timer = timer_of(self)
    timer:reset()
    local result = fn()
    local seconds = timer:time().real
    local key = what == 'forward' and 'Fwd' or 'Bwd'
    self['summed' .. key .. 'Time'] = self['summed' .. key .. 'Time'] + seconds
    self['num' .. key .. 's'] = self['num' .. key .. 's'] + 1
    if self['num' .. key .. 's'] % self.print_interval == 0 then
      print(string.format('%s took %.3f seconds for %d %s passes', self.name, self['summed' .. key .. 'Time'],
                          self.print_interval, what))
      self['num' .. key .. 's'] = 0
      self['summed' .. key .. 'Time'] = 0
    end
    return result
  end,
})

function Profile:__init(module, print_interval, name)
  self:_decorator_init(module)
  print_interval = print_interval or 100
  if math.type(print_interval) ~= 'integer' or print_interval < 1 then
    error('nn.Profile: expected a positive integer print_interval, got ' .. tostring(print_interval), 3)
  end
  self.print_interval = print_interval
  self.name = name or torch.type(module)
  self.numFwds, self.numBwds = 0, 0
  self.summedFwdTime, self.summedBwdTime = 0, 0
end

return Profile
