local list_class = require 'nn._Container'

-- nn.ModuleList({m1, m2, ...}): a list of registered modules (no forward of its own).
local ModuleList = list_class('ModuleList')
local list_init = ModuleList.__init
function ModuleList:__init(list)
  list_init(self)
  for _, m in ipairs(list or {}) do self:add(m) end
end
function ModuleList:updateOutput()
  error('nn.ModuleList has no forward: index it and call its modules', 2)
end

return ModuleList
