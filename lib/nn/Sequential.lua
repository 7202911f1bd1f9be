local list_class = require 'nn._Container'

-- nn.Sequential(m1, m2, ...): applies its children in order.
local Sequential = list_class('Sequential')
local list_init = Sequential.__init
function Sequential:__init(...)
  list_init(self)
  for i = 1, select('#', ...) do self:add((select(i, ...))) end
end
Sequential._gradInput_from_first = true     -- (Torch7's) its gradInput is its first child's
local run_child = rawget(Sequential, '_run_child')
function Sequential:updateOutput(x, ...)
  local mods = rawget(self, '_items')
  if #mods == 0 then return x end
  x = run_child(self, 1, x, ...)
  for i = 2, #mods do x = run_child(self, i, x) end
  return x
end

return Sequential
