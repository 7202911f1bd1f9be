local torch = require 'torch'

-- nn.ModuleDict({name = m, ...}): modules registered by name (d.name, d['name']).
local ModuleDict, Module = torch.class('nn.ModuleDict', 'nn.Module')
function ModuleDict:__init(tbl)
  Module.__init(self)
  local keys = {}
  for k in pairs(tbl or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do self:add_module(k, tbl[k]) end
end
-- d:keys(), d:values(), d:items() ({{name, module}, ...}), in insertion order.
function ModuleDict:keys()
  local out = {}
  for i, p in ipairs(self:named_children()) do out[i] = p[1] end
  return out
end
function ModuleDict:values() return self:children() end
function ModuleDict:items() return self:named_children() end
function ModuleDict:updateOutput()
  error('nn.ModuleDict has no forward: index it and call its modules', 2)
end
ModuleDict.__len = function(self) return #self:named_children() end

return ModuleDict
